/**
 * The upstreams' prompt caches, closely enough to measure what a client's requests get from them.
 * A request is read as blocks in the order the upstreams cache them (tools and system first, then
 * each turn), with `cache_control` markers taken out of the content (a marker says where to cache,
 * it is not content). An entry is a prefix of blocks, keyed by the API key, the model and the
 * `prompt_cache_key` when one is sent, kept for five minutes from its last use.
 * - Explicit (Anthropic, and Qwen when a request carries markers): an entry is written only at a
 *   `cache_control` breakpoint whose prefix has the minimum length; each breakpoint reads the
 *   longest entry among the 20 block boundaries before it; more than 4 breakpoints are refused
 *   (Anthropic's prompt caching guide; Alibaba Cloud Model Studio, "Context cache").
 * - Automatic (OpenAI, DeepSeek, Kimi, GLM, Qwen's implicit cache): every block boundary past the
 *   minimum is written; the longest entry the request starts with is read.
 * The cached tokens come back in each protocol's usage shape (the routes), the written ones too.
 */
import { createHash } from 'node:crypto';
import type { GatewayContext } from './route';
import { estimateTokens } from './routes/echo';

/** Five minutes: Anthropic's default lifetime, Qwen's explicit one, OpenAI's usual inactivity limit. */
export const CACHE_LIFETIME_MS = 5 * 60 * 1000;
export const MAX_BREAKPOINTS = 4;
/** How far back (in blocks) a breakpoint looks for an entry (Anthropic's 20-block lookback). */
const LOOKBACK = 20;

export interface CacheRules {
  /** Whether markers decide what is cached (else every boundary is). */
  explicit: boolean;
  minTokens: number;
}

/** The family's rules, from the model's owner and whether the request carries markers. */
export function cacheRules(ownedBy: string, marked: boolean): CacheRules {
  if (ownedBy === 'claude') return { explicit: true, minTokens: 1024 };
  if (ownedBy === 'ali') return marked ? { explicit: true, minTokens: 1024 } : { explicit: false, minTokens: 256 };
  return { explicit: false, minTokens: 1024 };
}

/** One block: its JSON without markers, its tokens, and whether it carried a marker (how many). */
interface Block {
  text: string;
  tokens: number;
  markers: number;
}

export interface CacheAccount {
  /** Input tokens read from the cache. */
  cachedTokens: number;
  /** Input tokens written to the cache (reported by Anthropic's usage only). */
  writeTokens: number;
}

export type CacheOutcome = { ok: true; account: CacheAccount } | { ok: false; message: string };

/** The blocks of a request body of any of the three protocols, in cache order. */
export function cacheBlocks(body: Record<string, unknown>): Block[] {
  const blocks: Block[] = [];
  const add = (value: unknown) => {
    let markers = 0;
    const text = JSON.stringify(value, (key, v: unknown) => {
      if (key === 'cache_control') {
        markers++;
        return undefined;
      }
      return v;
    });
    if (text !== undefined) blocks.push({ text, tokens: estimateTokens(text), markers });
  };
  for (const tool of Array.isArray(body.tools) ? body.tools : []) add(tool);
  if (body.system !== undefined) add(body.system);
  if (body.instructions !== undefined) add(body.instructions);
  const turns = (body.messages ?? body.input) as unknown;
  for (const turn of Array.isArray(turns) ? turns : []) add(turn);
  return blocks;
}

export class PromptCacheDouble {
  private readonly entries = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** What `body` reads from and writes to the cache of `scope` (key, model, cache key). */
  account(scope: string, ownedBy: string, body: Record<string, unknown>): CacheOutcome {
    const blocks = cacheBlocks(body);
    const markers = blocks.reduce((n, b) => n + b.markers, 0);
    if (markers > MAX_BREAKPOINTS)
      return {
        ok: false,
        message: `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${markers}.`,
      };
    const rules = cacheRules(ownedBy, markers > 0);
    const now = this.now();
    for (const [k, expires] of this.entries) if (expires <= now) this.entries.delete(k);
    // The digest of each prefix (blocks 0..i) and its tokens.
    const hash = createHash('sha256').update(scope);
    const prefixes: Array<{ key: string; tokens: number }> = [];
    let tokens = 0;
    for (const b of blocks) {
      hash.update(b.text);
      tokens += b.tokens;
      prefixes.push({ key: hash.copy().digest('base64'), tokens });
    }
    const writeAt = prefixes
      .map((_, i) => i)
      .filter((i) => (rules.explicit ? (blocks[i]?.markers ?? 0) > 0 : true))
      .filter((i) => (prefixes[i]?.tokens ?? 0) >= rules.minTokens);
    let cached = 0;
    for (const at of rules.explicit ? writeAt : [prefixes.length - 1]) {
      for (let i = at; i >= 0 && (!rules.explicit || at - i < LOOKBACK); i--) {
        const p = prefixes[i];
        if (p && this.entries.has(p.key)) {
          cached = Math.max(cached, p.tokens);
          this.entries.set(p.key, now + CACHE_LIFETIME_MS);
          break;
        }
      }
    }
    let written = 0;
    for (const at of writeAt) {
      const p = prefixes[at];
      if (!p || this.entries.has(p.key)) continue;
      this.entries.set(p.key, now + CACHE_LIFETIME_MS);
      written = Math.max(written, p.tokens);
    }
    return { ok: true, account: { cachedTokens: cached, writeTokens: Math.max(0, written - cached) } };
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The cache account of a relayed chat request (in the route's own token count), or why it is refused. */
export function relayedCacheAccount(
  ctx: GatewayContext,
  body: Record<string, unknown>,
  promptTokens: number,
): CacheOutcome & { param?: string } {
  // A model whose upstream refuses fields it does not know (OpenAI's own wording), relayed by new-api.
  for (const field of ctx.world.refusedFields.get(ctx.model.id) ?? [])
    if (JSON.stringify(body).includes(`"${field}"`))
      return { ok: false, message: `Unrecognized request argument supplied: ${field}`, param: field };
  const key = typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : '';
  const out = ctx.world.promptCache.account(`${ctx.key.spec.key}\n${ctx.model.id}\n${key}`, ctx.model.owned_by, body);
  if (!out.ok) return out;
  // The blocks are counted over their JSON, the route over the prompt's text: the shares carry over.
  const total = cacheBlocks(body).reduce((n, b) => n + b.tokens, 0) || 1;
  const share = (n: number) => Math.min(promptTokens, Math.round((promptTokens * n) / total));
  const cachedTokens = share(out.account.cachedTokens);
  return {
    ok: true,
    account: { cachedTokens, writeTokens: Math.min(promptTokens - cachedTokens, share(out.account.writeTokens)) },
  };
}
