import * as l10n from '@vscode/l10n';
import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import { syncCatalog, type CatalogState, type CatalogStore } from './catalogSync';
import { mergeModels } from './classify';
import { fetchKeyModels } from './keyModels';
import { withoutRefused, type RefusedProtocolStore } from './protocolFallback';
import { GenerationalLoad } from '../generationalLoad';
import type { ChatProtocol, KeyModel, ModelInfo } from './types';

export interface RegistrySnapshot {
  models: ModelInfo[];
  keyModels?: KeyModel[];
  /** Why the key's list could not be read (no key, rejected key, offline…). */
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
  hasKey: () => Promise<boolean>;
  /** Protocols the relay refused per model, remembered between sessions. */
  refused?: RefusedProtocolStore;
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

  find(id: string): ModelInfo | undefined {
    return this.current.models.find((m) => m.id === id);
  }

  /**
   * The relay refused `protocol` for the model although the gateway lists it: it is left out of the
   * model's protocols from now on (at this gateway, until the refusal expires), in this window, the
   * others and the next sessions.
   */
  async refuseProtocol(modelId: string, protocol: ChatProtocol): Promise<void> {
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

  private async load(generation: number, signal?: AbortSignal): Promise<RegistrySnapshot> {
    const http = this.deps.http();
    const url = this.deps.catalogUrl();
    const [keyResult, catalogResult] = await Promise.allSettled([
      this.deps.hasKey().then((has) => {
        if (!has) throw new GatewayError('auth', l10n.t('No API key is set. Run "Model Gateway: Set API Key" to see the models this key may use.'));
        return fetchKeyModels(http, signal);
      }),
      url ? syncCatalog(http, url, this.deps.store, signal) : Promise.resolve(undefined),
    ]);
    const keyModels = keyResult.status === 'fulfilled' ? keyResult.value : undefined;
    const catalog = catalogResult.status === 'fulfilled' ? catalogResult.value : undefined;
    for (const r of [keyResult, catalogResult]) {
      if (r.status === 'rejected' && isGatewayError(r.reason, 'cancelled')) throw r.reason;
    }
    const merged = mergeModels(keyModels, catalog?.entries);
    // Remembered refusals are hints: a store that cannot be read leaves every listed protocol in.
    const refused = (await this.deps.refused?.load(this.origin()).catch(() => undefined)) ?? {};
    const snapshot: RegistrySnapshot = {
      models: withoutRefused(merged, refused),
      keyModels,
      keyError: keyResult.status === 'rejected' ? asGatewayError(keyResult.reason) : undefined,
      catalog,
      catalogError: catalogResult.status === 'rejected' ? asGatewayError(catalogResult.reason) : undefined,
      updatedAt: Date.now(),
    };
    // A refresh that was overtaken by a key or settings change must not overwrite newer results.
    if (!this.loads.isCurrent(generation)) return this.refresh(signal);
    this.merged = merged;
    this.current = snapshot;
    for (const listener of this.listeners) listener(this.current);
    return this.current;
  }
}

function asGatewayError(err: unknown): GatewayError {
  return isGatewayError(err) ? err : new GatewayError('protocol', err instanceof Error ? err.message : String(err), { cause: err });
}
