import { randomBytes } from 'node:crypto';
import { preConsume, textPreConsumeQuota } from '../billing';
import { planAnswer, type ChatPlan, type PlanUsage } from '../chatScenarios';
import { relayedCacheAccount } from '../promptCache';
import { anthropicError, OVERLOADED_ERROR } from '../errorBodies';
import { randomAlphanumeric } from '../requestId';
import { upstreamRefuses } from '../protocolRefusal';
import type { GatewayContext, Route } from '../route';
import { eventFrame, type Step } from '../sse';
import type { ChatAnswerRecord } from '../types';
import { isRecord, numberOr } from '../values';
import { nonStreamPrelude, recordAnswer, sendHalfThenCut, settle, streamAnswer } from './answer';
import { allText, contentText, estimateTokens, lastUserText, randomId } from './echo';
import { checkMessagesParts, factLines } from '../imageFacts';
import { messagesThinkingError } from '../thinkingRules';
import { messagesToolTurns } from '../toolTurns';

/**
 * POST /v1/messages: the Message JSON or the `event:`-named stream of Anthropic's Messages API.
 * Relay errors use the Messages shape; middleware errors keep the OpenAI-style middleware shape,
 * which the router takes care of. `anthropic-version` is optional toward new-api:
 * it is not required, only recorded in the answer record (the request log has every header).
 */
/** Anthropic's own words for a request without max_tokens or with turns out of order; undefined when fine. */
export function messagesShapeError(body: Record<string, unknown>, messages: unknown[]): string | undefined {
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return 'max_tokens: Input should be a valid integer greater than or equal to 1';
  let previous: unknown;
  for (const [i, m] of messages.entries()) {
    const role = isRecord(m) ? m.role : undefined;
    if (role !== 'user' && role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (i === 0 && role !== 'user') return 'messages: first message must use the "user" role';
    if (role === previous)
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`;
    previous = role;
  }
  return undefined;
}

async function createMessage(ctx: GatewayContext): Promise<void> {
  const parsed = ctx.http.json();
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) return ctx.relayError(500, 'invalid_request', 'field messages is required');

  // As strict as Anthropic's API: max_tokens is required, and turns start with the user and alternate.
  const shapeError = messagesShapeError(body, messages);
  if (shapeError) return ctx.http.sendJson(400, anthropicError('invalid_request_error', shapeError, randomId('req_')));

  const model = ctx.model;
  const promptText = contentText(body.system) + allText(messages);
  const maxTokens = numberOr(body.max_tokens, 0);
  if (!preConsume(ctx, textPreConsumeQuota(model, estimateTokens(promptText), maxTokens))) return;
  if (upstreamRefuses(ctx, 'anthropic')) return;

  // Anthropic's own 400 for a malformed block, relayed unchanged with its request_id (§3.5).
  const parts = checkMessagesParts(messages, model);
  if (!parts.ok)
    return ctx.http.sendJson(400, anthropicError('invalid_request_error', parts.error.message, randomId('req_')));

  const thinkingError = messagesThinkingError(body);
  if (thinkingError)
    return ctx.http.sendJson(400, anthropicError('invalid_request_error', thinkingError, randomId('req_')));
  const thinking = isRecord(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive');
  const tools = messagesToolTurns(body, messages, model, thinking);
  if (!tools.ok)
    return ctx.http.sendJson(400, anthropicError('invalid_request_error', tools.error.message, randomId('req_')));

  const plan = planAnswer({
    model,
    lastUser: lastUserText(messages),
    promptText,
    thinkingRequested: thinking,
    maxTokens,
    imageFacts: factLines(parts.facts),
    toolTurns: tools.turns,
  });
  if (plan.scenarios.ending === 'failed') plan.scenarios.ending = 'midstreamError';
  const cache = relayedCacheAccount(ctx, body, plan.usage.promptTokens);
  if (!cache.ok)
    return ctx.http.sendJson(400, anthropicError('invalid_request_error', cache.message, randomId('req_')));
  plan.usage.cachedTokens = cache.account.cachedTokens;
  plan.usage.cacheWriteTokens = cache.account.writeTokens;

  const stream = body.stream === true;
  const toolId = `toolu_${randomAlphanumeric(24)}`;
  const stopReason = plan.truncated ? 'max_tokens' : plan.toolCall ? 'tool_use' : 'end_turn';
  const version = ctx.http.header('anthropic-version');
  const record = recordAnswer(ctx, {
    protocol: 'messages',
    stream,
    model: model.id,
    markers: plan.scenarios.markers,
    text: plan.text,
    reasoning: plan.reasoning,
    toolCalls: plan.toolCall ? [{ id: toolId, ...plan.toolCall }] : [],
    usage: plan.usage,
    finish: stopReason,
    ending: plan.scenarios.ending,
    ...(version ? { anthropicVersion: version } : {}),
  });
  const ids = { message: randomId('msg_'), tool: toolId, signature: randomBytes(48).toString('base64') };
  if (stream) return streamMessage(ctx, plan, record, ids, stopReason);
  return message(ctx, plan, record, ids, stopReason);
}

interface Ids {
  message: string;
  tool: string;
  signature: string;
}

async function message(
  ctx: GatewayContext,
  plan: ChatPlan,
  record: ChatAnswerRecord,
  ids: Ids,
  stopReason: string,
): Promise<void> {
  if (!(await nonStreamPrelude(ctx, plan))) return;
  const ending = plan.scenarios.ending;
  if (ending === 'errorIn200') {
    settle(ctx, plan, record, false, '');
    return ctx.http.sendJson(200, { type: 'error', error: OVERLOADED_ERROR });
  }
  if (ending === 'midstreamError') {
    // A native Claude upstream error is relayed unchanged, request_id and all (§3.5).
    settle(ctx, plan, record, false, '');
    return ctx.http.sendJson(529, anthropicError(OVERLOADED_ERROR.type, OVERLOADED_ERROR.message, randomId('req_')));
  }
  const content: unknown[] = [];
  if (plan.reasoning) content.push({ type: 'thinking', thinking: plan.reasoning, signature: ids.signature });
  if (plan.text) content.push({ type: 'text', text: plan.text });
  if (plan.toolCall)
    content.push({
      type: 'tool_use',
      id: ids.tool,
      name: plan.toolCall.name,
      input: JSON.parse(plan.toolCall.arguments) as unknown,
    });
  const answer = {
    id: ids.message,
    type: 'message',
    role: 'assistant',
    model: ctx.model.id,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      ...anthropicInput(plan.usage),
      output_tokens: plan.usage.completionTokens,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      service_tier: 'standard',
    },
  };
  settle(ctx, plan, record, true, '');
  if (ending === 'cut' || ending === 'cutClean') return sendHalfThenCut(ctx, answer);
  ctx.http.sendJson(200, answer);
}

async function streamMessage(
  ctx: GatewayContext,
  plan: ChatPlan,
  record: ChatAnswerRecord,
  ids: Ids,
  stopReason: string,
): Promise<void> {
  const ev = (type: string, fields: Record<string, unknown> = {}) => eventFrame(type, { type, ...fields });
  // Anthropic's own ping payload has a space after the colon.
  const ping = 'event: ping\ndata: {"type": "ping"}\n\n';
  const error = ev('error', { error: OVERLOADED_ERROR });

  const steps: Step[] = [];
  if (plan.scenarios.ending === 'errorIn200') {
    steps.push({ frame: error });
  } else {
    steps.push({
      frame: ev('message_start', {
        message: {
          id: ids.message,
          type: 'message',
          role: 'assistant',
          content: [],
          model: ctx.model.id,
          stop_reason: null,
          stop_sequence: null,
          usage: {
            ...anthropicInput(plan.usage),
            output_tokens: 1,
          },
        },
      }),
    });
    let index = 0;
    const start = (block: Record<string, unknown>) => {
      steps.push({ frame: ev('content_block_start', { index, content_block: block }) });
      if (index === 0) steps.push({ frame: ping });
    };
    const delta = (d: Record<string, unknown>, content?: string) =>
      steps.push({
        frame: ev('content_block_delta', { index, delta: d }),
        ...(content === undefined ? {} : { content }),
      });
    const stop = () => steps.push({ frame: ev('content_block_stop', { index: index++ }) });

    if (plan.reasoning) {
      start({ type: 'thinking', thinking: '', signature: '' });
      for (const piece of plan.reasoningChunks) delta({ type: 'thinking_delta', thinking: piece }, piece);
      delta({ type: 'signature_delta', signature: ids.signature });
      stop();
    }
    if (plan.text) {
      start({ type: 'text', text: '' });
      for (const piece of plan.textChunks) delta({ type: 'text_delta', text: piece }, piece);
      stop();
    }
    if (plan.toolCall) {
      start({ type: 'tool_use', id: ids.tool, name: plan.toolCall.name, input: {} });
      delta({ type: 'input_json_delta', partial_json: '' }, plan.toolCall.name);
      for (const piece of plan.argumentChunks) delta({ type: 'input_json_delta', partial_json: piece }, piece);
      stop();
    }
    steps.push({
      frame: ev('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: plan.usage.completionTokens },
      }),
    });
    steps.push({ frame: ev('message_stop') });
  }

  await streamAnswer(ctx, plan, record, steps, {
    pingFrame: plan.scenarios.ping ? ping : undefined,
    errorFrames: () => [error],
  });
}

export const messagesRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/messages',
    rateLimit: true,
    distribute: true,
    errorFormat: 'claude',
    handle: createMessage,
  },
];

/** Anthropic counts the cache's tokens apart: `input_tokens` is what was neither read nor written. */
function anthropicInput(u: PlanUsage): Record<string, number> {
  const read = u.cachedTokens ?? 0;
  const written = u.cacheWriteTokens ?? 0;
  return {
    input_tokens: u.promptTokens - read - written,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}
