import { charge, preConsume, textPreConsumeQuota, textQuota } from '../billing';
import type { GatewayContext, Route } from '../route';
import { isRecord, numberOr } from '../values';
import { allText, echoReply, estimateTokens, lastUserText, randomId, unixSeconds } from './echo';

/**
 * POST /v1/chat/completions, non-streaming only (wire-formats §1.3). Streaming arrives with its own
 * module; until then a streaming request is refused rather than answered in the wrong framing.
 */
function chatCompletion(ctx: GatewayContext): void {
  const parsed = ctx.http.json();
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  const messages = Array.isArray(body.messages) ? body.messages : [];
  // new-api validates inside the relay and reports it with NewError's default status, 500.
  if (messages.length === 0) return ctx.relayError(500, 'invalid_request', 'field messages is required');
  if (body.stream === true) return ctx.relayError(500, 'invalid_request', 'stream is not supported by the gateway double yet');

  const model = ctx.model;
  const promptTokens = estimateTokens(allText(messages));
  const maxTokens = numberOr(body.max_completion_tokens, numberOr(body.max_tokens, 0));
  if (!preConsume(ctx, textPreConsumeQuota(model, promptTokens, maxTokens))) return;

  const content = echoReply(model.id, lastUserText(messages));
  const completionTokens = estimateTokens(content);
  charge(ctx.key, textQuota(model, promptTokens, completionTokens));
  ctx.http.sendJson(200, {
    id: randomId('chatcmpl-'),
    object: 'chat.completion',
    created: unixSeconds(),
    model: model.id,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
  });
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
