import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { writeFileUnique } from '../../core/outputFiles';
import { GatewayError, isGatewayError } from '../../core/errors';
import { sniffImage } from '../../core/imageBytes';
import {
  generateImages,
  generateImageViaResponses,
  validateImageSize,
  type GeneratedImage,
} from '../../core/media/images';
import { detectImageFormat, imageExtension, mediaBaseName } from '../../core/media/mediaFiles';
import { requireListedModel, requireOuterModel } from '../../core/media/modelChoice';
import type { ModelInfo } from '../../core/models/types';
import { formatDuration, formatNumber } from '../../shared/format';
import type { ImageJobView, ImageRoute } from '../../shared/mediaProtocol';
import type { Services } from '../services';
import type { Gallery } from './gallery';
import type { LastChoicesStore } from './lastChoices';
import { mediaSettings } from './mediaSettings';
import { displayPath, type OutputLocation } from './outputLocation';
import { words } from '../../shared/words';

/**
 * One image generation at a time, over either route (the Images API or a language model calling the
 * image tool through the Responses protocol): choices, progress with cancel, partial previews,
 * saving under new names, and the job's state for the panel.
 */

export interface GenerateImageArgs {
  prompt: string;
  model?: string;
  route?: ImageRoute;
  /** The language model of a Responses call (route `responses`). */
  outerModel?: string;
  n?: number;
  size?: string;
  stream?: boolean;
}

/** What one generation was asked for, once the last choices and the settings have filled the gaps. */
interface ImagePlan {
  route: ImageRoute;
  imageModel: ModelInfo;
  outer: ModelInfo | undefined;
  size: string;
  n: number;
  stream: boolean;
  partialImages: number;
  /** The folder the images are saved in. */
  dir: string;
}

export interface GenerateImageResult {
  /** The saved files, as URI strings. */
  files: string[];
  /** The same files as file-system paths. */
  paths: string[];
  model: string;
  route: ImageRoute;
  outerModel?: string;
  size: string;
  revisedPrompts: string[];
  /** Text the outer model wrote next to the image (Responses route). */
  text?: string;
}

/** What image generation needs from the Media Studio. */
export interface ImageRunnerHost {
  readonly services: Services;
  readonly gallery: Gallery;
  readonly output: OutputLocation;
  readonly choices: LastChoicesStore;
  models(): Promise<ModelInfo[]>;
  /** The output folder may have changed: the panel may read thumbnails from it. */
  updateRoots(): void;
  refresh(): void;
}

export class ImageRunner {
  job?: { view: ImageJobView; abort: AbortController };
  /** Set from the moment a generation is asked for, so a double click cannot start two. */
  private starting = false;

  constructor(private readonly host: ImageRunnerHost) {}

  async generate(args: GenerateImageArgs): Promise<GenerateImageResult> {
    if (this.job?.view.state === 'running' || this.starting)
      throw new GatewayError('badRequest', words('An image is still being generated. Wait for it or cancel it first.'));
    this.starting = true;
    try {
      return await this.run(args);
    } finally {
      this.starting = false;
    }
  }

  /** The route, models, size and count this generation uses (the user's last choices fill what `args` leave out), remembered for the next one. */
  private async plan(args: GenerateImageArgs): Promise<ImagePlan> {
    const settings = mediaSettings((line) => this.host.services.log.warn(line));
    const last = this.host.choices.get();
    const models = await this.host.models();
    const route = args.route ?? last.route ?? settings.imageRoute;
    const imageModel = requireListedModel(
      args.model ?? last.imageModel ?? firstOf(models, 'image') ?? '',
      models,
      'image',
    );
    const outer =
      route === 'responses'
        ? requireOuterModel(args.outerModel ?? last.outerModel ?? outerModels(models)[0]?.id ?? '', models)
        : undefined;
    const size = validateImageSize(args.size ?? last.imageSize ?? settings.imageSize);
    const n = route === 'images' ? (args.n ?? last.imageCount ?? settings.imageCount) : 1;
    const stream = args.stream ?? last.stream ?? settings.stream;
    if (!args.prompt.trim())
      throw new GatewayError('badRequest', words('Describe the image to generate: the prompt is empty.'));
    const dir = await this.host.output.resolve('images');
    this.host.updateRoots();
    await this.host.choices.remember({
      route,
      imageModel: imageModel.id,
      ...(outer ? { outerModel: outer.id } : {}),
      imageSize: size,
      ...(route === 'images' ? { imageCount: n } : { stream }),
    });
    return { route, imageModel, outer, size, n, stream, partialImages: settings.partialImages, dir };
  }

  private async run(args: GenerateImageArgs): Promise<GenerateImageResult> {
    const plan = await this.plan(args);
    const { route, imageModel, outer, size, n, dir } = plan;
    const abort = new AbortController();
    const view: ImageJobView = {
      id: randomUUID(),
      route,
      model: imageModel.id,
      ...(outer ? { outerModel: outer.id } : {}),
      prompt: args.prompt,
      startedAt: Date.now(),
      state: 'running',
      files: [],
    };
    this.job = { view, abort };
    this.host.refresh();
    const via = outer ? ` through ${outer.id}` : '';
    this.host.services.log.info(
      `Generating ${n} image(s) with ${imageModel.id}${via} (${route === 'images' ? 'Images API' : 'Responses'}, ${size}).`,
    );
    try {
      const images = await this.request(plan, args.prompt, view, abort);
      const paths = await this.saveImages(dir, args.prompt, images);
      // Each card reports the saved file's own size (from its header), which need not be the one asked for.
      const pixelsOf = (i: number) => {
        const info = images[i] ? sniffImage(images[i].bytes) : undefined;
        return info?.width && info.height ? { width: info.width, height: info.height } : null;
      };
      await this.host.gallery.add(
        paths.map((file, i) => ({
          kind: 'image' as const,
          file,
          prompt: args.prompt,
          model: outer ? `${imageModel.id} via ${outer.id}` : imageModel.id,
          size,
          pixels: pixelsOf(i),
          createdAt: Date.now(),
          route,
        })),
      );
      this.host.services.billing.recordImages(imageModel.id, paths.length);
      view.state = 'done';
      view.files = paths.map(displayPath);
      delete view.partial;
      this.host.services.log.info(`Saved ${paths.join(', ')}`);
      return {
        files: paths.map((p) => vscode.Uri.file(p).toString()),
        paths,
        model: imageModel.id,
        route,
        ...(outer ? { outerModel: outer.id } : {}),
        size,
        revisedPrompts: images.flatMap((i) => (i.revisedPrompt ? [i.revisedPrompt] : [])),
        ...(view.message ? { text: view.message } : {}),
      };
    } catch (err) {
      const error = isGatewayError(err) ? err : new GatewayError('protocol', String(err), { cause: err });
      view.state = abort.signal.aborted || error.kind === 'cancelled' ? 'cancelled' : 'failed';
      view.message = view.state === 'cancelled' ? vscode.l10n.t('Cancelled. Nothing was saved.') : error.describe();
      delete view.partial;
      throw abort.signal.aborted && error.kind !== 'cancelled'
        ? new GatewayError('cancelled', words('Image generation was cancelled.'))
        : error;
    } finally {
      view.finishedAt = Date.now();
      this.host.refresh();
    }
  }

  /** Generates the images over the chosen route, with a cancellable progress notification and the partial previews. */
  private async request(
    { route, imageModel, outer, size, n, stream, partialImages }: ImagePlan,
    prompt: string,
    view: ImageJobView,
    abort: AbortController,
  ): Promise<GeneratedImage[]> {
    return await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: progressTitle(n, imageModel.id, outer?.id),
        cancellable: true,
      },
      async (progress, token) => {
        token.onCancellationRequested(() => abort.abort());
        const started = Date.now();
        const tick = setInterval(
          () =>
            progress.report({
              message: vscode.l10n.t('{0} (image generation can take minutes)', formatDuration(Date.now() - started)),
            }),
          1000,
        );
        try {
          if (route === 'images') {
            return await generateImages(this.host.services.http(), {
              model: imageModel.id,
              prompt: prompt,
              n,
              size,
              signal: abort.signal,
            });
          }
          const result = await generateImageViaResponses(this.host.services.http(), {
            outerModel: (outer as ModelInfo).id,
            imageModel: imageModel.id,
            prompt: prompt,
            stream,
            partialImages: stream ? partialImages : 0,
            size,
            signal: abort.signal,
            onPartial: (p) => {
              const format =
                p.format && ['png', 'jpeg', 'webp'].includes(p.format)
                  ? p.format
                  : (detectImageFormat(Buffer.from(p.base64.slice(0, 64), 'base64')) ?? 'png');
              view.partial = { src: `data:image/${format};base64,${p.base64}`, index: p.index };
              this.host.refresh();
            },
          });
          if (result.text.trim()) view.message = result.text.trim().slice(0, 500);
          return result.images;
        } finally {
          clearInterval(tick);
        }
      },
    );
  }

  cancel(): void {
    this.job?.abort.abort();
  }

  private async saveImages(dir: string, prompt: string, images: GeneratedImage[]): Promise<string[]> {
    const date = new Date();
    const paths: string[] = [];
    for (const [i, image] of images.entries()) {
      paths.push(
        await writeFileUnique(
          dir,
          mediaBaseName(prompt, i + 1, date, 'image'),
          imageExtension(image.format),
          image.bytes,
          { within: this.host.output.within(dir) },
        ),
      );
    }
    return paths;
  }
}

export function firstOf(models: ModelInfo[], kind: 'image' | 'video'): string | undefined {
  return models.find((m) => m.kind === kind && m.available)?.id;
}

/** Language models that can be the outer model of a Responses call with the image tool. */
export function outerModels(models: ModelInfo[]): ModelInfo[] {
  return models.filter((m) => m.kind === 'chat' && m.available && m.protocols.includes('responses'));
}

/** "Generating 2 images with X through Y", for the progress notification. */
function progressTitle(n: number, imageModel: string, outerModel: string | undefined): string {
  const what = n > 1 ? vscode.l10n.t('{0} images', formatNumber(n)) : vscode.l10n.t('an image');
  return outerModel
    ? vscode.l10n.t('Generating {0} with {1} through {2}', what, imageModel, outerModel)
    : vscode.l10n.t('Generating {0} with {1}', what, imageModel);
}
