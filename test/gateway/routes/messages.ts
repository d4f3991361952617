import { charge, preConsume, textPreConsumeQuota, textQuota } from '../billing';
import type { GatewayContext, Route } from '../route';
import { isRecord, numberOr } from '../values';
import { allText, contentText, echoReply, estimateTokens, lastUserText, randomId } from './echo';

/**
 * POST /v1/messages, non-streaming only (wire-formats §3.3). It exists now so that the split of
 * error shapes on this route (§3.5: relay errors in the Messages shape, middleware errors not) is real.
 */
function createMessage(ctx: GatewayContext): void {
  const parsed = ctx.http.json();
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) return ctx.relayError(500, 'invalid_request', 'field messages is required');
  if (body.stream === true) return ctx.relayError(500, 'invalid_request', 'stream is not supported by the gateway double yet');

  const model = ctx.model;
  const inputTokens = estimateTokens(contentText(body.system) + allText(messages));
  if (!preConsume(ctx, textPreConsumeQuota(model, inputTokens, numberOr(body.max_tokens, 0)))) return;

  const text = echoReply(model.id, lastUserText(messages));
  const outputTokens = estimateTokens(text);
  charge(ctx.key, textQuota(model, inputTokens, outputTokens));
  ctx.http.sendJson(200, {
    id: randomId('msg_'),
    type: 'message',
    role: 'assistant',
    model: model.id,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
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
