/**
 * The request fields prompt caching adds (chat/promptCache.ts), in a module of their own: the
 * refusal memory, which activation loads, names them without loading the request builders.
 */
import type { PromptCacheRequest } from './promptCache';

/** The request fields caching adds; an upstream that refuses one never gets it again (see refusalMemory.ts). */
export const CACHE_FIELDS = ['cacheControl', 'promptCacheKey'] as const;
export type CacheField = (typeof CACHE_FIELDS)[number];

/** The name each field has on the wire, as an upstream's refusal names it. */
export const CACHE_FIELD_WIRE_NAMES: Record<CacheField, string> = {
  cacheControl: 'cache_control',
  promptCacheKey: 'prompt_cache_key',
};

/** The fields a request asking `cache` carries. */
export function cacheFieldsOf(cache: PromptCacheRequest | undefined): CacheField[] {
  return [...(cache?.breakpoints ? ['cacheControl' as const] : []), ...(cache?.key ? ['promptCacheKey' as const] : [])];
}
