import { relayedCacheAccount } from '../promptCache';
import { preConsume, textPreConsumeQuota, textQuota } from '../billing';
import { planAnswer, type ChatPlan, type PlanUsage } from '../chatScenarios';
import { checkResponsesParts, factLines } from '../imageFacts';
import { responsesToolTurns } from '../toolTurns';
import { relayError, upstreamServerError } from '../errorBodies';
import { promptPng } from '../png';
import { randomAlphanumeric } from '../requestId';
import { upstreamRefuses } from '../protocolRefusal';
import type { GatewayContext, Route } from '../route';
import { eventFrame, faultPoint, type Step } from '../sse';
import { responsesThinking } from '../thinkingRules';
import { isRecord, numberOr } from '../values';
import { modelKind } from '../world';
import { nonStreamPrelude, recordAnswer, sendHalfThenCut, settle, streamAnswer } from './answer';
import { contentText, estimateTokens, unixSeconds } from './echo';

/**
 * POST /v1/responses (wire-formats §2): the Response JSON of §2.3 or the `event:`-named stream of
 * §2.4–2.8 with `sequence_number` from 0. The image_generation tool yields an
 * image_generation_call item (§2.7) carrying a real PNG drawn from the prompt.
 */

/** Channel types whose new-api adaptor has no Responses conversion (§2.1). */
const NO_RESPONSES_CHANNELS = new Set(['claude', 'moonshot', 'zhipu_4v']);

/** gpt-image output tokens per image at 1024×1024, by quality; billed to the tool's image model. */
const IMAGE_TOKENS: Record<string, number> = { low: 272, medium: 1056, high: 4160 };

const SERVER_ERROR = { code: 'server_error', message: upstreamServerError().error.message };

interface ImagePlan {
  base64: string;
  partials: string[];
  revisedPrompt: string;
  size: string;
  quality: string;
  background: string;
  outputFormat: string;
  /** Quota for the image itself, charged with the answer. */
  quota: number;
}

async function createResponse(ctx: GatewayContext): Promise<void> {
  const parsed = ctx.http.json();
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  const input = body.input;
  // Validation inside the relay: NewError's default status 500 (§2.1).
  if (input === undefined || input === null || input === '' || (Array.isArray(input) && input.length === 0)) {
    return ctx.relayError(500, 'invalid_request', 'input is required');
  }

  const model = ctx.model;
  const promptText = contentText(body.instructions) + inputText(input);
  const maxTokens = numberOr(body.max_output_tokens, 0);
  if (!preConsume(ctx, textPreConsumeQuota(model, estimateTokens(promptText), maxTokens))) return;
  if (NO_RESPONSES_CHANNELS.has(model.owned_by))
    return ctx.relayError(500, 'convert_request_failed', 'not implemented');
  if (upstreamRefuses(ctx, 'openai-response')) return;
  if (modelKind(model) !== 'chat') {
    // What OpenAI answers for a model the Responses API does not serve, relayed as parsed (no
    // request-id suffix): an image model belongs in the image_generation tool, not in `model`.
    return ctx.http.sendJson(
      400,
      relayError(
        `The requested model '${model.id}' is not supported with the Responses API.`,
        'model_not_found',
        undefined,
        'invalid_request_error',
        'model',
      ),
    );
  }

  const parts = checkResponsesParts(input, model);
  if (!parts.ok)
    return ctx.http.sendJson(
      400,
      relayError(
        parts.error.message,
        parts.error.code ?? '',
        undefined,
        'invalid_request_error',
        parts.error.param ?? '',
      ),
    );

  const toolTurns = responsesToolTurns(body, input);
  if (!toolTurns.ok)
    return ctx.http.sendJson(
      400,
      relayError(toolTurns.error.message, '', undefined, 'invalid_request_error', toolTurns.error.param),
    );

  const tools = Array.isArray(body.tools) ? body.tools : [];
  // The built-in search tool (its own parameters, not Chat Completions' enable_search).
  const searchTool = tools.find((t) => isRecord(t) && typeof t.type === 'string' && SEARCH_TOOLS.has(t.type));
  const include = Array.isArray(body.include) ? body.include : [];
  const imageToolIndex = tools.findIndex((t) => isRecord(t) && t.type === 'image_generation');
  const imageTool = imageToolIndex >= 0 ? (tools[imageToolIndex] as Record<string, unknown>) : undefined;
  if (imageTool && typeof imageTool.model === 'string' && !isImageModel(ctx, imageTool.model)) {
    return ctx.http.sendJson(
      400,
      relayError(
        `Invalid value: '${imageTool.model}'. Supported values are: 'gpt-image-1', 'gpt-image-1-mini' and 'gpt-image-1.5'.`,
        'invalid_value',
        undefined,
        'invalid_request_error',
        `tools[${imageToolIndex}].model`,
      ),
    );
  }

  const reasoningParam = isRecord(body.reasoning) ? body.reasoning : {};
  const summary = reasoningParam.summary;
  const thinking = responsesThinking(body, model);
  if (!thinking.ok)
    return ctx.http.sendJson(
      400,
      relayError(thinking.message, thinking.code, undefined, 'invalid_request_error', thinking.param),
    );
  const plan = planAnswer({
    model,
    lastUser: lastUserInput(input),
    promptText,
    thinkingRequested: thinking.thinking,
    maxTokens,
    ...(searchTool && body.tool_choice !== 'none' ? { webSearch: 'cited' as const } : {}),
    imageFacts: factLines(parts.facts),
    toolTurns: toolTurns.turns,
  });
  const cache = relayedCacheAccount(ctx, body, plan.usage.promptTokens);
  if (!cache.ok)
    return ctx.http.sendJson(400, relayError(cache.message, '', undefined, 'invalid_request_error', cache.param ?? ''));
  // Responses reports reads only.
  plan.usage.cachedTokens = cache.account.cachedTokens;
  const image =
    imageTool && body.tool_choice !== 'none' && !plan.truncated ? imagePlan(ctx, imageTool, plan.prompt) : undefined;

  const stream = body.stream === true;
  const ids = {
    response: `resp_${randomAlphanumeric(32).toLowerCase()}`,
    reasoning: `rs_${randomAlphanumeric(32).toLowerCase()}`,
    image: `ig_${randomAlphanumeric(32).toLowerCase()}`,
    message: `msg_${randomAlphanumeric(32).toLowerCase()}`,
    call: `fc_${randomAlphanumeric(32).toLowerCase()}`,
    callId: `call_${randomAlphanumeric(24)}`,
    search: `ws_${randomAlphanumeric(32).toLowerCase()}`,
  };
  const record = recordAnswer(ctx, {
    protocol: 'responses',
    stream,
    model: model.id,
    markers: plan.scenarios.markers,
    text: plan.text,
    reasoning: plan.reasoning,
    toolCalls: plan.toolCall ? [{ id: ids.callId, ...plan.toolCall }] : [],
    ...(image ? { image: { base64: image.base64, partialImages: stream ? image.partials.length : 0 } } : {}),
    usage: plan.usage,
    finish: plan.truncated ? 'incomplete' : 'completed',
    ending: plan.scenarios.ending,
  });

  const envelope = (
    status: string,
    output: unknown[],
    usage: PlanUsage | null,
    extra: Record<string, unknown> = {},
  ) => ({
    id: ids.response,
    object: 'response',
    created_at: unixSeconds(),
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: maxTokens > 0 ? maxTokens : null,
    model: model.id,
    output,
    parallel_tool_calls: body.parallel_tool_calls !== false,
    previous_response_id: null,
    reasoning: { effort: reasoningParam.effort ?? null, summary: summary ?? null },
    store: body.store !== false,
    temperature: numberOr(body.temperature, 1),
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools,
    top_p: numberOr(body.top_p, 1),
    truncation: 'disabled',
    usage: usage ? responsesUsage(usage) : null,
    user: null,
    metadata: isRecord(body.metadata) ? body.metadata : {},
    ...extra,
  });
  const items = finalItems(plan, image, ids, include.includes('web_search_call.action.sources'));
  const finished = () =>
    plan.truncated
      ? envelope('incomplete', items, plan.usage, { incomplete_details: { reason: 'max_output_tokens' } })
      : envelope('completed', items, plan.usage);

  if (!stream) {
    if (!(await nonStreamPrelude(ctx, plan))) return;
    const ending = plan.scenarios.ending;
    if (ending === 'errorIn200') {
      settle(ctx, plan, record, false, '');
      return ctx.http.sendJson(200, upstreamServerError());
    }
    if (ending === 'midstreamError') {
      settle(ctx, plan, record, false, '');
      return ctx.http.sendJson(500, upstreamServerError());
    }
    if (ending === 'failed') {
      settle(ctx, plan, record, false, '');
      return ctx.http.sendJson(200, envelope('failed', [], null, { error: SERVER_ERROR }));
    }
    settle(ctx, plan, record, true, '', image?.quota ?? 0);
    if (ending === 'cut' || ending === 'cutClean') return sendHalfThenCut(ctx, finished());
    return ctx.http.sendJson(200, finished());
  }

  // Events first without sequence numbers; they are numbered once the script is final.
  type Ev = { type: string; fields: Record<string, unknown>; content?: string };
  const events: Ev[] = [];
  const push = (type: string, fields: Record<string, unknown>, content?: string) =>
    events.push({ type, fields, ...(content === undefined ? {} : { content }) });
  const inProgress = envelope('in_progress', [], null);
  push('response.created', { response: inProgress });
  push('response.in_progress', { response: inProgress });
  items.forEach((item, oi) => {
    const id = item.id as string;
    switch (item.type) {
      case 'reasoning': {
        const part = (text: string) => ({ type: 'summary_text', text });
        push('response.output_item.added', { output_index: oi, item: { id, type: 'reasoning', summary: [] } });
        push('response.reasoning_summary_part.added', {
          item_id: id,
          output_index: oi,
          summary_index: 0,
          part: part(''),
        });
        for (const piece of plan.reasoningChunks)
          push(
            'response.reasoning_summary_text.delta',
            { item_id: id, output_index: oi, summary_index: 0, delta: piece },
            piece,
          );
        push('response.reasoning_summary_text.done', {
          item_id: id,
          output_index: oi,
          summary_index: 0,
          text: plan.reasoning,
        });
        push('response.reasoning_summary_part.done', {
          item_id: id,
          output_index: oi,
          summary_index: 0,
          part: part(plan.reasoning),
        });
        break;
      }
      case 'web_search_call': {
        push('response.output_item.added', {
          output_index: oi,
          item: { id, type: 'web_search_call', status: 'in_progress', action: { type: 'search' } },
        });
        push('response.web_search_call.in_progress', { output_index: oi, item_id: id });
        push('response.web_search_call.searching', { output_index: oi, item_id: id });
        push('response.web_search_call.completed', { output_index: oi, item_id: id });
        break;
      }
      case 'image_generation_call': {
        push('response.output_item.added', {
          output_index: oi,
          item: { id, type: 'image_generation_call', status: 'in_progress' },
        });
        push('response.image_generation_call.in_progress', { output_index: oi, item_id: id });
        push('response.image_generation_call.generating', { output_index: oi, item_id: id });
        (image?.partials ?? []).forEach((b64, index) =>
          push('response.image_generation_call.partial_image', {
            output_index: oi,
            item_id: id,
            partial_image_index: index,
            partial_image_b64: b64,
            size: image?.size,
            quality: image?.quality,
            background: image?.background,
            output_format: image?.outputFormat,
          }),
        );
        push('response.image_generation_call.completed', { output_index: oi, item_id: id });
        break;
      }
      case 'message': {
        const part = (text: string, annotations: unknown[] = []) => ({
          type: 'output_text',
          text,
          annotations,
          logprobs: [],
        });
        const at = { item_id: id, output_index: oi, content_index: 0 };
        push('response.output_item.added', {
          output_index: oi,
          item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
        });
        push('response.content_part.added', { ...at, part: part('') });
        // Each citation is announced once the text it covers has streamed.
        const pending = [...plan.citations];
        let streamed = 0;
        let annotationIndex = 0;
        for (const piece of plan.textChunks) {
          push('response.output_text.delta', { ...at, delta: piece, logprobs: [] }, piece);
          streamed += piece.length;
          while (pending[0] && pending[0].end <= streamed) {
            const c = pending.shift();
            if (c)
              push('response.output_text.annotation.added', {
                ...at,
                annotation_index: annotationIndex++,
                annotation: urlCitation(c),
              });
          }
        }
        push('response.output_text.done', { ...at, text: plan.text, logprobs: [] });
        push('response.content_part.done', { ...at, part: part(plan.text, plan.citations.map(urlCitation)) });
        break;
      }
      case 'function_call': {
        const call = plan.toolCall;
        if (!call) break;
        push(
          'response.output_item.added',
          {
            output_index: oi,
            item: {
              id,
              type: 'function_call',
              status: 'in_progress',
              call_id: ids.callId,
              name: call.name,
              arguments: '',
            },
          },
          call.name,
        );
        for (const piece of plan.argumentChunks)
          push('response.function_call_arguments.delta', { item_id: id, output_index: oi, delta: piece }, piece);
        push('response.function_call_arguments.done', {
          item_id: id,
          output_index: oi,
          name: call.name,
          arguments: call.arguments,
        });
        break;
      }
    }
    push('response.output_item.done', { output_index: oi, item });
  });

  const ending = plan.scenarios.ending;
  if (ending === 'errorIn200') {
    events.length = 0;
    push('error', { error: { type: 'server_error', ...SERVER_ERROR, param: null } });
  } else if (ending === 'failed') {
    const stopAfter = faultPoint(events.filter((e) => e.content !== undefined).length);
    let seen = 0;
    const cutAt = events.findIndex((e) => e.content !== undefined && ++seen >= stopAfter);
    events.length = cutAt + 1;
    push('response.failed', { response: envelope('failed', [], null, { error: SERVER_ERROR }) });
  } else {
    const done = finished();
    push(plan.truncated ? 'response.incomplete' : 'response.completed', { response: done });
  }

  const steps: Step[] = events.map((e, i) => ({
    frame: eventFrame(e.type, { type: e.type, sequence_number: i, ...e.fields }),
    ...(e.content === undefined ? {} : { content: e.content }),
  }));
  await streamAnswer(
    ctx,
    plan,
    record,
    steps,
    {
      pingFrame: plan.scenarios.ping ? ': PING\n\n' : undefined,
      errorFrames: (seq) => [
        eventFrame(
          'error',
          plan.scenarios.nestedError
            ? { type: 'error', sequence_number: seq, error: { type: 'server_error', ...SERVER_ERROR, param: null } }
            : { type: 'error', sequence_number: seq, ...SERVER_ERROR, param: null },
        ),
      ],
    },
    image?.quota ?? 0,
  );
}

const SEARCH_TOOLS = new Set([
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
]);

function urlCitation(c: ChatPlan['citations'][number]): Record<string, unknown> {
  return { type: 'url_citation', start_index: c.start, end_index: c.end, url: c.url, title: c.title };
}

function finalItems(
  plan: ChatPlan,
  image: ImagePlan | undefined,
  ids: Record<string, string>,
  withSources: boolean,
): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  if (plan.reasoning)
    items.push({ id: ids.reasoning, type: 'reasoning', summary: [{ type: 'summary_text', text: plan.reasoning }] });
  if (plan.search) {
    const action: Record<string, unknown> = { type: 'search', query: plan.search.query, queries: [plan.search.query] };
    if (withSources) action.sources = plan.search.sources.map((url) => ({ type: 'url', url }));
    items.push({ id: ids.search, type: 'web_search_call', status: 'completed', action });
  }
  if (image) {
    items.push({
      id: ids.image,
      type: 'image_generation_call',
      status: 'completed',
      result: image.base64,
      revised_prompt: image.revisedPrompt,
      size: image.size,
      quality: image.quality,
      background: image.background,
      output_format: image.outputFormat,
    });
  }
  if (plan.text) {
    items.push({
      id: ids.message,
      type: 'message',
      status: plan.truncated ? 'incomplete' : 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: plan.text, annotations: plan.citations.map(urlCitation), logprobs: [] }],
    });
  }
  if (plan.toolCall) {
    items.push({
      id: ids.call,
      type: 'function_call',
      status: 'completed',
      call_id: ids.callId,
      name: plan.toolCall.name,
      arguments: plan.toolCall.arguments,
    });
  }
  return items;
}

/** OpenAI's image_generation tool takes gpt-image models only (not, say, an Ali Wan image model). */
function isImageModel(ctx: GatewayContext, id: string): boolean {
  const known = ctx.world.models.get(id);
  return /^gpt-image-/.test(id) && (!known || modelKind(known) === 'image');
}

function imagePlan(ctx: GatewayContext, tool: Record<string, unknown>, prompt: string): ImagePlan {
  const pick = (value: unknown, allowed: string[], fallback: string) =>
    typeof value === 'string' && allowed.includes(value) ? value : fallback;
  const quality = pick(tool.quality, ['low', 'medium', 'high'], 'medium');
  const partialCount = Math.max(0, Math.min(3, Math.floor(numberOr(tool.partial_images, 0))));
  const imageModel = ctx.world.models.get(typeof tool.model === 'string' ? tool.model : 'gpt-image-1');
  return {
    base64: promptPng(prompt).toString('base64'),
    // Coarse to fine previews, as partial images sharpen.
    partials: Array.from({ length: partialCount }, (_, i) => promptPng(prompt, 16 >> i).toString('base64')),
    revisedPrompt: `An abstract picture of: ${prompt}`,
    size: pick(tool.size, ['1024x1024', '1024x1536', '1536x1024'], '1024x1024'),
    quality,
    background: pick(tool.background, ['transparent', 'opaque'], 'opaque'),
    // The double only draws PNGs, so that is what it reports whatever was asked for.
    outputFormat: 'png',
    quota: imageModel ? textQuota(imageModel, 0, IMAGE_TOKENS[quality] ?? 1056) : 0,
  };
}

/** Text of `input`: a string, or the text of each item's content (and function_call_output). */
function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  return input
    .map((item) => {
      if (!isRecord(item)) return '';
      if (typeof item.output === 'string') return item.output;
      return contentText(item.content);
    })
    .join('\n');
}

function lastUserInput(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const item: unknown = input[i];
    if (isRecord(item) && item.role === 'user') return contentText(item.content);
  }
  return '';
}

function responsesUsage(u: PlanUsage): Record<string, unknown> {
  return {
    input_tokens: u.promptTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens ?? 0 },
    output_tokens: u.completionTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.totalTokens,
  };
}

export const responsesRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/responses',
    rateLimit: true,
    distribute: true,
    errorFormat: 'openai',
    handle: createResponse,
  },
];
