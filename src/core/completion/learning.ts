import type { GatewayError } from '../errors';
import { isProtocolRejection, type RefusedProtocols } from '../models/protocolFallback';
import { guessedPath, type CompletionPath } from './paths';

/**
 * The path a model completes by at one gateway: the one its id suggests (fim.ts), unless that
 * gateway's relay refused a FIM request for it lately. A FIM refusal is remembered with the
 * refused chat protocols, per gateway origin and model, under the route name `fim`
 * (models/refusalMemory.ts), so it expires and is reset the same way.
 */
export const FIM_ROUTE = 'fim';

export function completionPath(model: string, refused: RefusedProtocols): CompletionPath {
  const guessed = guessedPath(model);
  return guessed !== 'chat' && refused[model]?.includes(FIM_ROUTE) ? 'chat' : guessed;
}

/**
 * Whether the relay refused a FIM request for the model (rather than failing it): the refusals of a
 * protocol (protocolFallback.ts; the 404 of an upstream without `/v1/completions`, a channel with no
 * conversion for the mode), or OpenAI's refusal of a chat model on that route ("This is a chat model
 * and not supported in the v1/completions endpoint"), relayed as the gateway's JSON error.
 */
export function isFimRefusal(error: GatewayError): boolean {
  if (isProtocolRejection(error)) return true;
  return (
    error.jsonBody === true && /not supported in the v1\/completions endpoint/i.test(error.detail ?? error.message)
  );
}
