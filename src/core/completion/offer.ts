import type { ModelInfo } from '../models/types';
import type { RefusedProtocols } from '../models/protocolFallback';
import { costPer100 } from './cost';
import { completionPath } from './learning';

/**
 * The models completion is offered with, in the order offered: the chat models this key may use,
 * those that take fill-in-the-middle (made for completion) before those that complete over chat,
 * each group cheapest first (a completion is asked for at every pause in typing), unknown prices last.
 */
export function completionCandidates(
  models: readonly ModelInfo[],
  refused: RefusedProtocols,
): { model: ModelInfo; fim: boolean }[] {
  const usable = models.filter((m) => m.available && m.kind === 'chat');
  const fim = (m: ModelInfo) => completionPath(m.id, refused) !== 'chat';
  const price = (m: ModelInfo) => costPer100(m.catalog?.cost) ?? Number.POSITIVE_INFINITY;
  const cheapestFirst = (group: ModelInfo[]) => [...group].sort((a, b) => price(a) - price(b));
  return [...cheapestFirst(usable.filter(fim)), ...cheapestFirst(usable.filter((m) => !fim(m)))].map((model) => ({
    model,
    fim: fim(model),
  }));
}

/**
 * The model of the one offer made after a key is set, or undefined when none is made: completion has
 * a model already (the user chose), the offer was made before (made once; dismissed is declined), or
 * no model of this key takes fill-in-the-middle (a chat model is never suggested unasked: it completes
 * slower and worse; the palette, the status item and the Models view still offer every model).
 */
export function afterKeyOffer(
  models: readonly ModelInfo[],
  refused: RefusedProtocols,
  state: { chosenModel: string; offeredBefore: boolean },
): ModelInfo | undefined {
  if (state.chosenModel || state.offeredBefore) return undefined;
  return completionCandidates(models, refused).find((c) => c.fim)?.model;
}
