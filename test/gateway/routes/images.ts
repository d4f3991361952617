import { randomUUID } from 'node:crypto';
import { charge, preConsume, textQuota } from '../billing';
import { relayError, withRequestId } from '../errorBodies';
import { drawImage, IMAGE_CONTENT_TYPES, type ImageFormat } from '../imageCodecs';
import { mediaState } from '../mediaState';
import { parseMediaMarkers, type MediaMarkers } from '../mediaScenarios';
import type { GatewayContext, Route } from '../route';
import type { MediaRecord, ModelSpec } from '../types';
import { isRecord } from '../values';
import { RESULT_LINK_VALIDITY_MS } from '../videoTasks';
import { modelKind, usdToQuota } from '../world';
import { estimateTokens, unixSeconds } from './echo';

/**
 * POST /v1/images/generations (wire-formats §4). new-api validates a little itself
 * (`relay/helper/valid_request.go`: `×` in the size; HTTP 500 invalid_request, as NewError does),
 * then the channel answers:
 *
 * - OpenAI channel (gpt-image-1): the upstream body relayed as is: `data[].b64_json` always (gpt-image
 *   models return base64 whatever `response_format` says), plus `background`, `output_format`,
 *   `quality`, `size` and token `usage`. Sizes 1024x1024, 1536x1024, 1024x1536 or auto; n ≤ 10;
 *   `output_format` png (default), jpeg or webp. Unsupported values get OpenAI's 400 `invalid_value`
 *   (relayed, so without the request-id suffix). Billed by image output tokens (OpenAI's table by
 *   quality and size) × the model ratio.
 * - Ali channel (wanx2.1-t2i-turbo, a converted channel): new-api builds its own response,
 *   `{data:[{url,b64_json,revised_prompt}], created, metadata:<DashScope task body>}` with all three
 *   keys present; the url is a signed DashScope-style link on the CDN origin (valid 24 h), unless
 *   `response_format` is `b64_json`, when new-api downloads it and sends base64 with url "".
 *   DashScope takes `w*h` with each side in [512, 1440] (new-api turns `x` into `*`), n 1–4, PNG only.
 *   Errors are DashScope's relayed as `{error:{message,type:"ali_error",param:"",code}}`. Billed at
 *   the model's per-image price × n.
 *
 * Pixels: see imageCodecs.ts (files are exactly the requested size; drawn from prompt + "#" + index).
 */

const OPENAI_SIZES = ['1024x1024', '1536x1024', '1024x1536'];
const OPENAI_QUALITIES = ['low', 'medium', 'high', 'auto'];
const OPENAI_FORMATS: ImageFormat[] = ['png', 'jpeg', 'webp'];
/** gpt-image-1 output tokens per image by quality, for 1024², 1024×1536 and 1536×1024 (OpenAI's pricing table). */
const GPT_IMAGE_TOKENS: Record<string, Record<string, number>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
};
const ALI_SIDE = { min: 512, max: 1440 };
const ALI_MAX_N = 4;

interface Planned {
  width: number;
  height: number;
  n: number;
  format: ImageFormat;
  quota: number;
  respond: (images: Buffer[]) => void;
}

async function generateImages(ctx: GatewayContext): Promise<void> {
  const parsed = ctx.http.json();
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  const model = ctx.model;
  const record: MediaRecord = { kind: 'image', model: model.id, markers: [], chargedQuota: 0 };
  ctx.http.entry.media = record;

  if (modelKind(model) !== 'image') {
    // What OpenAI's Images API answers for a model it does not generate images with (relayed).
    return ctx.http.sendJson(
      400,
      relayError(
        `Invalid value: '${model.id}'. Supported values are: 'gpt-image-1', 'gpt-image-1-mini', 'gpt-image-1.5', 'dall-e-2', and 'dall-e-3'.`,
        'invalid_value',
        undefined,
        'invalid_request_error',
        'model',
      ),
    );
  }
  // new-api's own checks (GetAndValidOpenAIImageRequest), HTTP 500 with the request-id suffix.
  const size = body.size;
  if (typeof size === 'string' && size.includes('×')) {
    return ctx.relayError(
      500,
      'invalid_request',
      "size an unexpected error occurred in the parameter, please use 'x' instead of the multiplication sign '×'",
    );
  }
  const rawN = body.n;
  if (rawN !== undefined && rawN !== null && !(typeof rawN === 'number' && Number.isInteger(rawN) && rawN >= 0)) {
    return ctx.relayError(
      500,
      'invalid_request',
      `json: cannot unmarshal ${JSON.stringify(rawN)} into Go struct field ImageRequest.n of type uint`,
    );
  }
  const n = typeof rawN === 'number' && rawN > 0 ? rawN : 1;
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  const markers = parseMediaMarkers(prompt);
  record.markers = markers.markers;

  const plan =
    model.owned_by === 'ali' ? planAli(ctx, model, body, n, markers) : planOpenAI(ctx, model, body, n, markers);
  if (!plan) return;
  if (!preConsume(ctx, plan.quota)) return;
  if (markers.slowMs > 0 && !(await mediaState(ctx.world).sleep(markers.slowMs, ctx.http))) return;

  const images = Array.from({ length: plan.n }, (_, i) =>
    drawImage(`${markers.prompt}#${i}`, plan.width, plan.height, plan.format),
  );
  charge(ctx.key, plan.quota);
  record.chargedQuota = plan.quota;
  record.images = images.length;
  plan.respond(images);
}

function planOpenAI(
  ctx: GatewayContext,
  model: ModelSpec,
  body: Record<string, unknown>,
  n: number,
  markers: MediaMarkers,
): Planned | undefined {
  const invalid = (param: string, value: unknown, supported: string[]) => {
    const list = supported.map((s) => `'${s}'`);
    const text = list.length > 1 ? `${list.slice(0, -1).join(', ')}, and ${list.at(-1)}` : (list[0] ?? '');
    ctx.http.sendJson(
      400,
      relayError(
        `Invalid value: '${String(value)}'. Supported values are: ${text}.`,
        'invalid_value',
        undefined,
        'invalid_request_error',
        param,
      ),
    );
    return undefined;
  };
  if (markers.prompt === '' && markers.markers.length === 0) {
    ctx.http.sendJson(
      400,
      relayError(
        "Missing required parameter: 'prompt'.",
        'missing_required_parameter',
        undefined,
        'invalid_request_error',
        'prompt',
      ),
    );
    return undefined;
  }
  const size = typeof body.size === 'string' && body.size !== '' ? body.size : 'auto';
  if (size !== 'auto' && !OPENAI_SIZES.includes(size)) return invalid('size', size, [...OPENAI_SIZES, 'auto']);
  if (n > 10) {
    ctx.http.sendJson(
      400,
      relayError(
        `Invalid 'n': integer above maximum value. Expected a value <= 10, but got ${n} instead.`,
        'integer_above_max_value',
        undefined,
        'invalid_request_error',
        'n',
      ),
    );
    return undefined;
  }
  const quality = typeof body.quality === 'string' && body.quality !== '' ? body.quality : 'auto';
  if (!OPENAI_QUALITIES.includes(quality)) return invalid('quality', quality, OPENAI_QUALITIES);
  const format = typeof body.output_format === 'string' && body.output_format !== '' ? body.output_format : 'png';
  if (!OPENAI_FORMATS.includes(format as ImageFormat)) return invalid('output_format', format, OPENAI_FORMATS);
  if (markers.moderation) {
    // Observed through a new-api gateway (wire-formats §4.3), including the appended request id.
    const message =
      'Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID ' +
      `${randomUUID()}. safety_violations=[violence].`;
    ctx.http.sendJson(
      400,
      relayError(
        withRequestId(message, ctx.http.requestId),
        'moderation_blocked',
        undefined,
        'image_generation_user_error',
      ),
    );
    return undefined;
  }
  const actualSize = size === 'auto' ? '1024x1024' : size;
  const actualQuality = quality === 'auto' ? 'medium' : quality;
  const [width = 1024, height = 1024] = actualSize.split('x').map(Number);
  const promptTokens = estimateTokens(markers.prompt);
  const outputTokens = (GPT_IMAGE_TOKENS[actualQuality]?.[actualSize] ?? 1056) * n;
  return {
    width,
    height,
    n,
    format: format as ImageFormat,
    quota: textQuota(model, promptTokens, outputTokens),
    respond: (images) =>
      ctx.http.sendJson(200, {
        created: unixSeconds(),
        data: images.map((img) => ({ b64_json: img.toString('base64') })),
        background: 'opaque',
        output_format: format,
        quality: actualQuality,
        size: actualSize,
        usage: {
          input_tokens: promptTokens,
          input_tokens_details: { image_tokens: 0, text_tokens: promptTokens },
          output_tokens: outputTokens,
          total_tokens: promptTokens + outputTokens,
        },
      }),
  };
}

function planAli(
  ctx: GatewayContext,
  model: ModelSpec,
  body: Record<string, unknown>,
  n: number,
  markers: MediaMarkers,
): Planned | undefined {
  // DashScope's errors, relayed by new-api's Ali adaptor with the upstream status (wording of the
  // messages modelled on DashScope's InvalidParameter texts; exact strings UNCONFIRMED).
  const aliError = (code: string, message: string) => {
    ctx.http.sendJson(400, relayError(message, code, undefined, 'ali_error'));
    return undefined;
  };
  if (markers.prompt === '' && markers.markers.length === 0)
    return aliError('InvalidParameter', 'Field required: input.prompt');
  const size = typeof body.size === 'string' && body.size !== '' ? body.size.replace(/x/g, '*') : '1024*1024';
  const m = /^(\d+)\*(\d+)$/.exec(size);
  const width = Number(m?.[1]);
  const height = Number(m?.[2]);
  const inRange = (v: number) => v >= ALI_SIDE.min && v <= ALI_SIDE.max;
  if (!m || !inRange(width) || !inRange(height)) {
    return aliError(
      'InvalidParameter',
      `The size ${size} is invalid: width and height must be between ${ALI_SIDE.min} and ${ALI_SIDE.max} pixels, e.g. 1024*1024.`,
    );
  }
  if (n > ALI_MAX_N)
    return aliError('InvalidParameter', `The n ${n} is invalid: it must be between 1 and ${ALI_MAX_N}.`);
  if (markers.moderation) return aliError('DataInspectionFailed', 'Input data may contain inappropriate content.');

  const asBase64 = body.response_format === 'b64_json';
  return {
    width,
    height,
    n,
    format: 'png',
    quota: usdToQuota(model.priceUsd ?? 0.02) * n,
    respond: (images) => {
      const state = mediaState(ctx.world);
      const now = Date.now();
      const urls = images.map((img) => {
        const path = `/images/${randomUUID().replace(/-/g, '')}.png`;
        return state.cdn.put({
          path,
          contentType: IMAGE_CONTENT_TYPES.png,
          expiresAtMs: now + (markers.expireMs ?? RESULT_LINK_VALIDITY_MS),
          variant: 'ok',
          build: () => ({ size: img.length, segments: [img] }),
        });
      });
      const taskId = randomUUID();
      const metadata = {
        request_id: randomUUID(),
        output: {
          task_id: taskId,
          task_status: 'SUCCEEDED',
          results: urls.map((url) => ({
            orig_prompt: markers.prompt,
            actual_prompt: `${markers.prompt}, highly detailed`,
            url,
          })),
          task_metrics: { TOTAL: n, SUCCEEDED: n, FAILED: 0 },
        },
        usage: { image_count: n },
      };
      ctx.http.sendJson(200, {
        data: images.map((img, i) =>
          asBase64
            ? { url: '', b64_json: img.toString('base64'), revised_prompt: '' }
            : { url: urls[i] ?? '', b64_json: '', revised_prompt: '' },
        ),
        created: unixSeconds(),
        metadata,
      });
    },
  };
}

export const imageRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/images/generations',
    rateLimit: true,
    distribute: true,
    errorFormat: 'openai',
    handle: generateImages,
  },
];
