import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { errorFromResponse, errorInOkBody } from '../errorBody';
import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import type { ModelInfo } from '../models/types';
import { parseJsonText, parseWith } from '../validate';
import { requireFormat, type UploadFormat } from '../tools/fileFormat';
import { multipartFromFile, type MultipartBody } from '../tools/multipart';
import { ERROR_STATUSES, redactUrl } from './images';
import { streamToFileUnique } from '../atomicFile';
import { checkMp4File, describeBytes } from './mediaFiles';
import { formatDuration, formatNumber } from '../../shared/format';
import { displaySize, displaySizeText, parseSize, videoWireSize } from '../../shared/mediaSize';

/** `data.status` of a task query, in new-api's task envelope (upper case). */
export const REMOTE_STATUSES = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE', 'UNKNOWN'] as const;
export type RemoteStatus = (typeof REMOTE_STATUSES)[number];

/**
 * How a task is submitted: `task` = the spec's `POST /v1/video/generations` (JSON), `openai` =
 * OpenAI's `POST /v1/videos` (a multipart form), for models the gateway lists as `openai-video`.
 */
export type VideoApi = 'task' | 'openai';

export interface VideoParams {
  model: string;
  prompt: string;
  /** `<width>*<height>`, with the asterisk separator the Wan-type video endpoint uses. */
  size: string;
  /** Seconds. */
  duration: number;
  /** The task API by default. */
  api?: VideoApi;
  /** OpenAI's API only: an image file the video starts from (`input_reference`). */
  inputReference?: string;
}

/** What one query said about a task, in one shape whatever variant of the body arrived. */
export interface VideoStatus {
  status: RemoteStatus;
  /** The status as the gateway wrote it, when it was not one of the known values. */
  rawStatus: string;
  /** 0–100, from `"NN%"`. */
  progress?: number;
  failReason?: string;
  videoUrl?: string;
  /** The gateway serves the finished video itself (OpenAI's video API) when it gives no link. */
  servedByGateway?: boolean;
  /** Set when the task answered on OpenAI's route, which later queries then use. */
  route?: 'videos';
}

/** The one video model whose sizes and durations are known without catalog hints (a Wan-type model). */
export const VERIFIED_WAN = { size: '832*480', duration: 5 } as const;
const VERIFIED_WAN_SIZE = { width: 832, height: 480 };

export interface VideoHints {
  sizes: string[];
  durations: number[];
  /** Preselected values; absent when nothing is known about the model. */
  defaultSize?: string;
  defaultDuration?: number;
  source: 'catalog' | 'verified' | 'none';
}

/**
 * Per-model parameter hints: the catalog's where it has them; for a Wan-type model without them,
 * the verified `832*480` and 5 s. Other models get no invented defaults: the
 * values known for one model are not taken for another.
 */
export function videoHints(model: ModelInfo | undefined): VideoHints {
  const v = model?.catalog?.video;
  const sizes = (v?.sizes ?? []).flatMap((s) => {
    const parsed = parseSize(s);
    return parsed ? [videoWireSize(parsed)] : [];
  });
  const durations = (v?.durations ?? []).filter((d) => Number.isInteger(d) && d > 0);
  if (sizes.length || durations.length) {
    const wan = isWanType(model?.id ?? '');
    return {
      sizes,
      durations,
      defaultSize: sizes[0] ?? (wan ? VERIFIED_WAN.size : undefined),
      defaultDuration: durations[0] ?? (wan ? VERIFIED_WAN.duration : undefined),
      source: 'catalog',
    };
  }
  if (model && isWanType(model.id)) {
    return { sizes: [VERIFIED_WAN.size], durations: [VERIFIED_WAN.duration], defaultSize: VERIFIED_WAN.size, defaultDuration: VERIFIED_WAN.duration, source: 'verified' };
  }
  return { sizes: [], durations: [], source: 'none' };
}

/**
 * The API a video model is submitted on. A model the gateway lists with `openai-video` goes to
 * OpenAI's `/v1/videos`, except a Wan-type model: the task route is the one verified for it, and
 * its channel takes only its own `832*480` size notation, which that route carries as it is.
 */
export function videoApiFor(model: Pick<ModelInfo, 'id' | 'endpointTypes'> | undefined): VideoApi {
  return model?.endpointTypes?.includes('openai-video') && !isWanType(model.id) ? 'openai' : 'task';
}

export function isWanType(id: string): boolean {
  return /^wanx?\d/i.test(id) || /(^|[-_/])wan[-_.]?\d/i.test(id);
}


export function validateVideoParams(p: VideoParams): VideoParams {
  if (!p.prompt.trim()) throw new GatewayError('badRequest', l10n.t('Describe the video to generate: the prompt is empty.'));
  const parsed = parseSize(p.size);
  if (!parsed || parsed.width < 1 || parsed.height < 1) {
    throw new GatewayError('badRequest', l10n.t('The video size "{0}" is not a width and a height in pixels, e.g. {1}.', p.size, displaySize(VERIFIED_WAN_SIZE)));
  }
  // The video task endpoint takes the asterisk form, whatever notation the size was written in.
  const size = videoWireSize(parsed);
  if (!Number.isInteger(p.duration) || p.duration < 1 || p.duration > 600) {
    throw new GatewayError('badRequest', l10n.t('The video duration must be a whole number of seconds from 1 to 600; {0} was given.', p.duration));
  }
  if (p.inputReference !== undefined && p.api !== 'openai') {
    throw new GatewayError('badRequest', l10n.t('The model {0} takes no reference image here: only models on OpenAI\'s video API (listed as "openai-video") do.', p.model));
  }
  return { ...p, size };
}

const submitSchema = z.looseObject({
  id: z.optional(z.nullable(z.union([z.string(), z.number()]))),
  task_id: z.optional(z.nullable(z.string())),
  code: z.optional(z.nullable(z.union([z.string(), z.number()]))),
  message: z.optional(z.nullable(z.string())),
  data: z.optional(z.nullable(z.unknown())),
});

/**
 * `POST /v1/video/generations`, or OpenAI's `POST /v1/videos` for `api: 'openai'`. The returned id only means the task was accepted, not that it will succeed.
 * A size or duration the model rejects comes back as an error that names them; nothing is
 * retried, least of all with other parameters.
 */
export async function submitVideo(http: HttpClient, params: VideoParams, signal?: AbortSignal): Promise<string> {
  const p = validateVideoParams(params);
  let text: string;
  let requestId: string | undefined;
  // A reference image that cannot be sent is the user's to fix, not the model's refusal.
  const form = p.api === 'openai' ? await openAIVideoForm(p) : undefined;
  try {
    const response = await http.send({
      method: 'POST',
      ...(form ? { url: http.endpoints.videos, body: form.body } : { url: http.endpoints.videoSubmit, json: { model: p.model, prompt: p.prompt, size: p.size, duration: p.duration } }),
      headers: { accept: 'application/json', ...form?.headers },
      signal,
      idempotent: false,
      model: p.model,
    });
    requestId = response.requestId;
    text = await response.text();
  } catch (err) {
    throw explainSubmitError(err, p);
  }
  const body = parseWith(submitSchema, parseJsonText(text, l10n.t('The video submit answer')), l10n.t('The video submit answer'));
  const inner = body.data && typeof body.data === 'object' ? (body.data as Record<string, unknown>) : {};
  const id = [body.id, body.task_id, inner.task_id, inner.id].find((v) => (typeof v === 'string' && v) || typeof v === 'number');
  if (id === undefined) {
    if (body.code !== undefined && body.code !== null && body.code !== 'success') {
      throw explainSubmitError(errorFromResponse({ status: 400, body: text, requestIdHeader: requestId, model: p.model }), p);
    }
    throw new GatewayError('protocol', l10n.t('The gateway accepted the video request but sent no task id: {0}', text.slice(0, 200)), { requestId });
  }
  return String(id);
}

/**
 * OpenAI's video request: a multipart form with model, prompt, seconds (a string, as OpenAI's API
 * takes it), size in OpenAI's `1280x720` notation and the reference image, streamed from disk.
 */
async function openAIVideoForm(p: VideoParams): Promise<{ body: AsyncIterable<Uint8Array>; headers: Record<string, string> }> {
  const parsed = parseSize(p.size);
  const fields = { model: p.model, prompt: p.prompt, seconds: String(p.duration), ...(parsed ? { size: `${parsed.width}x${parsed.height}` } : {}) };
  let form: MultipartBody;
  try {
    const reference = p.inputReference;
    const file = reference ? { name: 'input_reference', path: reference, contentType: await requireFormat(reference, REFERENCE_FORMATS, l10n.t('the video reference image')) } : undefined;
    form = await multipartFromFile(fields, file);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError('badRequest', l10n.t('The reference image {0} could not be read: {1}', p.inputReference ?? '', err instanceof Error ? err.message : String(err)), { cause: err });
  }
  return { body: form.chunks(), headers: { 'content-type': form.contentType, 'content-length': String(form.length) } };
}

/** The image formats OpenAI's video API takes as a reference. */
const REFERENCE_FORMATS: readonly UploadFormat[] = ['image/png', 'image/jpeg', 'image/webp'];

function explainSubmitError(err: unknown, p: VideoParams): unknown {
  if (!isGatewayError(err) || err.kind !== 'badRequest') return err;
  const said = err.detail ? l10n.t(' The gateway said: {0}', err.detail) : '';
  const sizeWords = /size|resolution|分辨率|尺寸/i.test(err.detail ?? '') || err.code === 'invalid_size';
  const lead = sizeWords
    ? l10n.t('The model {0} does not accept the size {1}.', p.model, displaySizeText(p.size))
    : l10n.t('The model {0} refused the video request (size {1}, {2}).', p.model, displaySizeText(p.size), formatDuration(p.duration * 1000));
  const advice = isWanType(p.model)
    ? l10n.t(' Nothing was retried with other parameters: choose a size and duration this model supports (verified for the Wan-type model: {0}, {1}) and submit again.', displaySize(VERIFIED_WAN_SIZE), formatDuration(VERIFIED_WAN.duration * 1000))
    : l10n.t(' Nothing was retried with other parameters: choose a size and duration this model supports and submit again.');
  return new GatewayError('badRequest', `${lead}${said.endsWith('.') || said.endsWith('。') || !said ? said : `${said}.`}${advice}`, { status: err.status, code: err.code, requestId: err.requestId, detail: err.detail, cause: err });
}

const strish = z.optional(z.nullable(z.union([z.string(), z.number()])));
const taskDataSchema = z.looseObject({
  task_id: strish,
  status: strish,
  progress: strish,
  fail_reason: z.optional(z.nullable(z.string())),
  result_url: z.optional(z.nullable(z.string())),
  url: z.optional(z.nullable(z.string())),
  video_url: z.optional(z.nullable(z.string())),
  error: z.optional(z.nullable(z.unknown())),
  metadata: z.optional(z.nullable(z.unknown())),
  data: z.optional(z.nullable(z.unknown())),
});
const queryEnvelope = z.looseObject({
  code: strish,
  message: z.optional(z.nullable(z.string())),
  data: z.optional(z.nullable(taskDataSchema)),
});
/** OpenAI's video object (`GET /v1/videos/{id}`): lower-case statuses, integer progress, `error: {message, code}`. */
const videoObjectSchema = z.looseObject({
  id: strish,
  object: z.optional(z.nullable(z.string())),
  status: strish,
  progress: strish,
  error: z.optional(z.nullable(z.unknown())),
  metadata: z.optional(z.nullable(z.unknown())),
});
/** The raw upstream body at `data.data`: read leniently, its shape is the provider's. */
const upstreamSchema = z.looseObject({
  output: z.optional(
    z.nullable(
      z.looseObject({
        video_url: z.optional(z.nullable(z.string())),
        task_status: z.optional(z.nullable(z.string())),
        code: z.optional(z.nullable(z.string())),
        message: z.optional(z.nullable(z.string())),
      }),
    ),
  ),
  code: z.optional(z.nullable(z.string())),
  message: z.optional(z.nullable(z.string())),
});

/**
 * Which route a task is queried on: the spec's `GET /v1/video/generations/<id>`, or OpenAI's
 * `GET /v1/videos/<id>` for a gateway that serves only OpenAI's video API there.
 */
export type VideoQueryRoute = 'generations' | 'videos';

/**
 * Queries a task; a GET, so the HTTP client may retry it. A gateway without the spec's query route
 * (HTTP 404: new-api answers a task it does not know with 400 `task_not_exist`, an unknown path with
 * 404) is asked once on OpenAI's route instead; the answer says which route worked, so the task
 * keeps using it. Nothing goes back the other way.
 */
export async function queryVideo(http: HttpClient, taskId: string, signal?: AbortSignal, route: VideoQueryRoute = 'generations'): Promise<VideoStatus> {
  try {
    return await queryOn(http, taskId, route, signal);
  } catch (err) {
    if (route !== 'generations' || !isGatewayError(err) || err.status !== 404) throw err;
    return queryOn(http, taskId, 'videos', signal);
  }
}

async function queryOn(http: HttpClient, taskId: string, route: VideoQueryRoute, signal?: AbortSignal): Promise<VideoStatus> {
  const url = route === 'videos' ? http.endpoints.videoObject(taskId) : http.endpoints.videoTask(taskId);
  const response = await http.send({ method: 'GET', url, headers: { accept: 'application/json' }, signal });
  const text = await response.text();
  const status = parseVideoStatus(parseJsonText(text, l10n.t('The video task answer')), text, response.requestId);
  // A finished task with no link: the gateway serves the video itself, to the key's owner.
  const videoUrl = status.videoUrl ?? (status.status === 'SUCCESS' && status.servedByGateway ? http.endpoints.videoContent(taskId) : undefined);
  return { ...status, ...(videoUrl ? { videoUrl } : {}), ...(route === 'videos' ? { route } : {}) };
}

/**
 * Reads a task query in any of the shapes gateways send: new-api's envelope `{code, data: TaskDto}`
 * (upper-case statuses, `"30%"`, `result_url`, `fail_reason`, the upstream body at `data.data`), the
 * same envelope around the short `{task_id, status: queued|processing|succeeded|failed, url, format,
 * metadata, error}`, and OpenAI's video object `{id, object: "video", status, progress: 30, error,
 * metadata: {url}}`.
 */
export function parseVideoStatus(json: unknown, text = JSON.stringify(json), requestId?: string): VideoStatus {
  const okError = errorInOkBody(json, { body: text, requestIdHeader: requestId });
  if (okError) throw okError;
  if (isVideoObject(json)) return parseVideoObject(json);
  const body = parseWith(queryEnvelope, json, l10n.t('The video task answer'));
  const code = body.code === undefined || body.code === null ? undefined : String(body.code);
  if (!body.data) {
    if (code && code !== 'success') throw errorFromResponse({ status: 400, body: text, requestIdHeader: requestId });
    throw new GatewayError('protocol', l10n.t('The video task answer has no "data": {0}', text.slice(0, 200)), { requestId });
  }
  const d = body.data;
  const upstream = z.safeParse(upstreamSchema, d.data);
  const output = upstream.success ? upstream.data.output : undefined;
  const rawStatus = d.status === undefined || d.status === null ? '' : String(d.status);
  const status = normaliseStatus(rawStatus);
  const failReason = d.fail_reason && !/^https?:\/\//i.test(d.fail_reason) ? d.fail_reason : undefined;
  const upstreamReason = [output?.code, output?.message].filter(Boolean).join(': ') || (upstream.success ? upstream.data.message : undefined);
  const errorMessage = messageOf(d.error);
  // DashScope's task answer has data.data.output.video_url; result_url (and, in older gateways, fail_reason) carry the same link, as do `url` and `metadata.url` in the short shape.
  const link = firstLink([output?.video_url, d.result_url, d.video_url, d.url, linkOf(d.metadata), d.fail_reason]);
  const progress = parseProgress(d.progress);
  return {
    status,
    rawStatus,
    ...(progress !== undefined ? { progress } : {}),
    ...(failReason || upstreamReason || errorMessage ? { failReason: failReason || upstreamReason || errorMessage } : {}),
    ...(link ? { videoUrl: link } : {}),
  };
}

function isVideoObject(json: unknown): boolean {
  if (typeof json !== 'object' || json === null) return false;
  const o = json as Record<string, unknown>;
  return o.object === 'video' || (o.data === undefined && o.code === undefined && 'status' in o && 'id' in o);
}

function parseVideoObject(json: unknown): VideoStatus {
  const v = parseWith(videoObjectSchema, json, l10n.t('The video object'));
  const rawStatus = v.status === undefined || v.status === null ? '' : String(v.status);
  const status = normaliseStatus(rawStatus);
  const progress = parseProgress(v.progress);
  const reason = messageOf(v.error);
  const code = typeof v.error === 'object' && v.error !== null ? (v.error as { code?: unknown }).code : undefined;
  const failReason = reason ?? (typeof code === 'string' && code ? code : undefined);
  const link = firstLink([linkOf(v.metadata)]);
  return {
    status,
    rawStatus,
    ...(progress !== undefined ? { progress } : {}),
    ...(failReason && status === 'FAILURE' ? { failReason } : {}),
    ...(link ? { videoUrl: link } : {}),
    // OpenAI's video object gives no link: the bytes are at the gateway's `/v1/videos/<id>/content`.
    servedByGateway: true,
  };
}

function messageOf(error: unknown): string | undefined {
  if (typeof error === 'string') return error.trim() || undefined;
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message.trim() ? message : undefined;
}

function linkOf(metadata: unknown): string | undefined {
  const url = typeof metadata === 'object' && metadata !== null ? (metadata as { url?: unknown }).url : undefined;
  return typeof url === 'string' ? url : undefined;
}

function firstLink(candidates: Array<string | null | undefined>): string | undefined {
  return candidates.find((u): u is string => typeof u === 'string' && /^https?:\/\//i.test(u));
}

/** Upper-case task statuses as they are; the lower-case words of other gateway variants mapped onto them. */
export function normaliseStatus(raw: string): RemoteStatus {
  const s = raw.trim();
  if ((REMOTE_STATUSES as readonly string[]).includes(s)) return s as RemoteStatus;
  switch (s.toLowerCase()) {
    case 'succeeded':
    case 'success':
    case 'completed':
      return 'SUCCESS';
    case 'failed':
    case 'failure':
    case 'canceled':
    case 'cancelled':
      return 'FAILURE';
    case 'queued':
    case 'pending':
      return 'QUEUED';
    case 'in_progress':
    case 'processing':
    case 'running':
      return 'IN_PROGRESS';
    case 'submitted':
      return 'SUBMITTED';
    case 'not_start':
      return 'NOT_START';
    default:
      return 'UNKNOWN';
  }
}

/** `"30%"` → 30; numbers pass; anything else is unknown. */
export function parseProgress(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number.parseFloat(value.replace('%', '')) : NaN;
  return Number.isFinite(n) ? Math.max(0, Math.min(100, n)) : undefined;
}

/**
 * The address to download a task's video from. new-api writes the link to its own content route
 * with the server address its operator configured (often left at a local default), so a link to
 * `/v1/videos/<this task>/content` on another origin is fetched from the configured gateway
 * instead: the same route for the same task, and the key never leaves for that other origin.
 */
export function videoDownloadUrl(http: HttpClient, taskId: string | undefined, link: string): string {
  if (!taskId) return link;
  try {
    const u = new URL(link);
    const own = `/v1/videos/${encodeURIComponent(taskId)}/content`;
    if (u.origin !== http.endpoints.origin && (u.pathname === own || u.pathname.endsWith(own))) return http.endpoints.videoContent(taskId);
  } catch {
    // Not an address: downloadVideo explains that.
  }
  return link;
}

export interface DownloadOptions {
  /** Folder the file goes in (created if missing). */
  dir: string;
  /** File name without extension. */
  baseName: string;
  signal?: AbortSignal;
  onBytes?: (received: number, total?: number) => void;
  /** What the download belongs to (the task's local id): names its temporary file, so leftovers can be found. */
  owner?: string;
}

/**
 * Downloads a result link at once (it expires), streaming to disk, and keeps the file only when it
 * is a playable MP4. Links on storage hosts get no key. The gateway's own content route
 * (`<base>/v1/videos/<id>/content`, used when a provider gives no link) needs the key and gets it.
 */
export async function downloadVideo(http: HttpClient, url: string, opts: DownloadOptions): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GatewayError('protocol', l10n.t('The video link is not a valid address: "{0}".', url.slice(0, 120)));
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new GatewayError('protocol', l10n.t('The video link uses "{0}", which is not downloaded.', parsed.protocol));
  const gatewayRoute = parsed.origin === http.endpoints.origin && (parsed.pathname.startsWith('/v1/') || url.startsWith(`${http.endpoints.base}/v1/`));
  const response = await http.getLarge({ url, anonymous: !gatewayRoute, signal: opts.signal, acceptStatus: ERROR_STATUSES, headers: { accept: 'video/mp4,video/*;q=0.9,*/*;q=0.5' } });
  if (response.status >= 400) {
    const head = await readHead(response.chunks, 4096);
    response.abort();
    const expired = response.status === 403 || response.status === 404 || response.status === 410 || /expire/i.test(head.toString('utf8'));
    throw new GatewayError(
      response.status >= 500 ? 'server' : 'badRequest',
      expired
        ? l10n.t(
            'The video could not be downloaded: {0} answered HTTP {1} with {2}. The result link has most likely expired (it is valid only for a limited time). The task itself finished; it was not resubmitted.',
            parsed.host,
            response.status,
            describeBytes(head),
          )
        : l10n.t('The video could not be downloaded: {0} answered HTTP {1} with {2}. The task itself finished; it was not resubmitted.', parsed.host, response.status, describeBytes(head)),
      { status: response.status },
    );
  }
  const total = Number(response.headers['content-length']) || undefined;
  // The body is closed however this ends: a folder that cannot be written fails before it is read.
  try {
    return await streamToFileUnique(
      opts.dir,
      opts.baseName,
      'mp4',
      response.chunks,
      async (tmp) => {
        const check = await checkMp4File(tmp);
        if (!check.ok) throw new GatewayError('protocol', l10n.t('The downloaded video from {0} is not playable: {1}. It was not kept.', redactUrl(url), check.reason ?? ''));
        if (total !== undefined && check.size !== total) {
          throw new GatewayError('protocol', l10n.t('The downloaded video is incomplete: {0} of {1} bytes arrived. It was not kept.', formatNumber(check.size), formatNumber(total)));
        }
      },
      (received) => opts.onBytes?.(received, total),
      opts.owner,
    );
  } finally {
    response.abort();
  }
}

async function readHead(chunks: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of chunks) {
      parts.push(Buffer.from(chunk));
      size += chunk.length;
      if (size >= limit) break;
    }
  } catch {
    // What arrived before the error is enough to describe the answer.
  }
  return Buffer.concat(parts).subarray(0, limit);
}
