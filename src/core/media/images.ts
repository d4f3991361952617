import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { streamResponses } from '../chat/responses';
import { errorFromStreamPayload } from '../errorBody';
import { GatewayError } from '../errors';
import type { HttpClient } from '../http';
import { parseJsonText, parseWith } from '../validate';
import { describeBytes, detectImageFormat, type ImageFormat } from './mediaFiles';
import { formatBytes, formatNumber } from '../../shared/format';
import { displaySize, imageWireSize, parseSize } from '../../shared/mediaSize';
import { words } from '../../shared/words';

/** One decoded image, in the format its bytes really have. */
export interface GeneratedImage {
  bytes: Buffer;
  format: ImageFormat;
  revisedPrompt?: string;
  /** How it arrived: inline Base64 or a link downloaded without the key. */
  source: 'b64_json' | 'url' | 'responses';
}

export interface ImagesApiRequest {
  model: string;
  prompt: string;
  n: number;
  /** Any notation (`1024 × 1024`); sent as `<width>x<height>`. */
  size: string;
  signal?: AbortSignal;
}

export const MAX_IMAGES_PER_REQUEST = 10;
const MAX_SIDE = 16384;
/** A downloaded image larger than this is refused rather than held in memory. */
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;

/**
 * The Images API's `size` form, `1024x1024`, from a size written in any notation the studio accepts
 * (`1024 × 1024`, `1024*1024`): people write one notation, each endpoint gets its own.
 */
export function validateImageSize(size: string): string {
  const parsed = parseSize(size);
  if (!parsed)
    throw new GatewayError(
      'badRequest',
      words('The image size "{0}" is not a width and a height in pixels, e.g. 1024 × 1024.', size),
    );
  if (parsed.width < 1 || parsed.height < 1 || parsed.width > MAX_SIDE || parsed.height > MAX_SIDE) {
    throw new GatewayError(
      'badRequest',
      words(
        'The image size {0} is out of range: each side must be between 1 and {1} pixels.',
        displaySize(parsed),
        formatNumber(MAX_SIDE),
      ),
    );
  }
  return imageWireSize(parsed);
}

function validatePrompt(prompt: string): string {
  if (!prompt.trim())
    throw new GatewayError('badRequest', words('Describe the image to generate: the prompt is empty.'));
  return prompt;
}

const imageItem = z.looseObject({
  b64_json: z.optional(z.nullable(z.string())),
  url: z.optional(z.nullable(z.string())),
  revised_prompt: z.optional(z.nullable(z.string())),
});
const imagesResponse = z.looseObject({ data: z.array(imageItem) });

/**
 * `POST /v1/images/generations` with `response_format: b64_json`. Each
 * `data[].b64_json` is decoded and its real format read from the bytes; an item that carries a
 * `url` instead is downloaded without the key. The call is billed, so it is never retried.
 */
export async function generateImages(http: HttpClient, req: ImagesApiRequest): Promise<GeneratedImage[]> {
  validatePrompt(req.prompt);
  const size = validateImageSize(req.size);
  if (!Number.isInteger(req.n) || req.n < 1 || req.n > MAX_IMAGES_PER_REQUEST) {
    throw new GatewayError(
      'badRequest',
      words('The number of images must be a whole number from 1 to {0}; {1} was given.', MAX_IMAGES_PER_REQUEST, req.n),
    );
  }
  const response = await http.send({
    method: 'POST',
    url: http.endpoints.images,
    json: { model: req.model, prompt: req.prompt, n: req.n, size, response_format: 'b64_json' },
    headers: { accept: 'application/json' },
    signal: req.signal,
    timeout: 'long',
    idempotent: false,
    model: req.model,
  });
  const json = parseJsonText(await response.text(), l10n.t('The image generation answer'));
  const error = (json as { error?: unknown } | null)?.error;
  if (error && typeof error === 'object') {
    const made = errorFromStreamPayload(error);
    // The stream's wording ("The answer stopped with an error. …") is replaced by the image's own.
    const streamLead = l10n.t('The answer stopped with an error. {0}', '');
    const message = made.message.startsWith(streamLead)
      ? l10n.t('Image generation failed. {0}', made.message.slice(streamLead.length))
      : made.message;
    throw new GatewayError(made.kind, message, {
      code: made.code,
      detail: made.detail,
      requestId: response.requestId ?? made.requestId,
    });
  }
  const body = parseWith(imagesResponse, json, l10n.t('The image generation answer'));
  if (body.data.length === 0)
    throw new GatewayError(
      'protocol',
      words('The gateway answered the image request without any image (an empty "data" list).'),
      { requestId: response.requestId },
    );
  const images: GeneratedImage[] = [];
  for (const [i, item] of body.data.entries()) {
    const revisedPrompt = item.revised_prompt || undefined;
    if (item.b64_json) {
      const bytes = decodeBase64(item.b64_json, l10n.t('Image {0} of the answer', i + 1));
      images.push({
        bytes,
        format: requireImageFormat(bytes, l10n.t('Image {0} of the answer', i + 1)),
        source: 'b64_json',
        ...(revisedPrompt ? { revisedPrompt } : {}),
      });
    } else if (item.url) {
      const bytes = await downloadImage(http, item.url, req.signal);
      images.push({
        bytes,
        format: requireImageFormat(bytes, l10n.t('The image at {0}', redactUrl(item.url))),
        source: 'url',
        ...(revisedPrompt ? { revisedPrompt } : {}),
      });
    } else {
      throw new GatewayError('protocol', words('Image {0} of the answer has neither "b64_json" nor "url".', i + 1), {
        requestId: response.requestId,
      });
    }
  }
  return images;
}

/**
 * Fetches an image link of an answer. Such links point at a storage host, never the gateway, so
 * the key is never sent (`anonymous`), whatever the host.
 */
export async function downloadImage(http: HttpClient, url: string, signal?: AbortSignal): Promise<Buffer> {
  downloadableLink(url, {
    invalid: (shown) => l10n.t('The answer\'s image link is not a valid address: "{0}".', shown),
    scheme: (protocol) => l10n.t('The answer\'s image link uses "{0}", which is not downloaded.', protocol),
  });
  const response = await http.send({
    method: 'GET',
    url,
    anonymous: true,
    signal,
    timeout: 'long',
    acceptStatus: ERROR_STATUSES,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.chunks()) {
    size += chunk.length;
    if (size > MAX_IMAGE_BYTES) {
      response.body.destroy();
      throw new GatewayError(
        'tooLarge',
        words('The image at {0} is larger than {1}; it was not saved.', redactUrl(url), formatBytes(MAX_IMAGE_BYTES)),
      );
    }
    chunks.push(Buffer.from(chunk));
  }
  const bytes = Buffer.concat(chunks);
  if (response.status >= 400) {
    throw new GatewayError(
      response.status >= 500 ? 'server' : 'badRequest',
      words(
        'The image link {0} answered HTTP {1} with {2}. Such links expire; generate the image again.',
        redactUrl(url),
        response.status,
        describeBytes(bytes),
      ),
      { status: response.status },
    );
  }
  return bytes;
}

/** Every 4xx and 5xx status, so a storage host's own error page can be read and described. */
export const ERROR_STATUSES: number[] = Array.from({ length: 200 }, (_, i) => 400 + i);

export interface ResponsesImageRequest {
  /** A language model that speaks the Responses protocol. */
  outerModel: string;
  /** The image model, passed in the image_generation tool. */
  imageModel: string;
  prompt: string;
  /** SSE with partial images as they arrive, or one JSON answer. */
  stream: boolean;
  /** How many partial previews to ask for while streaming (0–3). */
  partialImages?: number;
  /** Optional `<width>x<height>` for the tool. */
  size?: string;
  signal?: AbortSignal;
  onPartial?: (image: { base64: string; index: number; format?: string }) => void;
}

export interface ResponsesImageResult {
  images: GeneratedImage[];
  /** Whatever text the outer model wrote alongside the image. */
  text: string;
}

/**
 * An image through `POST /v1/responses`: the outer model is a language model and the image model
 * rides in `tools: [{type: image_generation, action: generate, model}]` with `tool_choice: auto`
 * (OpenAI's image generation tool). The final `image_generation_call.result` is decoded.
 */
export async function generateImageViaResponses(
  http: HttpClient,
  req: ResponsesImageRequest,
): Promise<ResponsesImageResult> {
  validatePrompt(req.prompt);
  const size = req.size ? validateImageSize(req.size) : undefined;
  const partials = req.stream ? Math.max(0, Math.min(3, Math.floor(req.partialImages ?? 0))) : 0;
  const tool: Record<string, unknown> = { type: 'image_generation', action: 'generate', model: req.imageModel };
  if (size) tool.size = size;
  if (partials) tool.partial_images = partials;
  const events = streamResponses(
    http,
    {
      model: req.outerModel,
      protocol: 'responses',
      messages: [{ role: 'user', content: req.prompt }],
      stream: req.stream,
      signal: req.signal,
      timeout: 'long',
    },
    { tools: [tool], toolChoice: 'auto' },
  );
  const images: GeneratedImage[] = [];
  let text = '';
  for await (const e of events) {
    if (e.type === 'textDelta') text += e.text;
    else if (e.type === 'image' && e.partial)
      req.onPartial?.({ base64: e.base64, index: e.index, ...(e.format ? { format: e.format } : {}) });
    else if (e.type === 'image') {
      const bytes = decodeBase64(e.base64, l10n.t('The generated image'));
      images.push({
        bytes,
        format: requireImageFormat(bytes, l10n.t('The generated image')),
        source: 'responses',
        ...(e.revisedPrompt ? { revisedPrompt: e.revisedPrompt } : {}),
      });
    } else if (e.type === 'error') {
      throw e.error.kind === 'cancelled'
        ? e.error
        : new GatewayError(
            e.error.kind,
            words('Image generation through {0} failed. {1}', req.outerModel, e.error.message),
            { status: e.error.status, code: e.error.code, requestId: e.error.requestId, detail: e.error.detail },
          );
    }
  }
  if (images.length === 0) {
    const said = text.trim()
      ? l10n.t(' It answered: "{0}"', `${text.trim().slice(0, 200)}${text.length > 200 ? '…' : ''}`)
      : '';
    throw new GatewayError(
      'protocol',
      words(
        '{0} finished without generating an image (no image_generation_call result).{1} Try a prompt that asks for a picture, or the Images API.',
        req.outerModel,
        said,
      ),
    );
  }
  return { images, text };
}

/** Base64 (standard or URL-safe, optionally a data: URL) to bytes, refusing text that is not Base64. */
export function decodeBase64(data: string, what: string): Buffer {
  const body = data.startsWith('data:') ? data.slice(data.indexOf(',') + 1) : data;
  const compact = body.replace(/\s+/g, '');
  if (!compact || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact)) {
    throw new GatewayError(
      'protocol',
      words('{0} is not valid Base64 ("{1}").', what, `${compact.slice(0, 40)}${compact.length > 40 ? '…' : ''}`),
    );
  }
  return Buffer.from(compact, 'base64');
}

function requireImageFormat(bytes: Buffer, what: string): ImageFormat {
  const format = detectImageFormat(bytes);
  if (!format)
    throw new GatewayError(
      'protocol',
      words('{0} is not a PNG, JPEG or WebP image: it is {1}. Nothing was saved.', what, describeBytes(bytes)),
    );
  return format;
}

/** A link without its query string, which may hold a signature. */
/** What to say of a result link that is not an address, or not one that is downloaded. */
export interface LinkMessages {
  invalid(shown: string): string;
  scheme(protocol: string): string;
}

/**
 * A result link of an answer (an image, a video) as the address to download: only http and https
 * links are fetched. A link that is neither is the answer's fault, a protocol error.
 */
export function downloadableLink(url: string, say: LinkMessages): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GatewayError('protocol', say.invalid(url.slice(0, 120)));
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new GatewayError('protocol', say.scheme(parsed.protocol));
  return parsed;
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return url.slice(0, 80);
  }
}
