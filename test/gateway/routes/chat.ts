import { relayedCacheAccount } from '../promptCache';
import { preConsume, textPreConsumeQuota } from '../billing';
import { planAnswer, tokensOf, type ChatPlan, type PlanUsage } from '../chatScenarios';
import { relayError, upstreamServerError } from '../errorBodies';
import { checkChatParts, factLines } from '../imageFacts';
import { completionsThinking } from '../thinkingRules';
import { chatToolTurns } from '../toolTurns';
import { randomAlphanumeric } from '../requestId';
import { upstreamRefuses } from '../protocolRefusal';
import type { GatewayContext, Route } from '../route';
import { dataFrame, type Step } from '../sse';
import type { ChatAnswerRecord } from '../types';
import { isRecord, numberOr } from '../values';
import { nonStreamPrelude, recordAnswer, sendHalfThenCut, settle, streamAnswer } from './answer';
import { allText, estimateTokens, lastUserText, randomId, unixSeconds } from './echo';

/**
 * POST /v1/chat/completions (wire-formats §1): the JSON answer of §1.3 or the `data:`-only stream
 * of §1.4 with new-api's tail (§1.5): a synthesized `choices: []` usage chunk unless the client
 * sent stream_options without include_usage, then `data: [DONE]`.
 */
async function chatCompletion(ctx: GatewayContext): Promise<void> {
  const parsed = ctx.http.json();
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  const messages = Array.isArray(body.messages) ? body.messages : [];
  // new-api validates inside the relay and reports it with NewError's default status, 500.
  if (messages.length === 0) return ctx.relayError(500, 'invalid_request', 'field messages is required');

  const model = ctx.model;
  const promptText = allText(messages);
  const maxTokens = numberOr(body.max_completion_tokens, numberOr(body.max_tokens, 0));
  if (!preConsume(ctx, textPreConsumeQuota(model, estimateTokens(promptText), maxTokens))) return;
  if (upstreamRefuses(ctx, 'openai')) return;

  // Content parts are the upstream's business: its 400 is relayed as it came (no request-id suffix).
  const parts = checkChatParts(messages, model);
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

  // The tool round trip is the upstream's to check too: OpenAI's (or Moonshot's) 400, relayed as it came.
  const tools = chatToolTurns(body, messages, model);
  if (!tools.ok)
    return ctx.http.sendJson(
      400,
      relayError(tools.error.message, '', undefined, 'invalid_request_error', tools.error.param),
    );

  // Each upstream reads its own thinking switch and refuses the wrong use of it (thinkingRules.ts).
  const thinking = completionsThinking(body, model, body.stream === true);
  if (!thinking.ok)
    return ctx.http.sendJson(
      400,
      relayError(thinking.message, thinking.code, undefined, 'invalid_request_error', thinking.param),
    );
  const plan = planAnswer({
    model,
    lastUser: lastUserText(messages),
    promptText,
    thinkingRequested: thinking.thinking,
    maxTokens,
    // new-api forwards enable_search; only Alibaba's upstream acts on it, the others ignore it.
    webSearch: body.enable_search === true && model.owned_by === 'ali',
    imageFacts: factLines(parts.facts),
    toolTurns: tools.turns,
  });
  const cache = relayedCacheAccount(ctx, body, plan.usage.promptTokens);
  if (!cache.ok)
    return ctx.http.sendJson(400, relayError(cache.message, '', undefined, 'invalid_request_error', cache.param ?? ''));
  plan.usage.cachedTokens = cache.account.cachedTokens;
  plan.usage.cacheWriteTokens = cache.account.writeTokens;
  // Chat Completions has no "failed" response; it fails the way any stream does.
  if (plan.scenarios.ending === 'failed') plan.scenarios.ending = 'midstreamError';

  const stream = body.stream === true;
  // Kimi numbers its call ids by name and position in the conversation (`get_weather:0`, wire-formats §1.4).
  const callId =
    model.owned_by === 'moonshot' && plan.toolCall
      ? `${plan.toolCall.name}:${tools.turns.priorCalls}`
      : `call_${randomAlphanumeric(24)}`;
  const finish = plan.truncated ? 'length' : plan.toolCall ? 'tool_calls' : 'stop';
  const record = recordAnswer(ctx, {
    protocol: 'chatCompletions',
    stream,
    model: model.id,
    markers: plan.scenarios.markers,
    text: plan.text,
    reasoning: plan.reasoning,
    toolCalls: plan.toolCall ? [{ id: callId, ...plan.toolCall }] : [],
    usage: plan.usage,
    finish,
    ending: plan.scenarios.ending,
  });
  const meta = {
    id: randomId('chatcmpl-'),
    created: unixSeconds(),
    model: model.id,
    fingerprint: `fp_${randomAlphanumeric(10).toLowerCase()}`,
  };
  // OpenAI always numbers tool-call fragments; some compatible upstreams leave `index` out after the first.
  const omitIndex = model.owned_by !== 'openai';
  if (stream) return streamCompletion(ctx, body, plan, record, meta, callId, finish, omitIndex);
  return completion(ctx, plan, record, meta, callId, finish);
}

interface Meta {
  id: string;
  created: number;
  model: string;
  fingerprint: string;
}

async function completion(
  ctx: GatewayContext,
  plan: ChatPlan,
  record: ChatAnswerRecord,
  meta: Meta,
  callId: string,
  finish: string,
): Promise<void> {
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
  const message: Record<string, unknown> = { role: 'assistant', content: plan.text || null };
  if (plan.reasoning) message.reasoning_content = plan.reasoning;
  if (plan.toolCall)
    message.tool_calls = [
      { id: callId, type: 'function', function: { name: plan.toolCall.name, arguments: plan.toolCall.arguments } },
    ];
  message.refusal = null;
  message.annotations = [];
  const answer = {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.fingerprint,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: openAiUsage(plan.usage),
  };
  settle(ctx, plan, record, true, '');
  if (ending === 'cut' || ending === 'cutClean') return sendHalfThenCut(ctx, answer);
  ctx.http.sendJson(200, answer);
}

async function streamCompletion(
  ctx: GatewayContext,
  body: Record<string, unknown>,
  plan: ChatPlan,
  record: ChatAnswerRecord,
  meta: Meta,
  callId: string,
  finish: string,
  omitIndex: boolean,
): Promise<void> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.fingerprint,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  // new-api's GenerateFinalUsageResponse: last chunk's id/created/model, no choices.
  const usageChunk = (usage: PlanUsage) => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.fingerprint,
    choices: [],
    usage: newApiUsage(usage),
  });
  const streamOptions = body.stream_options;
  const includeUsage = isRecord(streamOptions) ? streamOptions.include_usage === true : true;
  const done = 'data: [DONE]\n\n';
  const upstreamError = dataFrame({ error: upstreamServerError().error });

  const steps: Step[] = [];
  if (plan.scenarios.ending === 'errorIn200') {
    steps.push({ frame: upstreamError }, { frame: done });
  } else {
    steps.push({
      frame: dataFrame(
        chunk(
          plan.reasoning
            ? { role: 'assistant', content: null, reasoning_content: '' }
            : { role: 'assistant', content: '', refusal: null },
        ),
      ),
    });
    for (const piece of plan.reasoningChunks)
      steps.push({ frame: dataFrame(chunk({ content: null, reasoning_content: piece })), content: piece });
    for (const piece of plan.textChunks) steps.push({ frame: dataFrame(chunk({ content: piece })), content: piece });
    if (plan.toolCall) {
      const first = { index: 0, id: callId, type: 'function', function: { name: plan.toolCall.name, arguments: '' } };
      steps.push({ frame: dataFrame(chunk({ tool_calls: [first] })), content: plan.toolCall.name });
      plan.argumentChunks.forEach((piece, i) => {
        const fragment =
          omitIndex && i % 2 === 0 ? { function: { arguments: piece } } : { index: 0, function: { arguments: piece } };
        steps.push({ frame: dataFrame(chunk({ tool_calls: [fragment] })), content: piece });
      });
    }
    steps.push({ frame: dataFrame(chunk({}, finish)) });
    if (includeUsage) steps.push({ frame: dataFrame(usageChunk(plan.usage)) });
    steps.push({ frame: done });
  }

  await streamAnswer(ctx, plan, record, steps, {
    pingFrame: plan.scenarios.ping ? ': PING\n\n' : undefined,
    // new-api forwards the upstream's error chunk verbatim and still appends its own tail.
    errorFrames: (_steps, emitted) => {
      const completion = tokensOf(emitted);
      const usage = {
        ...plan.usage,
        completionTokens: completion,
        reasoningTokens: 0,
        totalTokens: plan.usage.promptTokens + completion,
      };
      return [upstreamError, ...(includeUsage ? [dataFrame(usageChunk(usage))] : []), done];
    },
  });
}

/** OpenAI's CompletionUsage (§1.3). */
function openAiUsage(u: PlanUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.totalTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: u.reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** new-api's own Usage struct, as its synthesized usage chunk carries it (§1.5). */
function newApiUsage(u: PlanUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.totalTokens,
    // new-api maps Claude's cache writes here too (cached_creation_tokens).
    prompt_tokens_details: {
      cached_tokens: u.cachedTokens ?? 0,
      text_tokens: 0,
      audio_tokens: 0,
      image_tokens: 0,
      ...(u.cacheWriteTokens ? { cached_creation_tokens: u.cacheWriteTokens } : {}),
    },
    completion_tokens_details: {
      text_tokens: 0,
      audio_tokens: 0,
      image_tokens: 0,
      reasoning_tokens: u.reasoningTokens,
    },
    input_tokens: 0,
    output_tokens: 0,
    input_tokens_details: null,
    claude_cache_creation_5_m_tokens: 0,
    claude_cache_creation_1_h_tokens: 0,
  };
}

export const chatRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/chat/completions',
    rateLimit: true,
    distribute: true,
    errorFormat: 'openai',
    handle: chatCompletion,
  },
];
