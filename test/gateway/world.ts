import { PromptCacheDouble } from './promptCache';
import type { KeySpec, Language, ModelKind, ModelSpec } from './types';

/** new-api's internal unit: 500 000 quota = US$1. Quotas are kept in it so rounding matches. */
export const QUOTA_PER_USD = 500_000;

export function usdToQuota(usd: number): number {
  return Math.round(usd * QUOTA_PER_USD);
}

/** new-api's `＄%.6f` display, with the full-width dollar sign. */
export function formatQuota(quota: number): string {
  return `＄${(quota / QUOTA_PER_USD).toFixed(6)}`;
}

export interface KeyState {
  spec: KeySpec;
  /** User quota in quota units; undefined = unlimited. */
  userQuota?: number;
  /** Token quota in quota units; undefined = unlimited. */
  tokenQuota?: number;
  /** What the key has spent, in quota units (new-api's token UsedQuota, kept for unlimited keys too). */
  usedQuota: number;
  /** Request times inside the current rate-limit window. */
  hits: number[];
  /** Requests of the key past Distribute and not yet answered in full (what MaxConcurrency counts). */
  inFlight: number;
  /** The most that were ever in flight at once. */
  peakInFlight: number;
  /** Requests refused for the concurrency limit. */
  concurrencyRefusals: number;
}

export function modelKind(model: ModelSpec): ModelKind {
  if (model.kind) return model.kind;
  const types = model.supported_endpoint_types;
  if (types.includes('openai-video')) return 'video';
  if (types.includes('image-generation')) return 'image';
  return types.length === 0 ? 'tool' : 'chat';
}

/** Keys, models and group grants: everything the gateway decides with. */
export class World {
  private readonly keys = new Map<string, KeyState>();
  readonly models = new Map<string, ModelSpec>();
  /** While set, relayed requests wait here after taking their concurrency slot (GatewayDouble.holdRelays). */
  relayHold?: Promise<void>;
  /** Model id → endpoint types its upstream refuses although the list advertises them (see protocolRefusal.ts). */
  readonly refusedEndpoints = new Map<string, Set<string>>();
  /** Model id → request fields its upstream refuses as unknown (see promptCache.ts). */
  readonly refusedFields = new Map<string, Set<string>>();
  /** The upstreams' prompt caches (promptCache.ts). */
  readonly promptCache = new PromptCacheDouble();

  constructor(
    models: readonly ModelSpec[],
    readonly groups: Readonly<Record<string, readonly string[]>>,
    keys: readonly KeySpec[],
    readonly language: Language | undefined,
  ) {
    for (const m of models) this.models.set(m.id, m);
    for (const k of keys) this.addKey(k);
  }

  addKey(spec: KeySpec): void {
    this.keys.set(storedKey(spec.key), {
      spec,
      userQuota: spec.quotaUsd === undefined ? undefined : usdToQuota(spec.quotaUsd),
      tokenQuota: spec.tokenQuotaUsd === undefined ? undefined : usdToQuota(spec.tokenQuotaUsd),
      usedQuota: 0,
      hits: [],
      inFlight: 0,
      peakInFlight: 0,
      concurrencyRefusals: 0,
    });
  }

  /** By the key as a user wrote it; throws for keys the world does not know (a test mistake). */
  state(key: string): KeyState {
    const found = this.keys.get(storedKey(key));
    if (!found) throw new Error(`gateway double: unknown key ${key}`);
    return found;
  }

  /** By the stored form new-api looks up, i.e. without `sk-` and without a `-<channel>` suffix. */
  lookup(stored: string): KeyState | undefined {
    return this.keys.get(stored);
  }

  groupModels(group: string): readonly string[] {
    return this.groups[group] ?? [];
  }

  /** The ids GET /v1/models lists for a key: its whitelist if it has one, else its group's grants. */
  visibleModels(state: KeyState): readonly string[] {
    return state.spec.modelWhitelist ?? this.groupModels(state.spec.group);
  }
}

/** new-api stores keys without the `sk-` prefix, so clients may send either form. */
function storedKey(key: string): string {
  return key.startsWith('sk-') ? key.slice(3) : key;
}
