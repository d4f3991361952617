import type { RefusedProtocols } from '../models/protocolFallback';
import { guessedPath, type CompletionPath } from './fim';

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
