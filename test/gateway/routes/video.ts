import { randomUUID } from 'node:crypto';
import { charge, preConsume } from '../billing';
import { streamFile } from '../cdn';
import { notFoundError } from '../errorBodies';
import { boundaryOf, parseMultipart, type FormPart } from '../multipart';
import { mediaState } from '../mediaState';
import { parseMediaMarkers } from '../mediaScenarios';
import { randomAlphanumeric } from '../requestId';
import type { GatewayContext, Route } from '../route';
import type { MediaRecord } from '../types';
import { isRecord } from '../values';
import { modelKind, QUOTA_PER_USD } from '../world';
import { unixSeconds } from './echo';

/**
 * new-api's generic video task routes (wire-formats §6) in front of the Ali (DashScope Wan) task
 * adaptor: POST /v1/video/generations answers the OpenAI-video object of §6.4, and
 * GET /v1/video/generations/{task_id} the `{code:"success",message:"",data:TaskDto}` envelope of §6.5
 * (see videoTasks.ts for statuses, timing and refunds). Errors raised inside the task relay use the
 * task envelope `{code,message,data:null}` without a request-id suffix (§6.7); auth and Distribute
 * errors keep the middleware shape. The video router has TokenAuth and Distribute only (no
 * ModelRequestRateLimit), and a GET selects no channel.
 */

/** DashScope's resolution tiers and their exact sizes (§6.3). */
export const VIDEO_SIZE_TIERS: Readonly<Record<string, readonly string[]>> = {
  '480P': ['832*480', '480*832', '624*624'],
  '720P': ['1280*720', '720*1280', '960*960', '1088*832', '832*1088'],
  '1080P': ['1920*1080', '1080*1920', '1440*1440', '1632*1248', '1248*1632'],
};

interface VideoRules {
  /** Tier → new-api's `resolution-<tier>` billing ratio; a tier missing here is refused. */
  tiers: Record<string, number>;
  durations: number[];
}

/**
 * Per-model rules of the double. wan2.5-t2v-preview: the spec verified 832*480 / 5 s and says this
 * model rejects 1280*720, so the double refuses the whole 720P tier for it and accepts 480P and
 * 1080P (DashScope's other tiers for Wan 2.5) with new-api's Wan 2.5 ratios (480P 1, 1080P 1/0.3);
 * durations 5 and 10 as DashScope documents for Wan 2.5. A video model the double has no rules for
 * accepts every tier at ratio 1 and 1–10 s.
 */
const VIDEO_RULES: Record<string, VideoRules> = {
  'wan2.5-t2v-preview': { tiers: { '480P': 1, '1080P': 1 / 0.3 }, durations: [5, 10] },
};
const ANY_MODEL: VideoRules = {
  tiers: { '480P': 1, '720P': 1, '1080P': 1 },
  durations: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
};

function tierOf(size: string): string | undefined {
  return Object.keys(VIDEO_SIZE_TIERS).find((tier) => VIDEO_SIZE_TIERS[tier]?.includes(size));
}

async function submitVideo(ctx: GatewayContext): Promise<void> {
  const parsed = ctx.http.json();
  return submitTask(ctx, parsed.ok && isRecord(parsed.value) ? parsed.value : {}, 'task');
}

/**
 * `POST /v1/videos`, OpenAI's video API as new-api takes it: a multipart form with model, prompt,
 * seconds (a string), size (`1280x720`; the Ali adaptor's own `1280*720` too) and an optional
 * `input_reference` file, which new-api turns into a data URL for the upstream. The answer is the
 * OpenAI video object; the task is then the same as one submitted on the generic route.
 */
async function submitVideoForm(ctx: GatewayContext): Promise<void> {
  const boundary = boundaryOf(ctx.http.header('content-type'));
  let parts: FormPart[] = [];
  if (boundary) {
    try {
      parts = parseMultipart(ctx.http.body, boundary);
    } catch (err) {
      return ctx.relayError(400, 'invalid_request', `malformed multipart body: ${(err as Error).message}`);
    }
  } else {
    const parsed = ctx.http.json();
    return submitTask(ctx, parsed.ok && isRecord(parsed.value) ? parsed.value : {}, 'openai');
  }
  const field = (name: string) => parts.find((p) => p.name === name && p.filename === undefined)?.data.toString('utf8');
  const size = field('size');
  const body: Record<string, unknown> = {
    model: field('model'),
    prompt: field('prompt'),
    seconds: field('seconds'),
    ...(size !== undefined ? { size: size.replace(/^(\d+)x(\d+)$/i, '$1*$2') } : {}),
  };
  const reference = parts.find((p) => p.name === 'input_reference' && p.filename !== undefined);
  const inputReference = reference
    ? {
        ...(reference.filename ? { filename: reference.filename } : {}),
        ...(reference.contentType ? { contentType: reference.contentType } : {}),
        bytes: reference.data.length,
      }
    : undefined;
  const form = Object.fromEntries(
    parts.filter((p) => p.filename === undefined).map((p) => [p.name, p.data.toString('utf8')]),
  );
  return submitTask(ctx, body, 'openai', { form, ...(inputReference ? { inputReference } : {}) });
}

async function submitTask(
  ctx: GatewayContext,
  body: Record<string, unknown>,
  answer: 'task' | 'openai',
  logged: Pick<MediaRecord, 'form' | 'inputReference'> = {},
): Promise<void> {
  const model = ctx.model;
  const record: MediaRecord = { kind: 'videoSubmit', model: model.id, markers: [], chargedQuota: 0, ...logged };
  ctx.http.entry.media = record;

  if (modelKind(model) !== 'video') {
    // The task relay finds no video adaptor for the model's channel (wording the double's own).
    return ctx.relayError(400, 'invalid_request', `model ${model.id} does not support video generation`);
  }
  // TaskSubmitReq: duration is an int or a numeric string, size a string (§6.2).
  const rawDuration = body.duration;
  let duration = 0;
  if (typeof rawDuration === 'number' && Number.isInteger(rawDuration)) duration = rawDuration;
  else if (typeof rawDuration === 'string' && /^\s*-?\d+\s*$/.test(rawDuration)) duration = Number(rawDuration);
  else if (rawDuration !== undefined && rawDuration !== null) {
    return ctx.relayError(
      400,
      'unmarshal_task_request_failed',
      `json: cannot unmarshal ${JSON.stringify(rawDuration)} into Go struct field TaskSubmitReq.duration of type int`,
    );
  }
  if (duration <= 0 && typeof body.seconds === 'string' && /^\d+$/.test(body.seconds)) duration = Number(body.seconds);
  if (duration <= 0) duration = 5;
  if (body.size !== undefined && body.size !== null && typeof body.size !== 'string') {
    return ctx.relayError(
      400,
      'unmarshal_task_request_failed',
      `json: cannot unmarshal ${JSON.stringify(body.size)} into Go struct field TaskSubmitReq.size of type string`,
    );
  }
  const t2v = model.id.includes('t2v');
  let size = typeof body.size === 'string' ? body.size.trim() : '';
  if (size === '') size = /^wan2\.[25]/.test(model.id) ? '1920*1080' : '1280*720';
  // The Ali adaptor's convertToAliRequest: a t2v model needs an exact `<w>*<h>` size; its error is
  // wrapped as convert_to_ali_request_failed with HTTP 500.
  if (t2v && !size.includes('*')) {
    return ctx.relayError(500, 'convert_to_ali_request_failed', `invalid size: ${size}, example: 1920*1080`);
  }
  // ValidateMultipartDirect.
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  if (prompt.trim() === '') return ctx.relayError(400, 'invalid_request', 'prompt is required');
  const markers = parseMediaMarkers(prompt);
  record.markers = markers.markers;

  const rules = VIDEO_RULES[model.id] ?? ANY_MODEL;
  const tier = tierOf(size) ?? (/^(480|720|1080)p?$/i.test(size) ? `${Number.parseInt(size, 10)}P` : undefined);
  // Pricing (ModelPriceHelperPerCall): a per-call price must be configured; × the other ratios ≠ 1.
  if (model.priceUsd === undefined) {
    return ctx.relayError(
      400,
      'model_price_error',
      `模型 ${model.id} 的价格尚未由管理员配置，暂时无法使用，请联系站点管理员开启该模型；Model ${model.id} has not been priced by the administrator yet. Please contact the site administrator to enable this model.`,
    );
  }
  const ratios: Record<string, number> = { seconds: duration };
  const tierRatio = tier ? rules.tiers[tier] : undefined;
  if (tier && tierRatio !== undefined) ratios[`resolution-${tier}`] = tierRatio;
  const quota = Math.round(
    Object.values(ratios).reduce((q, r) => (r === 1 ? q : q * r), model.priceUsd * QUOTA_PER_USD),
  );
  if (!preConsume(ctx, quota)) return;

  // What the upstream refuses (nothing charged: new-api refunds the pre-consumed quota on a submit error).
  // A size the model does not take: the spec (Errors 7, Limits) says one Wan model rejects 1280*720
  // but shows no body; the double answers with the task envelope and `invalid_size`, a code new-api
  // uses for refused sizes (§6.7), naming the size like the adaptor's `invalid size: …` message.
  // A bare tier (`720P`, allowed for i2v models) renders at the tier's first, landscape size.
  const [w = 0, h = 0] = (size.includes('*') ? size : ((VIDEO_SIZE_TIERS[tier ?? ''] ?? ['0*0'])[0] ?? '0*0'))
    .split('*')
    .map(Number);
  if (!tier || tierRatio === undefined) {
    const allowed = Object.keys(rules.tiers).flatMap((t) => VIDEO_SIZE_TIERS[t] ?? []);
    return ctx.relayError(
      400,
      'invalid_size',
      `invalid size: ${size}, ${model.id} does not support this size; supported sizes: ${allowed.join(', ')}`,
    );
  }
  if (!rules.durations.includes(duration)) {
    return ctx.relayError(
      400,
      'ali_api_error',
      `InvalidParameter: The duration ${duration} is not supported by ${model.id}; supported durations: ${rules.durations.join(', ')}.`,
    );
  }
  if (markers.moderation)
    return ctx.relayError(400, 'ali_api_error', 'DataInspectionFailed: Input data may contain inappropriate content.');

  const state = mediaState(ctx.world);
  const board = state.board;
  charge(ctx.key, quota);
  const now = Date.now();
  const task = board.create({
    taskId: `task_${randomAlphanumeric(32)}`,
    upstreamTaskId: randomUUID(),
    owner: ctx.key,
    userId: board.userIdOf(ctx.key),
    group: ctx.key.spec.group,
    model: model.id,
    markers,
    width: w,
    height: h,
    resolution: tier,
    duration,
    quota,
    submitMs: now,
  });
  record.chargedQuota = quota;
  record.taskId = task.taskId;
  ctx.http.sendJson(
    200,
    answer === 'openai'
      ? state.board.openAIVideo(task, false)
      : {
          id: task.taskId,
          task_id: task.taskId,
          object: 'video',
          model: model.id,
          status: 'queued',
          progress: 0,
          created_at: unixSeconds(),
        },
    // Go marshals the map with sorted keys: {"resolution-480P":1,"seconds":5}.
    {
      'X-New-Api-Other-Ratios': JSON.stringify(
        Object.fromEntries(Object.entries(ratios).sort(([x], [y]) => (x < y ? -1 : 1))),
      ),
    },
  );
}

function queriedTask(ctx: GatewayContext) {
  const taskId = ctx.params.task_id ?? '';
  const task = mediaState(ctx.world).board.find(taskId, ctx.key);
  ctx.http.entry.media = {
    kind: 'videoQuery',
    model: task?.model ?? '',
    markers: task?.markers.markers ?? [],
    chargedQuota: 0,
    taskId,
  };
  return task;
}

/** The link new-api writes to its own content route: `<server address>/v1/videos/{id}/content`. */
function proxyUrl(ctx: GatewayContext, taskId: string): string {
  const state = mediaState(ctx.world);
  const origin = state.serverAddress ?? `http://${ctx.http.header('host') ?? '127.0.0.1'}`;
  return `${origin.replace(/\/+$/, '')}/v1/videos/${encodeURIComponent(taskId)}/content`;
}

function fetchVideo(ctx: GatewayContext): void {
  const state = mediaState(ctx.world);
  // A gateway that offers only OpenAI's video API has no such route: new-api's NoRoute answer.
  if (state.videoQuery === 'openai') return ctx.http.sendJson(404, notFoundError('GET', ctx.http.path));
  const task = queriedTask(ctx);
  if (!task) return ctx.relayError(400, 'task_not_exist', 'task_not_exist');
  const data =
    state.videoQuery === 'short' ? state.board.shortDto(task, proxyUrl(ctx, task.taskId)) : state.board.dto(task);
  ctx.http.sendJson(200, { code: 'success', message: '', data });
}

/** `GET /v1/videos/{id}`: new-api converts the task to OpenAI's video object (RelayTaskFetch on that prefix). */
function fetchVideoObject(ctx: GatewayContext): void {
  const state = mediaState(ctx.world);
  const task = queriedTask(ctx);
  if (!task) return ctx.relayError(400, 'task_not_exist', 'task_not_exist');
  ctx.http.sendJson(200, state.board.openAIVideo(task, state.videoQuery !== 'openai'));
}

/**
 * `GET /v1/videos/{id}/content`: new-api's VideoProxy fetches the finished video server-side and
 * streams it to the task's owner; its errors are `{error:{message,type}}` without a request id.
 */
async function videoContent(ctx: GatewayContext): Promise<void> {
  const state = mediaState(ctx.world);
  const task = queriedTask(ctx);
  const fail = (status: number, type: string, message: string) =>
    ctx.http.sendJson(status, { error: { message, type } });
  if (!task) return fail(404, 'invalid_request_error', 'Task not found');
  if (task.status !== 'SUCCESS')
    return fail(400, 'invalid_request_error', `Task is not completed yet, current status: ${task.status}`);
  const object = task.resultUrl ? state.cdn.objectFor(task.resultUrl) : undefined;
  if (!object) return fail(502, 'server_error', 'Failed to fetch video content');
  await streamFile(
    ctx.http,
    200,
    {
      'Content-Type': object.contentType,
      'Content-Length': object.file.size,
      'Cache-Control': 'public, max-age=86400',
    },
    object.file,
  );
}

export const videoRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/video/generations',
    rateLimit: false,
    distribute: true,
    errorFormat: 'task',
    handle: submitVideo,
  },
  {
    method: 'POST',
    path: '/v1/videos',
    rateLimit: false,
    distribute: true,
    formModel: true,
    errorFormat: 'openai',
    handle: submitVideoForm,
  },
  {
    method: 'GET',
    path: '/v1/video/generations/:task_id',
    rateLimit: false,
    distribute: false,
    errorFormat: 'task',
    handle: fetchVideo,
  },
  {
    method: 'GET',
    path: '/v1/videos/:task_id',
    rateLimit: false,
    distribute: false,
    errorFormat: 'task',
    handle: fetchVideoObject,
  },
  {
    method: 'GET',
    path: '/v1/videos/:task_id/content',
    rateLimit: false,
    distribute: false,
    errorFormat: 'openai',
    handle: videoContent,
  },
];
