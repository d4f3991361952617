/**
 * Prompt caching, asked for in the form each upstream family takes. Every family the gateway fronts
 * can reuse a prefix it has already seen, when that prefix is byte-identical (the request builders
 * put the stable parts first and the conversation last, tools in a stable order):
 * - Anthropic caches only at `cache_control` breakpoints: at most 4, over tools, then system, then
 *   messages, and only a prefix past the model's minimum length (Anthropic's prompt caching guide,
 *   https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).
 * - Qwen on Bailian caches implicitly, and explicitly, for less, at `cache_control` markers in
 *   Chat Completions messages from 1024 tokens; a request uses one or the other (Alibaba Cloud
 *   Model Studio, "Context cache", https://www.alibabacloud.com/help/en/model-studio/context-cache).
 * - OpenAI caches prefixes by itself; `prompt_cache_key` routes a conversation's requests to the
 *   same cache (OpenAI's prompt caching guide, https://platform.openai.com/docs/guides/prompt-caching).
 * - DeepSeek, Kimi and GLM cache by themselves, with no field to send.
 */
import { createHash } from 'node:crypto';
import type { CacheField } from './cacheFields';
import type { ChatProtocol, ModelInfo } from '../models/types';
import { thinkingFamily } from './thinking';
import { estimateTokens } from './tokenEstimate';

/** What a request asks of the upstream's prompt cache, in its family's form. */
export interface PromptCacheRequest {
  /**
   * Send `prompt_cache_key` (Responses and Chat Completions), made from `conversation` when given,
   * else from the request's start (`promptCacheKey`).
   */
  key?: { conversation?: string };
  /** `cache_control` breakpoints (Messages, and Chat Completions messages), placed past `minTokens`. */
  breakpoints?: { minTokens: number };
}

/** The most breakpoints one request may carry (Anthropic, and Qwen's explicit cache). */
export const MAX_BREAKPOINTS = 4;

/**
 * The minimum cacheable prefix of a Claude model: 4096 tokens for Haiku 4.5 and Opus 4.5 on, 2048
 * for the Claude 3 Haikus, 1024 for the others (Anthropic's prompt caching guide, "Cache limitations").
 * A prefix below it is not cached, and no error says so.
 */
function claudeMinimum(id: string): number {
  if (/haiku-4-5|opus-4-[5-9]/i.test(id)) return 4096;
  if (/claude-3(-5)?-haiku/i.test(id)) return 2048;
  return 1024;
}

/** Qwen's explicit cache takes a prefix from 1024 tokens. */
const QWEN_MINIMUM = 1024;

export interface PromptCacheOptions {
  /** The `modelGateway.chat.promptCaching` setting. */
  enabled: boolean;
  /** A stable id of the conversation (the sidebar's); absent, one is derived from the request's start. */
  conversation?: string;
  /** Fields left out of this request: its upstream has just refused them. */
  without?: readonly CacheField[];
}

/**
 * What to ask of `model`'s cache over `protocol`, or undefined when its family needs nothing sent
 * (its automatic cache is served by the stable prefix alone) or caching requests are off. Fields
 * the model's upstream refused (`model.refusedFields`) are left out.
 */
export function promptCacheRequest(
  model: ModelInfo,
  protocol: ChatProtocol,
  options: PromptCacheOptions,
): PromptCacheRequest | undefined {
  if (!options.enabled) return undefined;
  const refused = [...(model.refusedFields ?? []), ...(options.without ?? [])];
  const out: PromptCacheRequest = {};
  const family = thinkingFamily(model);
  const breakpoints =
    family === 'anthropic' || /claude/i.test(model.id)
      ? protocol !== 'responses' && claudeMinimum(model.id)
      : family === 'bailian' && /^qwen/i.test(model.id) && protocol === 'chatCompletions' && QWEN_MINIMUM;
  if (breakpoints && !refused.includes('cacheControl')) out.breakpoints = { minTokens: breakpoints };
  if (family === 'openai' && protocol !== 'messages' && !refused.includes('promptCacheKey'))
    out.key = options.conversation ? { conversation: options.conversation } : {};
  return out.breakpoints || out.key ? out : undefined;
}

/**
 * The `prompt_cache_key` of a conversation: a digest of its id, or, for VS Code's chat (whose
 * requests carry no conversation id), of the system text and the first message, which every
 * request of one conversation starts with. Nothing of the conversation's own words goes out.
 */
export function promptCacheKey(
  request: { system?: string; messages: ReadonlyArray<{ content: string }> },
  conversation?: string,
): string {
  return createHash('sha256')
    .update(
      conversation
        ? `conversation:${conversation}`
        : `start:${JSON.stringify([request.system ?? '', request.messages[0]?.content ?? ''])}`,
    )
    .digest('base64url')
    .slice(0, 32);
}

/** An ephemeral `cache_control` marker (the 5-minute cache, renewed by every hit). */
export function cacheMarker(): { type: 'ephemeral' } {
  return { type: 'ephemeral' };
}

/**
 * Counts a prefix's tokens piece by piece, and says when they pass `minimum`: a long agent session
 * sends megabytes, and only whether the minimum is reached matters.
 */
export class PrefixLength {
  private tokens = 0;

  constructor(private readonly minimum: number) {}

  /** Adds `text` (or the JSON of a value) to the prefix; true once it has reached the minimum. */
  add(piece: unknown): boolean {
    if (this.reached()) return true;
    this.tokens += estimateTokens(typeof piece === 'string' ? piece : JSON.stringify(piece ?? ''));
    return this.reached();
  }

  reached(): boolean {
    return this.tokens >= this.minimum;
  }
}
