import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { GatewayError, isGatewayError } from '../../core/errors';
import { generateImages, generateImageViaResponses, validateImageSize, type GeneratedImage } from '../../core/media/images';
import { writeFileUnique } from '../../core/atomicFile';
import { detectImageFormat, imageExtension, mediaBaseName } from '../../core/media/mediaFiles';
import { requireListedModel, requireOuterModel } from '../../core/media/modelChoice';
import { validateVideoParams, videoHints } from '../../core/media/video';
import { describeTask, isActive, type VideoTask } from '../../core/media/videoTask';
import type { ModelInfo } from '../../core/models/types';
import { videoBillingNote, type ImageJobView, type ImageRoute, type MediaSnapshot, type MediaTab, type MediaWebviewMessage, type TaskView } from '../../shared/mediaProtocol';
import { showError } from '../notify';
import type { Services } from '../services';
import { loadModelsOnFirstUse, runSetupAction, setupNotice } from '../setup';
import { Gallery, type GalleryItem } from './gallery';
import { MediaPanel, type MediaPanelOwner } from './mediaPanel';
import { mediaSettings } from './mediaSettings';
import { displayPath, OutputLocation } from './outputLocation';
import { VideoTasks } from './videoTasksHost';

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

export interface SubmitVideoArgs {
  prompt: string;
  model?: string;
  size?: string;
  duration?: number;
}

/** A task as commands return it: no link (it is temporary and signed), paths and URIs for the file. */
export interface VideoTaskSummary {
  taskId?: string;
  localId: string;
  model: string;
  prompt: string;
  size: string;
  duration: number;
  phase: VideoTask['phase'];
  status: string;
  remoteStatus?: string;
  progress?: number;
  file?: string;
  path?: string;
  error?: { kind: string; message: string; stage: string };
  createdAt: number;
  finishedAt?: number;
}

interface LastChoices {
  route?: ImageRoute;
  imageModel?: string;
  outerModel?: string;
  videoModel?: string;
  imageSize?: string;
  imageCount?: number;
  stream?: boolean;
}

const LAST_KEY = 'media.last';
const SNAPSHOT_EVERY_MS = 100;
/** Unfinished video tasks resume this long after activation, never during it. */
const RESUME_DELAY_MS = 1500;

/**
 * Media Studio's state and actions: image generation over both routes, video tasks, the gallery,
 * and the file actions. Commands and the panel both come here; the panel only renders snapshots.
 */
export class MediaStudio implements vscode.Disposable, MediaPanelOwner {
  readonly gallery: Gallery;
  readonly video: VideoTasks;
  readonly output: OutputLocation;
  private panel?: MediaPanel;
  private job?: { view: ImageJobView; abort: AbortController };
  /** Set from the moment a generation is asked for, so a double click cannot start two. */
  private imageStarting = false;
  private lastEditor?: vscode.TextEditor;
  private snapshotTimer?: ReturnType<typeof setTimeout>;
  private lastSnapshotAt = 0;
  private readonly subscriptions: vscode.Disposable[] = [];
  private resumeTimer?: ReturnType<typeof setTimeout>;

  constructor(private readonly services: Services) {
    const context = services.context;
    this.gallery = new Gallery(context.workspaceState);
    this.output = new OutputLocation(() => services.settings().outputFolder);
    this.video = new VideoTasks(services, context.workspaceState, (task, from) => void this.onTaskTransition(task, from));
    this.lastEditor = vscode.window.activeTextEditor;
    this.subscriptions.push(
      this.gallery,
      this.video,
      services.registry.onDidChange(() => this.refresh()),
      services.keys.onDidChange(() => this.refresh()),
      services.onDidChangeSettings(() => this.refresh()),
      this.gallery.onDidChange(() => this.refresh()),
      this.video.onDidChange(() => this.refresh()),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) this.lastEditor = e;
      }),
    );
    // Tasks left running by the last session resume soon after activation, not during it.
    if (this.video.hasUnfinished()) this.resumeTimer = setTimeout(() => void this.video.ready().catch((err: unknown) => services.log.warn(`Resuming video tasks failed: ${String(err)}`)), RESUME_DELAY_MS);
  }

  attach(panel: MediaPanel | undefined): void {
    this.panel = panel;
    if (panel) void this.video.ready().catch((err: unknown) => this.services.log.warn(`Loading video tasks failed: ${String(err)}`));
  }

  /** Thumbnails may be read from these folders. */
  resourceRoots(): vscode.Uri[] {
    return this.output.roots();
  }

  // ---- Images -------------------------------------------------------------------------------

  async generateImage(args: GenerateImageArgs): Promise<GenerateImageResult> {
    if (this.job?.view.state === 'running' || this.imageStarting) throw new GatewayError('badRequest', 'An image is still being generated. Wait for it or cancel it first.');
    this.imageStarting = true;
    try {
      return await this.runImage(args);
    } finally {
      this.imageStarting = false;
    }
  }

  private async runImage(args: GenerateImageArgs): Promise<GenerateImageResult> {
    const settings = mediaSettings((line) => this.services.log.warn(line));
    const last = this.last();
    const models = await this.models();
    const route = args.route ?? last.route ?? settings.imageRoute;
    const imageModel = requireListedModel(args.model ?? last.imageModel ?? firstOf(models, 'image') ?? '', models, 'image');
    const outer = route === 'responses' ? requireOuterModel(args.outerModel ?? last.outerModel ?? outerModels(models)[0]?.id ?? '', models) : undefined;
    const size = validateImageSize(args.size ?? last.imageSize ?? settings.imageSize);
    const n = route === 'images' ? (args.n ?? last.imageCount ?? settings.imageCount) : 1;
    const stream = args.stream ?? last.stream ?? settings.stream;
    if (!args.prompt.trim()) throw new GatewayError('badRequest', 'Describe the image to generate: the prompt is empty.');
    const dir = await this.output.resolve('images');
    this.panel?.updateRoots();
    await this.remember({ route, imageModel: imageModel.id, ...(outer ? { outerModel: outer.id } : {}), imageSize: size, ...(route === 'images' ? { imageCount: n } : { stream }) });

    const abort = new AbortController();
    const view: ImageJobView = { id: randomUUID(), route, model: imageModel.id, ...(outer ? { outerModel: outer.id } : {}), prompt: args.prompt, startedAt: Date.now(), state: 'running', files: [] };
    this.job = { view, abort };
    this.refresh();
    const via = outer ? ` through ${outer.id}` : '';
    this.services.log.info(`Generating ${n} image(s) with ${imageModel.id}${via} (${route === 'images' ? 'Images API' : 'Responses'}, ${size}).`);
    try {
      const images = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Generating ${n > 1 ? `${n} images` : 'an image'} with ${imageModel.id}${via}`, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          const started = Date.now();
          const tick = setInterval(() => progress.report({ message: `${Math.round((Date.now() - started) / 1000)} s (image generation can take minutes)` }), 1000);
          try {
            if (route === 'images') {
              return await generateImages(this.services.http(), { model: imageModel.id, prompt: args.prompt, n, size, signal: abort.signal });
            }
            const result = await generateImageViaResponses(this.services.http(), {
              outerModel: (outer as ModelInfo).id,
              imageModel: imageModel.id,
              prompt: args.prompt,
              stream,
              partialImages: stream ? settings.partialImages : 0,
              size,
              signal: abort.signal,
              onPartial: (p) => {
                const format = p.format && ['png', 'jpeg', 'webp'].includes(p.format) ? p.format : (detectImageFormat(Buffer.from(p.base64.slice(0, 64), 'base64')) ?? 'png');
                view.partial = { src: `data:image/${format};base64,${p.base64}`, index: p.index };
                this.refresh();
              },
            });
            if (result.text.trim()) view.message = result.text.trim().slice(0, 500);
            return result.images;
          } finally {
            clearInterval(tick);
          }
        },
      );
      const paths = await this.saveImages(dir, args.prompt, images);
      await this.gallery.add(paths.map((file) => ({ kind: 'image' as const, file, prompt: args.prompt, model: outer ? `${imageModel.id} via ${outer.id}` : imageModel.id, size, createdAt: Date.now(), route })));
      view.state = 'done';
      view.files = paths.map(displayPath);
      delete view.partial;
      this.services.log.info(`Saved ${paths.join(', ')}`);
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
      view.message = view.state === 'cancelled' ? 'Cancelled. Nothing was saved.' : error.describe();
      delete view.partial;
      throw abort.signal.aborted && error.kind !== 'cancelled' ? new GatewayError('cancelled', 'Image generation was cancelled.') : error;
    } finally {
      view.finishedAt = Date.now();
      this.refresh();
    }
  }

  cancelImage(): void {
    this.job?.abort.abort();
  }

  private async saveImages(dir: string, prompt: string, images: GeneratedImage[]): Promise<string[]> {
    const date = new Date();
    const paths: string[] = [];
    for (const [i, image] of images.entries()) {
      paths.push(await writeFileUnique(dir, mediaBaseName(prompt, i + 1, date, 'image'), imageExtension(image.format), image.bytes));
    }
    return paths;
  }

  // ---- Video --------------------------------------------------------------------------------

  /** Submits a task; resolves once the gateway accepted it (the id), throws when it refused it. */
  async submitVideo(args: SubmitVideoArgs): Promise<VideoTask> {
    const models = await this.models();
    const model = requireListedModel(args.model ?? this.last().videoModel ?? firstOf(models, 'video') ?? '', models, 'video');
    const hints = videoHints(model);
    const size = args.size ?? hints.defaultSize;
    const duration = args.duration ?? hints.defaultDuration;
    if (!size || duration === undefined) {
      throw new GatewayError('badRequest', `Nothing is known about the sizes and durations ${model.id} accepts (the catalog has no hints for it). Give both, e.g. size "832*480" and duration 5; the gateway will say if the model rejects them.`);
    }
    const params = validateVideoParams({ model: model.id, prompt: args.prompt, size, duration });
    const dir = await this.output.resolve('videos');
    await this.remember({ videoModel: model.id });
    const manager = await this.video.ready();
    this.services.log.info(videoBillingNote(params));
    return manager.submit({ ...params, outputDir: dir });
  }

  async waitForVideo(id: string): Promise<VideoTask> {
    return this.video.wait(id);
  }

  async taskAction(action: Extract<MediaWebviewMessage, { type: 'task' }>['action'], id: string): Promise<VideoTask | undefined> {
    const manager = await this.video.ready();
    const task = manager.find(id);
    if (!task) throw new GatewayError('badRequest', `There is no video task ${id}.`);
    switch (action) {
      case 'cancel':
        return manager.cancel(id);
      case 'resume':
      case 'retryDownload':
        return manager.resume(id);
      case 'resubmit': {
        const choice = await vscode.window.showWarningMessage(`Submit this video task again as a new task? ${videoBillingNote(task)}`, { modal: true }, 'Submit Again');
        if (choice !== 'Submit Again') return undefined;
        return manager.resubmit(id);
      }
      case 'forget':
        manager.forget(id);
        return undefined;
      case 'open':
      case 'openExternal':
      case 'reveal':
        if (!task.file) throw new GatewayError('badRequest', 'This task has no saved video yet.');
        await fileAction(action, task.file);
        return task;
    }
  }

  summary(task: VideoTask): VideoTaskSummary {
    return {
      ...(task.taskId ? { taskId: task.taskId } : {}),
      localId: task.localId,
      model: task.model,
      prompt: task.prompt,
      size: task.size,
      duration: task.duration,
      phase: task.phase,
      status: describeTask(task),
      ...(task.remoteStatus ? { remoteStatus: task.remoteStatus } : {}),
      ...(task.progress !== undefined ? { progress: task.progress } : {}),
      ...(task.file ? { file: vscode.Uri.file(task.file).toString(), path: task.file } : {}),
      ...(task.error ? { error: { kind: task.error.kind, message: task.error.message, stage: task.error.stage } } : {}),
      createdAt: task.createdAt,
      ...(task.finishedAt ? { finishedAt: task.finishedAt } : {}),
    };
  }

  private async onTaskTransition(task: VideoTask, from: VideoTask['phase'] | undefined): Promise<void> {
    if (task.phase === 'succeeded' && task.file) {
      await this.gallery.add([{ kind: 'video', file: task.file, prompt: task.prompt, model: task.model, size: task.size, createdAt: task.finishedAt ?? Date.now(), route: 'video', ...(task.taskId ? { taskId: task.taskId } : {}) }]);
      const choice = await vscode.window.showInformationMessage(`Video saved: ${displayPath(task.file)}`, 'Open with System Player', 'Reveal in Explorer');
      if (choice === 'Open with System Player') await fileAction('openExternal', task.file);
      else if (choice === 'Reveal in Explorer') await fileAction('reveal', task.file);
      return;
    }
    if (task.phase === 'failed' && from && from !== 'submitting') {
      const retry = task.error?.stage === 'download' || task.error?.stage === 'check';
      const actions = retry ? ['Retry Download', 'Show Tasks'] : ['Show Tasks'];
      const choice = await vscode.window.showWarningMessage(`Video task ${task.taskId ?? ''} failed: ${task.error?.message ?? 'no reason given'}`, ...actions);
      if (choice === 'Retry Download') await this.taskAction('retryDownload', task.localId).catch((err: unknown) => showError(err, this.services.log));
      else if (choice === 'Show Tasks') this.open('video');
      return;
    }
    if (task.phase === 'stopped' && task.stoppedBy !== 'user') {
      const why = task.stoppedBy === 'limit' ? 'it did not finish within "modelGateway.video.maxPollMinutes"' : `queries kept failing (${task.error?.message ?? 'no reason'})`;
      const choice = await vscode.window.showWarningMessage(`Stopped polling video task ${task.taskId ?? ''}: ${why}. The task may still finish on the gateway.`, 'Resume Polling');
      if (choice === 'Resume Polling') await this.taskAction('resume', task.localId).catch((err: unknown) => showError(err, this.services.log));
    }
  }

  // ---- Panel --------------------------------------------------------------------------------

  /** Shows the Media Studio panel on `tab`. */
  open(tab?: MediaTab): MediaPanel {
    return MediaPanel.show(this.services.context.extensionUri, this, this.services.log, tab);
  }

  async handle(msg: MediaWebviewMessage): Promise<void> {
    switch (msg.type) {
      case 'ready':
        return this.sendSnapshot(true);
      case 'generateImage':
        await this.generateImage({ ...msg.request, outerModel: msg.request.route === 'responses' ? msg.request.outerModel : undefined }).catch((err: unknown) => {
          if (!isGatewayError(err, 'cancelled')) showError(err, this.services.log);
        });
        // The view disabled its button when it sent the request; a snapshot gives it back.
        this.refresh();
        return;
      case 'cancelImage':
        return this.cancelImage();
      case 'submitVideo':
        await this.submitVideo(msg.request).catch((err: unknown) => showError(err, this.services.log));
        this.refresh();
        return;
      case 'task':
        await this.taskAction(msg.action, msg.id);
        return;
      case 'item':
        return this.itemAction(msg.action, msg.id);
      case 'action':
        return this.runAction(msg.action);
    }
  }

  /** Full state for the panel; coalesced to at most one post per ~100 ms. */
  refresh(): void {
    if (!this.panel || this.snapshotTimer) return;
    const wait = Math.max(0, this.lastSnapshotAt + SNAPSHOT_EVERY_MS - Date.now());
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = undefined;
      void this.sendSnapshot();
    }, wait);
  }

  async sendSnapshot(force = false): Promise<void> {
    const panel = this.panel;
    if (!panel || (!force && !panel.isLive())) return;
    this.lastSnapshotAt = Date.now();
    panel.post({ type: 'snapshot', state: await this.snapshot(panel) });
  }

  private async snapshot(panel: MediaPanel): Promise<MediaSnapshot> {
    const settings = mediaSettings();
    const last = this.last();
    const models = this.services.registry.snapshot.models.filter((m) => m.available);
    const image = models.filter((m) => m.kind === 'image');
    const video = models.filter((m) => m.kind === 'video');
    const outer = outerModels(models);
    const tasks = this.video.list();
    return {
      imageModels: image.map((m) => ({ id: m.id, provider: m.provider })),
      outerModels: outer.map((m) => ({ id: m.id, provider: m.provider })),
      videoModels: video.map((m) => {
        const h = videoHints(m);
        return { id: m.id, provider: m.provider, sizes: h.sizes, durations: h.durations, ...(h.defaultSize ? { defaultSize: h.defaultSize } : {}), ...(h.defaultDuration !== undefined ? { defaultDuration: h.defaultDuration } : {}), hintSource: h.source };
      }),
      defaults: {
        route: last.route ?? settings.imageRoute,
        ...pick('imageModel', last.imageModel, image),
        ...pick('outerModel', last.outerModel, outer),
        ...pick('videoModel', last.videoModel, video),
        imageSize: last.imageSize ?? settings.imageSize,
        imageCount: last.imageCount ?? settings.imageCount,
        stream: last.stream ?? settings.stream,
      },
      ...(this.job ? { imageJob: this.job.view } : {}),
      tasks: tasks.map((t) => this.taskView(t)),
      gallery: this.gallery.list().map((item) => galleryView(item, panel)),
      outputFolder: this.output.describe(),
      ...(await this.notice(image.length + video.length)),
    };
  }

  private taskView(t: VideoTask): TaskView {
    const download = t.phase === 'downloading' ? this.video.downloadProgress(t.localId) : undefined;
    const retry = t.phase === 'failed' && (t.error?.stage === 'download' || t.error?.stage === 'check') && !!t.taskId;
    return {
      localId: t.localId,
      ...(t.taskId ? { taskId: t.taskId } : {}),
      model: t.model,
      prompt: t.prompt,
      size: t.size,
      duration: t.duration,
      phase: t.phase,
      ...(t.remoteStatus ? { remoteStatus: t.remoteStatus } : {}),
      ...(t.progress !== undefined ? { progress: t.progress } : {}),
      statusText: describeTask(t),
      createdAt: t.createdAt,
      ...(t.finishedAt ? { finishedAt: t.finishedAt } : {}),
      ...(t.error ? { error: { message: t.error.message, stage: t.error.stage } } : {}),
      ...(t.file ? { file: { path: t.file, label: displayPath(t.file) } } : {}),
      ...(download ? { download } : {}),
      canCancel: isActive(t) && t.phase !== 'submitting',
      canResume: t.phase === 'stopped' && !!t.taskId,
      canRetryDownload: retry,
      canResubmit: t.phase === 'failed' || t.phase === 'stopped',
    };
  }

  private async notice(mediaModels: number): Promise<Pick<MediaSnapshot, 'notice'>> {
    const notice = await setupNotice(this.services, mediaModels, {
      noBase: 'Set the gateway base address to generate images and videos.',
      noKey: 'Set your API key to generate images and videos.',
      noModels: 'This key has no image or video models.',
    });
    return notice ? { notice } : {};
  }

  private async itemAction(action: Extract<MediaWebviewMessage, { type: 'item' }>['action'], id: string): Promise<void> {
    const item = this.gallery.find(id);
    if (!item) return;
    switch (action) {
      case 'remove':
        return this.gallery.remove(id);
      case 'copyPath':
        await vscode.env.clipboard.writeText(item.file);
        void vscode.window.setStatusBarMessage(`Copied ${item.file}`, 3000);
        return;
      case 'insertLink':
        await this.insertLink(item);
        return;
      case 'askInChat':
        // The chat attaches the image to its next message (and picks a model that takes images).
        await vscode.commands.executeCommand('modelGateway.askAboutImage', { uri: vscode.Uri.file(item.file) });
        return;
      default:
        if (!existsSync(item.file)) {
          void vscode.window.showWarningMessage(`${displayPath(item.file)} no longer exists.`);
          return;
        }
        return fileAction(action, item.file);
    }
  }

  /** A Markdown link at the cursor of the last editor used; relative to that document where possible. */
  async insertLink(item: GalleryItem): Promise<string> {
    const editor = [vscode.window.activeTextEditor, this.lastEditor].find((e): e is vscode.TextEditor => !!e && !e.document.isClosed);
    const link = markdownLink(item, editor?.document.uri);
    if (!editor) {
      await vscode.env.clipboard.writeText(link);
      void vscode.window.showInformationMessage('No editor is open, so the Markdown link was copied to the clipboard.');
      return link;
    }
    const shown = await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false, selection: editor.selection });
    await shown.edit((edit) => {
      for (const selection of shown.selections) edit.replace(selection, link);
    });
    return link;
  }

  private async runAction(action: 'setKey' | 'openSettings' | 'refreshModels' | 'openOutputFolder'): Promise<void> {
    switch (action) {
      case 'setKey':
      case 'openSettings':
      case 'refreshModels':
        return runSetupAction(action);
      case 'openOutputFolder': {
        const images = this.output.current('images');
        const root = images ? path.dirname(images) : undefined;
        if (!root || !existsSync(root)) {
          void vscode.window.showInformationMessage(`Nothing has been saved yet; generated files will go to ${this.output.describe()}.`);
          return;
        }
        await fileAction('reveal', root);
        return;
      }
    }
  }

  /** The merged model list, loaded once if nothing was loaded yet; the key's error if it could not be. */
  private async models(): Promise<ModelInfo[]> {
    await loadModelsOnFirstUse(this.services, 'media');
    const snap = this.services.registry.snapshot;
    if (snap.keyError && !snap.models.some((m) => m.available)) throw snap.keyError;
    return snap.models;
  }

  private last(): LastChoices {
    const raw = this.services.context.workspaceState.get<LastChoices>(LAST_KEY);
    return typeof raw === 'object' && raw !== null ? raw : {};
  }

  private async remember(choices: LastChoices): Promise<void> {
    await this.services.context.workspaceState.update(LAST_KEY, { ...this.last(), ...choices });
  }

  dispose(): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer);
    this.job?.abort.abort();
    MediaPanel.open?.close();
    for (const s of this.subscriptions) s.dispose();
  }
}

function firstOf(models: ModelInfo[], kind: 'image' | 'video'): string | undefined {
  return models.find((m) => m.kind === kind && m.available)?.id;
}

/** Language models that can be the outer model of a Responses call with the image tool. */
function outerModels(models: ModelInfo[]): ModelInfo[] {
  return models.filter((m) => m.kind === 'chat' && m.available && m.protocols.includes('responses'));
}

function pick<K extends string>(key: K, wanted: string | undefined, list: ModelInfo[]): Partial<Record<K, string>> {
  const id = list.find((m) => m.id === wanted)?.id ?? list[0]?.id;
  return id ? ({ [key]: id } as Partial<Record<K, string>>) : {};
}

function galleryView(item: GalleryItem, panel: MediaPanel) {
  const exists = existsSync(item.file);
  const src = item.kind === 'image' && exists ? panel.asWebviewUri(vscode.Uri.file(item.file)) : undefined;
  return {
    id: item.id,
    kind: item.kind,
    prompt: item.prompt,
    model: item.model,
    size: item.size,
    createdAt: item.createdAt,
    label: displayPath(item.file),
    ...(src ? { src } : {}),
    exists,
  };
}

async function fileAction(action: 'open' | 'openExternal' | 'reveal', file: string): Promise<void> {
  const uri = vscode.Uri.file(file);
  switch (action) {
    case 'open':
      await vscode.commands.executeCommand('vscode.open', uri);
      return;
    case 'openExternal':
      // VS Code's own preview cannot play every MP4; the system's player can.
      await vscode.env.openExternal(uri);
      return;
    case 'reveal':
      if (vscode.workspace.getWorkspaceFolder(uri)) await vscode.commands.executeCommand('revealInExplorer', uri);
      else await vscode.commands.executeCommand('revealFileInOS', uri);
      return;
  }
}

/** `![prompt](relative/path.png)` for images, `[prompt](path.mp4)` for videos. */
export function markdownLink(item: Pick<GalleryItem, 'kind' | 'file' | 'prompt'>, from: vscode.Uri | undefined): string {
  let target: string;
  if (from?.scheme === 'file') target = path.relative(path.dirname(from.fsPath), item.file).split(path.sep).join('/');
  else target = vscode.Uri.file(item.file).toString();
  if (/[\s()<>]/.test(target)) target = `<${target.replace(/[<>]/g, encodeURIComponent)}>`;
  const alt = item.prompt.replace(/\[\[[^\]]*\]\]/g, '').replace(/[[\]\r\n]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 80) || (item.kind === 'image' ? 'generated image' : 'generated video');
  return `${item.kind === 'image' ? '!' : ''}[${alt}](${target})`;
}
