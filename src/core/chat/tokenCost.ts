import type { Usage } from './events';

/** A model's token prices in US$ per million tokens, as catalogs write them. */
export interface TokenPrice {
  input?: number;
  output?: number;
  /** The price of an input token read from the prompt cache. */
  cacheRead?: number;
  /** The price of an input token written to the prompt cache. */
  cacheWrite?: number;
}

export interface CostEstimate {
  usd: number;
  /**
   * False when the answer used the cache and its cache price is unknown: the cached tokens are then
   * counted at the input price, as new-api bills a model it has no cache ratio for (no discount).
   */
  cachePriceKnown: boolean;
}

/**
 * What an answer costs at `price`, or undefined without an input and an output price. new-api bills
 * (input − cached) at the input price plus cached × the model's cache ratio, and writes to the cache
 * (Claude) at their own ratio; a model without a ratio gets no discount.
 */
export function answerCost(usage: Usage, price: TokenPrice | undefined): CostEstimate | undefined {
  if (price?.input === undefined || price.output === undefined) return undefined;
  const input = usage.inputTokens ?? 0;
  const cached = Math.min(usage.cachedInputTokens ?? 0, input);
  const written = Math.min(usage.cacheWriteTokens ?? 0, input - cached);
  const fresh = input - cached - written;
  const usd =
    (fresh * price.input +
      cached * (price.cacheRead ?? price.input) +
      written * (price.cacheWrite ?? price.input) +
      (usage.outputTokens ?? 0) * price.output) /
    1_000_000;
  const cachePriceKnown =
    (cached === 0 || price.cacheRead !== undefined) && (written === 0 || price.cacheWrite !== undefined);
  return { usd, cachePriceKnown };
}
