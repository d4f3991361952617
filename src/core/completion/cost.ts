import type { Usage } from '../chat/events';
import { DEFAULT_PROMPT_BUDGET } from './prompt';

/** USD per 1M tokens, as catalogs write a model's price. */
export interface TokenPrice {
  input?: number;
  output?: number;
}

/**
 * What a typical completion sends and gets: most of the prompt budget (the window is full in any
 * file of some length) and a line or two of answer.
 */
export const TYPICAL_COMPLETION = { inputTokens: Math.round(DEFAULT_PROMPT_BUDGET * 0.75), outputTokens: 40 };

/** The cost in USD of the tokens of one completion at `price`; undefined when the price is not known. */
export function completionCost(usage: Usage, price: TokenPrice | undefined): number | undefined {
  if (price?.input === undefined || price.output === undefined) return undefined;
  return ((usage.inputTokens ?? 0) * price.input + (usage.outputTokens ?? 0) * price.output) / 1e6;
}

/** What 100 typical completions cost at `price`, for the offer; undefined when the price is not known. */
export function costPer100(price: TokenPrice | undefined): number | undefined {
  const one = completionCost(TYPICAL_COMPLETION, price);
  return one === undefined ? undefined : one * 100;
}
