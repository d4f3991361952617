import { parseSize, resolutionTier } from '../../shared/mediaSize';
import type { Usage } from '../chat/events';
import { answerCost, type TokenPrice } from '../chat/tokenCost';

/** Per-call billing of the provider tools (US$0.10 per call unless priced separately). */
export const DEFAULT_CALL_PRICE_USD = 0.1;

export type BilledTool = 'parse' | 'ocr' | 'upload' | 'search' | 'read';

export interface BillingEntry {
  tool: BilledTool;
  at: number;
  usd: number;
}

/** Tokens of the answers given to VS Code's own chat in this session, as the gateway reported them. */
export interface ChatTokenFigures {
  answers: number;
  inputTokens: number;
  outputTokens: number;
  /** Of the input tokens, those read from the upstream's prompt cache. */
  cachedInputTokens: number;
  /** What the answers with a known price cost, at the catalog's prices (cache prices where it has them). */
  estimatedUsd: number;
  /** Answers the catalog gives no price for: not in `estimatedUsd`. */
  unpricedAnswers: number;
  /** Answers whose cached tokens are in `estimatedUsd` at the input price: the cache price is unknown. */
  cacheUnpricedAnswers: number;
}

const noTokens = (): ChatTokenFigures => ({
  answers: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  estimatedUsd: 0,
  unpricedAnswers: 0,
  cacheUnpricedAnswers: 0,
});

/**
 * What the session generated. Images and videos are priced per model by the gateway and the client
 * is told no price, so they are counted, not summed into the amount: images by count, videos by the
 * factors video is billed by (model, duration, resolution tier).
 */
export interface MediaFigures {
  images: number;
  videos: number;
  /** Seconds of video by resolution tier (`480P`, `720P`, `1080P`; `other` for a size outside them). */
  videoSeconds: Record<string, number>;
  /** Accepted tasks that failed afterwards: left out of the figures above, as the gateway may refund them. */
  failedVideos: number;
}

/** Counts the billed calls, generated media and VS Code chat tokens of this session, for the status-bar tooltip. */
/** Inline completions of the session: how many, their tokens, their cost where the price is known. */
export interface CompletionFigures {
  count: number;
  inputTokens: number;
  outputTokens: number;
  usd: number;
  /** Completions of a model whose price is not known (not in `usd`). */
  unpriced: number;
}

export class BillingMeter {
  readonly entries: BillingEntry[] = [];
  private readonly tokens = noTokens();
  private readonly sidebarTokens = noTokens();
  private readonly mediaFigures: MediaFigures = { images: 0, videos: 0, videoSeconds: {}, failedVideos: 0 };
  private readonly completionFigures: CompletionFigures = {
    count: 0,
    inputTokens: 0,
    outputTokens: 0,
    usd: 0,
    unpriced: 0,
  };
  private readonly listeners = new Set<() => void>();

  record(tool: BilledTool, usd = DEFAULT_CALL_PRICE_USD): void {
    this.entries.push({ tool, at: Date.now(), usd });
    this.changed();
  }

  /**
   * One answer's usage, from VS Code's own chat or from the extension's sidebar chat; a figure the
   * gateway left out counts as 0 (the log says which were missing). `price` is the model's, from
   * the catalog, when it has one.
   */
  recordChatTokens(usage: Usage, from: 'vscode' | 'sidebar' = 'vscode', price?: TokenPrice): void {
    const t = from === 'sidebar' ? this.sidebarTokens : this.tokens;
    t.answers += 1;
    t.inputTokens += countOf(usage.inputTokens);
    t.outputTokens += countOf(usage.outputTokens);
    t.cachedInputTokens += countOf(usage.cachedInputTokens);
    const cost = answerCost(usage, price);
    if (!cost) t.unpricedAnswers += 1;
    else {
      t.estimatedUsd += cost.usd;
      if (!cost.cachePriceKnown) t.cacheUnpricedAnswers += 1;
    }
    this.changed();
  }

  /** Images saved from one generation. */
  recordImages(_model: string, count: number): void {
    if (!(count > 0)) return;
    this.mediaFigures.images += Math.floor(count);
    this.changed();
  }

  /** A video task the gateway accepted (it bills at acceptance): its duration counts under the size's resolution tier. */
  recordVideo(_model: string, size: string, durationSec: number): void {
    const parsed = parseSize(size);
    const tier = (parsed && resolutionTier(parsed)) ?? 'other';
    this.mediaFigures.videos += 1;
    this.mediaFigures.videoSeconds[tier] = (this.mediaFigures.videoSeconds[tier] ?? 0) + countOf(durationSec);
    this.changed();
  }

  /**
   * A task recorded by recordVideo failed on the gateway: it leaves the billed figures (the gateway
   * may refund it) and is counted apart, so the session line does not claim it was paid for.
   */
  recordVideoFailed(size: string, durationSec: number): void {
    const parsed = parseSize(size);
    const tier = (parsed && resolutionTier(parsed)) ?? 'other';
    if (this.mediaFigures.videos > 0) this.mediaFigures.videos -= 1;
    this.mediaFigures.videoSeconds[tier] = Math.max(
      0,
      (this.mediaFigures.videoSeconds[tier] ?? 0) - countOf(durationSec),
    );
    this.mediaFigures.failedVideos += 1;
    this.changed();
  }

  get media(): Readonly<MediaFigures> {
    return { ...this.mediaFigures, videoSeconds: { ...this.mediaFigures.videoSeconds } };
  }

  get chatTokens(): Readonly<ChatTokenFigures> {
    return { ...this.tokens };
  }

  /**
   * An answer of the sidebar chat, so the session's figures count it as they count VS Code chat's:
   * the tokens this stream used (the answer's usage less what it had before a Continue).
   */
  recordSidebarAnswer(usage: Usage | undefined, before?: Usage, price?: TokenPrice): void {
    this.recordChatTokens(usageSince(before, usage), 'sidebar', price);
  }

  /**
   * One inline completion's tokens and, where the model's price is known, its cost: completions
   * are many and small, so they get their own figures.
   */
  recordCompletion(usage: { inputTokens?: number; outputTokens?: number }, usd: number | undefined): void {
    const c = this.completionFigures;
    c.count += 1;
    c.inputTokens += countOf(usage.inputTokens);
    c.outputTokens += countOf(usage.outputTokens);
    if (usd !== undefined && Number.isFinite(usd) && usd > 0) c.usd += usd;
    else c.unpriced += 1;
    this.changed();
  }

  get completions(): Readonly<CompletionFigures> {
    return { ...this.completionFigures };
  }

  /** The sidebar chat's answers, counted apart from VS Code's chat. */
  get sidebarChatTokens(): Readonly<ChatTokenFigures> {
    return { ...this.sidebarTokens };
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  get calls(): number {
    return this.entries.length;
  }

  get usd(): number {
    return Math.round(this.entries.reduce((sum, e) => sum + e.usd, 0) * 100) / 100;
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
}

function countOf(n: number | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** What one stream used: the answer's usage less what it had before (a Continue adds to an answer). */
export function usageSince(
  before: Usage | undefined,
  after: Usage | undefined,
): { inputTokens: number; outputTokens: number; cachedInputTokens: number; cacheWriteTokens: number } {
  const since = (key: 'inputTokens' | 'outputTokens' | 'cachedInputTokens' | 'cacheWriteTokens') =>
    Math.max(0, countOf(after?.[key]) - countOf(before?.[key]));
  return {
    inputTokens: since('inputTokens'),
    outputTokens: since('outputTokens'),
    cachedInputTokens: since('cachedInputTokens'),
    cacheWriteTokens: since('cacheWriteTokens'),
  };
}
