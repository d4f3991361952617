import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { errorFromResponse, errorInOkBody } from '../errorBody';
import { GatewayError } from '../errors';
import { parseWith } from '../validate';
import { words } from '../../shared/words';

// What a video task's query says, in the shapes gateways send (video.ts asks, this reads the answer).

/** `data.status` of a task query, in new-api's task envelope (upper case). */
export const REMOTE_STATUSES = [
  'NOT_START',
  'SUBMITTED',
  'QUEUED',
  'IN_PROGRESS',
  'SUCCESS',
  'FAILURE',
  'UNKNOWN',
] as const;

export type RemoteStatus = (typeof REMOTE_STATUSES)[number];

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
    throw new GatewayError('protocol', words('The video task answer has no "data": {0}', text.slice(0, 200)), {
      requestId,
    });
  }
  const d = body.data;
  const upstream = z.safeParse(upstreamSchema, d.data);
  const output = upstream.success ? upstream.data.output : undefined;
  const rawStatus = d.status === undefined || d.status === null ? '' : String(d.status);
  const status = normaliseStatus(rawStatus);
  const failReason = d.fail_reason && !/^https?:\/\//i.test(d.fail_reason) ? d.fail_reason : undefined;
  const upstreamReason =
    [output?.code, output?.message].filter(Boolean).join(': ') ||
    (upstream.success ? upstream.data.message : undefined);
  const errorMessage = messageOf(d.error);
  // DashScope's task answer has data.data.output.video_url; result_url (and, in older gateways, fail_reason)
  // carry the same link, as do `url` and `metadata.url` in the short shape.
  const link = firstLink([output?.video_url, d.result_url, d.video_url, d.url, linkOf(d.metadata), d.fail_reason]);
  const progress = parseProgress(d.progress);
  return {
    status,
    rawStatus,
    ...(progress !== undefined ? { progress } : {}),
    ...(failReason || upstreamReason || errorMessage
      ? { failReason: failReason || upstreamReason || errorMessage }
      : {}),
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
  const n =
    typeof value === 'number' ? value : typeof value === 'string' ? Number.parseFloat(value.replace('%', '')) : NaN;
  return Number.isFinite(n) ? Math.max(0, Math.min(100, n)) : undefined;
}
