import type { GatewayContext } from './route';

/**
 * A model list can advertise an endpoint type that the model's upstream then refuses (Cherry Studio
 * met this through a new-api-style gateway: https://github.com/CherryHQ/cherry-studio/pull/18699).
 * The upstream answers 400 with a body that is not OpenAI-shaped (`{"status":20004,"message":"Model
 * … does not support apiType:openai.chat parameter"}`); new-api's RelayErrorHandler takes its
 * message and answers HTTP 400 with code and type `bad_response_status_code`. Nothing is charged:
 * the pre-consumed quota is refunded on a relay error.
 */
const API_TYPES: Record<string, string> = {
  openai: 'openai.chat',
  'openai-response': 'openai.responses',
  anthropic: 'anthropic.messages',
};

/** Answers the refusal and returns true when the world says this model's upstream refuses `endpointType`. */
export function upstreamRefuses(ctx: GatewayContext, endpointType: keyof typeof API_TYPES & string): boolean {
  if (!ctx.world.refusedEndpoints.get(ctx.model.id)?.has(endpointType)) return false;
  ctx.relayError(
    400,
    'bad_response_status_code',
    `Model ${ctx.model.id} does not support apiType:${API_TYPES[endpointType] ?? endpointType} parameter`,
  );
  return true;
}
