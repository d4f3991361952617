import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import { cachedCatalog, syncCatalog, type CatalogState, type CatalogStore } from './catalogSync';
import { mergeModels } from './classify';
import type { KeyListMemory } from './keyListMemory';
import { fetchKeyModels } from './keyModels';
import { withoutRefused, type Refusable, type RefusedProtocolStore } from './protocolFallback';
import { GenerationalLoad } from '../generationalLoad';
import { keyForModel, type KeyEntry } from '../keys';
import type { KeyModel, ModelInfo } from './types';
import { words } from '../../shared/words';

/** One key's own model list, or why it could not be read. */
export interface KeyListing {
  key: KeyEntry;
  models?: KeyModel[];
  error?: GatewayError;
}

export interface RegistrySnapshot {
  models: ModelInfo[];
  /** Every model some key may call (each once); undefined when no key's list could be read. */
  keyModels?: KeyModel[];
  /** Each key's list, in the user's order. */
  keyLists?: KeyListing[];
  /** Why no key's list could be read (no key, rejected key, offline…). */
  keyError?: GatewayError;
  catalog?: CatalogState;
  /** Why no catalog could be used at all (none configured is not an error). */
  catalogError?: GatewayError;
  updatedAt: number;
}

export interface RegistryDeps {
  http: () => HttpClient;
  catalogUrl: () => string;
  store: CatalogStore;
  /** The user's keys, in their order. */
  keys: () => Promise<KeyEntry[]>;
  /** Model id → the key the user picked for it. */
  modelChoices: () => Promise<Record<string, string>>;
  /** Protocols the relay refused per model, remembered between sessions. */
  refused?: RefusedProtocolStore;
  /** Each key's last list, kept between sessions (see lastKnown). */
  keyLists?: KeyListMemory;
}

/** The merged model list, refreshed from the key's `/v1/models` and the catalog file together. */
export class ModelRegistry {
  private current: RegistrySnapshot = { models: [], updatedAt: 0 };
  /** The last list as the gateway and catalog gave it, before remembered refusals were applied. */
  private merged: ModelInfo[] = [];
  /** Invalidated when the key or the settings change: older refreshes are then stale. */
  private readonly loads = new GenerationalLoad<RegistrySnapshot>();
  private readonly listeners = new Set<(s: RegistrySnapshot) => void>();

  constructor(private readonly deps: RegistryDeps) {}

  get snapshot(): RegistrySnapshot {
    return this.current;
  }

  onDidChange(listener: (s: RegistrySnapshot) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /**
   * Concurrent callers share one refresh instead of sending the same requests twice, but never
   * one that started before the key or settings changed.
   */
  refresh(signal?: AbortSignal): Promise<RegistrySnapshot> {
    return this.loads.run((generation) => this.load(generation, signal));
  }

  /** The key or the settings changed: what is known is stale, and so is any refresh under way. */
  invalidate(): void {
    this.loads.invalidate();
  }

  /**
   * What was last seen for the current keys at this gateway, without the network: the lists kept by
   * the last read (also another window's or session's) with the cached catalog. None when no key's
   * list was ever read here. A view shows it at once and refreshes behind it.
   */
  async lastKnown(): Promise<RegistrySnapshot | undefined> {
    const origin = this.origin();
    if (!this.deps.keyLists || !origin) return undefined;
    const keys = await this.deps.keys();
    const kept = await this.deps.keyLists
      .load(
        origin,
        keys.map((k) => k.id),
      )
      .catch(() => undefined);
    if (!kept?.size) return undefined;
    const listings: KeyListing[] = keys.filter((k) => kept.has(k.id)).map((key) => ({ key, models: kept.get(key.id) }));
    const url = this.deps.catalogUrl();
    const catalog = url ? await cachedCatalog(url, this.deps.store) : undefined;
    const { snapshot } = await this.compose({ listings }, catalog, origin);
    return { ...snapshot, catalog, updatedAt: 0 };
  }

  find(id: string): ModelInfo | undefined {
    return this.current.models.find((m) => m.id === id);
  }

  /**
   * The model with its key set anew after the user picked another key for it (or went back to the
   * first, `keyId` undefined): the next requests of the model go with that key at once.
   */
  chooseKey(modelId: string, keyId: string | undefined): void {
    const apply = (m: ModelInfo): ModelInfo =>
      m.id === modelId && m.keyIds ? { ...m, keyId: keyForModel(m.keyIds, keyId) } : m;
    this.merged = this.merged.map(apply);
    this.current = { ...this.current, models: this.current.models.map(apply) };
    for (const listener of this.listeners) listener(this.current);
  }

  /**
   * The relay refused `protocol` for the model although the gateway lists it (or the upstream refused
   * a prompt-caching field, which is not sent to it again): it is left out of the model's protocols
   * from now on (at this gateway, until the refusal expires), in this window, the
   * others and the next sessions.
   */
  async refuseProtocol(modelId: string, protocol: Refusable): Promise<void> {
    const refused = (await this.deps.refused?.add(this.origin(), modelId, protocol)) ?? { [modelId]: [protocol] };
    this.current = { ...this.current, models: withoutRefused(this.merged, refused) };
    for (const listener of this.listeners) listener(this.current);
  }

  /** Forgets every remembered refusal: each model offers every protocol its gateway lists again. */
  async resetRefusals(): Promise<void> {
    await this.deps.refused?.clear();
    this.current = { ...this.current, models: this.merged };
    for (const listener of this.listeners) listener(this.current);
  }

  /** The gateway the refusals are remembered for; none while no valid base address is set. */
  private origin(): string {
    try {
      return this.deps.http().endpoints.origin;
    } catch {
      return '';
    }
  }

  /**
   * Every key's own list, read at once. Fails (with the first key's reason) only when no key's list
   * could be read: one rejected key among several is shown with that key, the others' models stay.
   */
  private async readKeyLists(http: HttpClient, signal?: AbortSignal): Promise<KeyLists> {
    const keys = await this.deps.keys();
    if (!keys.length)
      throw new GatewayError(
        'auth',
        words('No API key is set. Run "Model Gateway: Set API Key" to see the models this key may use.'),
      );
    const results = await Promise.allSettled(keys.map((key) => fetchKeyModels(http, signal, key.id)));
    const listings: KeyListing[] = results.map((r, i) => ({
      key: keys[i] as KeyEntry,
      ...(r.status === 'fulfilled' ? { models: r.value } : { error: asGatewayError(r.reason) }),
    }));
    for (const r of results) if (r.status === 'rejected' && isGatewayError(r.reason, 'cancelled')) throw r.reason;
    if (!listings.some((l) => l.models)) throw listings[0]?.error;
    return { listings };
  }

  private async load(generation: number, signal?: AbortSignal): Promise<RegistrySnapshot> {
    const http = this.deps.http();
    const url = this.deps.catalogUrl();
    const origin = this.origin();
    const [keyResult, catalogResult] = await Promise.allSettled([
      this.readKeyLists(http, signal),
      url ? syncCatalog(http, url, this.deps.store, signal) : Promise.resolve(undefined),
    ]);
    const keyLists = keyResult.status === 'fulfilled' ? keyResult.value : undefined;
    const catalog = catalogResult.status === 'fulfilled' ? catalogResult.value : undefined;
    for (const r of [keyResult, catalogResult]) {
      if (r.status === 'rejected' && isGatewayError(r.reason, 'cancelled')) throw r.reason;
    }
    const { snapshot: composed, merged } = await this.compose(keyLists, catalog, origin);
    const snapshot: RegistrySnapshot = {
      ...composed,
      keyError: keyResult.status === 'rejected' ? asGatewayError(keyResult.reason) : undefined,
      catalog,
      catalogError: catalogResult.status === 'rejected' ? asGatewayError(catalogResult.reason) : undefined,
      updatedAt: Date.now(),
    };
    if (keyLists) await this.keep(origin, keyLists);
    // A refresh that was overtaken by a key or settings change must not overwrite newer results.
    if (!this.loads.isCurrent(generation)) return this.refresh(signal);
    this.merged = merged;
    this.current = snapshot;
    for (const listener of this.listeners) listener(this.current);
    return this.current;
  }

  /** The key lists and the catalog as one model list, with each model's keys and the remembered refusals. */
  private async compose(
    keyLists: KeyLists | undefined,
    catalog: CatalogState | undefined,
    origin: string,
  ): Promise<{ snapshot: Pick<RegistrySnapshot, 'models' | 'keyModels' | 'keyLists'>; merged: ModelInfo[] }> {
    const keyModels = keyLists && unionOf(keyLists);
    const choices = keyLists ? await this.deps.modelChoices().catch(() => ({}) as Record<string, string>) : {};
    const merged = withKeys(mergeModels(keyModels, catalog?.entries), keyLists?.listings, choices);
    // Remembered refusals are hints: a store that cannot be read leaves every listed protocol in.
    const refused = (await this.deps.refused?.load(origin).catch(() => undefined)) ?? {};
    return { snapshot: { models: withoutRefused(merged, refused), keyModels, keyLists: keyLists?.listings }, merged };
  }

  /** Each key's list as read now, for the next window's first answer (a failure to keep it loses nothing). */
  private async keep(origin: string, keyLists: KeyLists): Promise<void> {
    const read = new Map(keyLists.listings.flatMap((l) => (l.models ? [[l.key.id, l.models] as const] : [])));
    if (origin) await this.deps.keyLists?.save(origin, read).catch(() => undefined);
  }
}

interface KeyLists {
  listings: KeyListing[];
}

/** Every listed model once, in the order the keys (in the user's order) list them. */
function unionOf(lists: KeyLists): KeyModel[] {
  const byId = new Map<string, KeyModel>();
  for (const listing of lists.listings) for (const m of listing.models ?? []) if (!byId.has(m.id)) byId.set(m.id, m);
  return [...byId.values()];
}

/** Each model with the keys that list it and the key it is called with. */
function withKeys(
  models: ModelInfo[],
  listings: KeyListing[] | undefined,
  choices: Record<string, string>,
): ModelInfo[] {
  if (!listings) return models;
  return models.map((m) => {
    const keyIds = listings.filter((l) => l.models?.some((k) => k.id === m.id)).map((l) => l.key.id);
    return keyIds.length ? { ...m, keyIds, keyId: keyForModel(keyIds, choices[m.id]) } : m;
  });
}

function asGatewayError(err: unknown): GatewayError {
  return isGatewayError(err)
    ? err
    : new GatewayError('protocol', err instanceof Error ? err.message : String(err), { cause: err });
}
