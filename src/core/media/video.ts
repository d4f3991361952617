import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { errorFromResponse } from '../errorBody';
import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import type { ModelInfo } from '../models/types';
import { parseJsonText, parseWith } from '../validate';
import { requireFormat, type UploadFormat } from '../tools/fileFormat';
import { multipartFromFile, type MultipartBody } from '../tools/multipart';
import { openFile, type OpenedFile } from '../tools/openedFile';
import { formatDuration } from '../../shared/format';
import { displaySize, displaySizeText, parseSize, videoWireSize } from '../../shared/mediaSize';
import { parseVideoStatus, type VideoStatus } from './videoStatus';
import { words } from '../../shared/words';

// The task's status and its download live beside this file; callers import them from here, with the submission.

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
    return {
      sizes: [VERIFIED_WAN.size],
      durations: [VERIFIED_WAN.duration],
      defaultSize: VERIFIED_WAN.size,
      defaultDuration: VERIFIED_WAN.duration,
      source: 'verified',
    };
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
  if (!p.prompt.trim())
    throw new GatewayError('badRequest', words('Describe the video to generate: the prompt is empty.'));
  const parsed = parseSize(p.size);
  if (!parsed || parsed.width < 1 || parsed.height < 1) {
    throw new GatewayError(
      'badRequest',
      words(
        'The video size "{0}" is not a width and a height in pixels, e.g. {1}.',
        p.size,
        displaySize(VERIFIED_WAN_SIZE),
      ),
    );
  }
  // The video task endpoint takes the asterisk form, whatever notation the size was written in.
  const size = videoWireSize(parsed);
  if (!Number.isInteger(p.duration) || p.duration < 1 || p.duration > 600) {
    throw new GatewayError(
      'badRequest',
      words('The video duration must be a whole number of seconds from 1 to 600; {0} was given.', p.duration),
    );
  }
  if (p.inputReference !== undefined && p.api !== 'openai') {
    throw new GatewayError(
      'badRequest',
      words(
        'The model {0} takes no reference image here: only models on OpenAI\'s video API (listed as "openai-video") do.',
        p.model,
      ),
    );
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
export async function submitVideo(
  http: HttpClient,
  key: string | undefined,
  params: VideoParams,
  signal?: AbortSignal,
): Promise<string> {
  const p = validateVideoParams(params);
  let text: string;
  let requestId: string | undefined;
  // A reference image that cannot be sent is the user's to fix, not the model's refusal. It is
  // opened once: its format is checked and its bytes sent through the same handle.
  const reference = p.api === 'openai' && p.inputReference !== undefined ? await openFile(p.inputReference) : undefined;
  const form = p.api === 'openai' ? await openAIVideoForm(p, reference).catch(closing(reference)) : undefined;
  try {
    const response = await http.send({
      method: 'POST',
      ...(form
        ? { url: http.endpoints.videos, body: form.body }
        : {
            url: http.endpoints.videoSubmit,
            json: { model: p.model, prompt: p.prompt, size: p.size, duration: p.duration },
          }),
      headers: { accept: 'application/json', ...form?.headers },
      signal,
      idempotent: false,
      model: p.model,
      key,
    });
    requestId = response.requestId;
    text = await response.text();
  } catch (err) {
    throw explainSubmitError(err, p);
  } finally {
    await reference?.close();
  }
  const body = parseWith(
    submitSchema,
    parseJsonText(text, l10n.t('The video submit answer')),
    l10n.t('The video submit answer'),
  );
  const inner = body.data && typeof body.data === 'object' ? (body.data as Record<string, unknown>) : {};
  const id = [body.id, body.task_id, inner.task_id, inner.id].find(
    (v) => (typeof v === 'string' && v) || typeof v === 'number',
  );
  if (id === undefined) {
    if (body.code !== undefined && body.code !== null && body.code !== 'success') {
      throw explainSubmitError(
        errorFromResponse({ status: 400, body: text, requestIdHeader: requestId, model: p.model }),
        p,
      );
    }
    throw new GatewayError(
      'protocol',
      words('The gateway accepted the video request but sent no task id: {0}', text.slice(0, 200)),
      { requestId },
    );
  }
  return String(id);
}

/**
 * OpenAI's video request: a multipart form with model, prompt, seconds (a string, as OpenAI's API
 * takes it), size in OpenAI's `1280x720` notation and the reference image, streamed from disk.
 */
async function openAIVideoForm(
  p: VideoParams,
  reference: OpenedFile | undefined,
): Promise<{ body: AsyncIterable<Uint8Array>; headers: Record<string, string> }> {
  const parsed = parseSize(p.size);
  const fields = {
    model: p.model,
    prompt: p.prompt,
    seconds: String(p.duration),
    ...(parsed ? { size: `${parsed.width}x${parsed.height}` } : {}),
  };
  let form: MultipartBody;
  try {
    const file = reference
      ? {
          name: 'input_reference',
          file: reference,
          contentType: await requireFormat(reference, REFERENCE_FORMATS, l10n.t('the video reference image')),
        }
      : undefined;
    form = multipartFromFile(fields, file);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError(
      'badRequest',
      words(
        'The reference image {0} could not be read: {1}',
        p.inputReference ?? '',
        err instanceof Error ? err.message : String(err),
      ),
      { cause: err },
    );
  }
  return { body: form.chunks(), headers: { 'content-type': form.contentType, 'content-length': String(form.length) } };
}

/** Closes `file` and passes the error on: for a file opened before a step that failed. */
function closing(file: OpenedFile | undefined): (err: unknown) => Promise<never> {
  return async (err) => {
    await file?.close();
    throw err;
  };
}

/** The image formats OpenAI's video API takes as a reference. */
const REFERENCE_FORMATS: readonly UploadFormat[] = ['image/png', 'image/jpeg', 'image/webp'];

function explainSubmitError(err: unknown, p: VideoParams): unknown {
  if (!isGatewayError(err) || err.kind !== 'badRequest') return err;
  const said = err.detail ? l10n.t(' The gateway said: {0}', err.detail) : '';
  const sizeWords = /size|resolution|分辨率|尺寸/i.test(err.detail ?? '') || err.code === 'invalid_size';
  const lead = sizeWords
    ? l10n.t('The model {0} does not accept the size {1}.', p.model, displaySizeText(p.size))
    : l10n.t(
        'The model {0} refused the video request (size {1}, {2}).',
        p.model,
        displaySizeText(p.size),
        formatDuration(p.duration * 1000),
      );
  const advice = isWanType(p.model)
    ? l10n.t(
        ' Nothing was retried with other parameters: choose a size and duration this model supports (verified for the Wan-type model: {0}, {1}) and submit again.',
        displaySize(VERIFIED_WAN_SIZE),
        formatDuration(VERIFIED_WAN.duration * 1000),
      )
    : l10n.t(
        ' Nothing was retried with other parameters: choose a size and duration this model supports and submit again.',
      );
  return new GatewayError(
    'badRequest',
    `${lead}${said.endsWith('.') || said.endsWith('。') || !said ? said : `${said}.`}${advice}`,
    { status: err.status, code: err.code, requestId: err.requestId, detail: err.detail, cause: err },
  );
}

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
export async function queryVideo(
  http: HttpClient,
  key: string | undefined,
  taskId: string,
  signal?: AbortSignal,
  route: VideoQueryRoute = 'generations',
): Promise<VideoStatus> {
  try {
    return await queryOn(http, key, taskId, route, signal);
  } catch (err) {
    if (route !== 'generations' || !isGatewayError(err) || err.status !== 404) throw err;
    return queryOn(http, key, taskId, 'videos', signal);
  }
}

async function queryOn(
  http: HttpClient,
  key: string | undefined,
  taskId: string,
  route: VideoQueryRoute,
  signal?: AbortSignal,
): Promise<VideoStatus> {
  const url = route === 'videos' ? http.endpoints.videoObject(taskId) : http.endpoints.videoTask(taskId);
  const response = await http.send({ method: 'GET', url, headers: { accept: 'application/json' }, signal, key });
  const text = await response.text();
  const status = parseVideoStatus(parseJsonText(text, l10n.t('The video task answer')), text, response.requestId);
  // A finished task with no link: the gateway serves the video itself, to the key's owner.
  const videoUrl =
    status.videoUrl ??
    (status.status === 'SUCCESS' && status.servedByGateway ? http.endpoints.videoContent(taskId) : undefined);
  return { ...status, ...(videoUrl ? { videoUrl } : {}), ...(route === 'videos' ? { route } : {}) };
}
