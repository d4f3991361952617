import * as vscode from 'vscode';
import type { HttpClient } from '../core/http';
import type { HttpRequest } from '../core/httpTypes';
import type { KeyEntry } from '../core/keys';
import { GenerationalLoad } from '../core/generationalLoad';
import type { RegistrySnapshot } from '../core/models/modelRegistry';
import { fetchKeyQuota, quotaRefusalNote, type KeyQuota, type QuotaResult, type QuotaSource } from '../core/quota';
import { SECTION } from './settings';
import type { Said } from '../shared/words';

/** Where the key's quota is shown: nowhere (and never asked for), the status bar tooltip, or its text too. */
export type QuotaDisplay = 'off' | 'tooltip' | 'statusBar';

/** `modelGateway.quota.show`; an unknown value reads as the default. */
export function quotaDisplay(): QuotaDisplay {
  const value = vscode.workspace.getConfiguration(SECTION).get<string>('quota.show');
  return value === 'off' || value === 'statusBar' ? value : 'tooltip';
}

/** The slow refresh while a figure is shown and the window has focus. */
export const QUOTA_REFRESH_MS = 10 * 60 * 1000;
/** Billed calls often come in bursts (an agent's tool calls): one read after the last of them. */
export const QUOTA_DEBOUNCE_MS = 2000;
/** How long a refusal for quota waits for a fresh figure before it is shown without one. */
const NOTE_WAIT_MS = 5000;

/** The timers the watcher waits with (tests give their own, to decide when a wait is over). */
export interface QuotaTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: QuotaTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface QuotaWatcherDeps {
  http: () => HttpClient;
  /** The user's keys, in their order: each has its own quota. */
  keys: () => Promise<KeyEntry[]>;
  /** The id of the key a request goes with. */
  keyOf: (req: Pick<HttpRequest, 'key' | 'model'>) => Promise<string | undefined>;
  log: vscode.LogOutputChannel;
  /** The debounce and the slow refresh; the real ones unless given. */
  timers?: QuotaTimers;
}

/** One key's figures, as the status bar tooltip and the Models view list them. */
export interface KeyQuotaShown {
  key: KeyEntry;
  quota: KeyQuota;
}

/**
 * Keeps the key's quota for the status bar, the Models view and Check Connection. It asks the gateway
 * only when there is something to show it in: after the key's model list was read (never on
 * activation), after billed calls (debounced), every ten minutes while the window has focus and a
 * figure is shown, and when asked. A gateway without the endpoints hides the figure with one log line;
 * nothing more is tried until the models are read again.
 */
export class QuotaWatcher implements vscode.Disposable {
  /** Each key's last answer, by key id, in the user's order of keys. */
  private results = new Map<string, { key: KeyEntry; result: QuotaResult }>();
  /** Invalidated when the key or the settings change, so an answer for the old key is dropped. */
  private readonly loads = new GenerationalLoad<QuotaResult | undefined>();
  private preferred?: QuotaSource;
  private lastReason?: string;
  private lastModelsRead = 0;
  private timer?: unknown;
  private debounce?: unknown;
  private readonly timers: QuotaTimers;
  private billedCalls = 0;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly deps: QuotaWatcherDeps) {
    this.timers = deps.timers ?? realTimers;
    this.subscriptions = [
      this.changed,
      vscode.window.onDidChangeWindowState((state) => this.focusChanged(state.focused)),
    ];
  }

  /** The first key's figures to show, or undefined (turned off, not known, or the gateway does not tell). */
  get current(): KeyQuota | undefined {
    const first = this.results.values().next().value;
    return first ? this.shown(first.result) : undefined;
  }

  /** The figures of the key `keyId`, as `current`. */
  forKey(keyId: string): KeyQuota | undefined {
    const entry = this.results.get(keyId);
    return entry ? this.shown(entry.result) : undefined;
  }

  /** Every key's figures that are known, in the user's order of keys. */
  all(): KeyQuotaShown[] {
    return [...this.results.values()].flatMap(({ key, result }) => {
      const quota = this.shown(result);
      return quota ? [{ key, quota }] : [];
    });
  }

  private shown(result: QuotaResult): KeyQuota | undefined {
    return quotaDisplay() !== 'off' && result.available ? result.quota : undefined;
  }

  /** Whether the last answers said the gateway does not tell quotas at all. */
  private get unavailable(): boolean {
    return this.results.size > 0 && [...this.results.values()].every((r) => !r.result.available);
  }

  /** The key or the settings changed: what is known belongs to another key or gateway, until the models are read again. */
  reset(): void {
    this.loads.invalidate();
    this.lastModelsRead = 0;
    this.stopTimers();
    this.preferred = undefined;
    this.lastReason = undefined;
    if (this.results.size) {
      this.results = new Map();
      this.changed.fire();
    }
  }

  /** Called with every model refresh: a fresh list for the key means the gateway answers it, so read the quota too. */
  modelsRead(snap: RegistrySnapshot): void {
    if (!snap.keyModels || snap.updatedAt === this.lastModelsRead) return;
    this.lastModelsRead = snap.updatedAt;
    void this.refresh();
  }

  /**
   * What the watcher has been told and is waiting for, for tests that must know a read will not
   * come (rather than wait a while to see none): how many billed calls it heard of, and whether a
   * read is waiting for calls to pause or under way.
   */
  get activity(): { billedCalls: number; readPending: boolean } {
    return { billedCalls: this.billedCalls, readPending: this.debounce !== undefined || this.loads.busy };
  }

  /** A billed call is over: read the figures again once the calls have paused. */
  afterBilledCall(): void {
    this.billedCalls++;
    if (quotaDisplay() === 'off' || this.unavailable) return;
    if (this.debounce) this.timers.clear(this.debounce);
    this.debounce = this.timers.set(() => {
      this.debounce = undefined;
      void this.refresh();
    }, QUOTA_DEBOUNCE_MS);
  }

  /**
   * Reads every key's figures now (sharing a read already under way); answers the first key's. Undefined
   * when turned off, without a key, or when the keys changed meanwhile; failures never throw.
   */
  refresh(signal?: AbortSignal): Promise<QuotaResult | undefined> {
    if (quotaDisplay() === 'off') return Promise.resolve(undefined);
    return this.loads.run((generation) => this.load(generation, signal));
  }

  /** For a refusal for quota of the request's key: a fresh figure if one comes quickly, else nothing. */
  async refusalNote(req: Pick<HttpRequest, 'key' | 'model'> = {}): Promise<Said | undefined> {
    const keyId = await this.deps.keyOf(req);
    if (keyId === undefined) return undefined;
    let wait: unknown;
    const late = new Promise<undefined>((resolve) => (wait = this.timers.set(() => resolve(undefined), NOTE_WAIT_MS)));
    await Promise.race([this.refresh(), late]).finally(() => this.timers.clear(wait));
    const quota = this.forKey(keyId);
    return quota ? quotaRefusalNote(quota) : undefined;
  }

  private async load(generation: number, signal?: AbortSignal): Promise<QuotaResult | undefined> {
    const results = new Map<string, { key: KeyEntry; result: QuotaResult }>();
    try {
      const keys = await this.deps.keys();
      if (!keys.length) return undefined;
      // One key after the other: the first answer tells which source the others are asked first.
      for (const key of keys) {
        const result = await fetchKeyQuota(this.deps.http(), { signal, prefer: this.preferred, key: key.id });
        if (result.available) this.preferred = result.quota.source;
        results.set(key.id, { key, result });
      }
    } catch (err) {
      // A cancellation or a missing base address: nothing learned, nothing to change.
      this.deps.log.info(`Key quota not read: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    if (!this.loads.isCurrent(generation)) return undefined;
    const first = results.values().next().value?.result as QuotaResult;
    if (first.available) {
      this.lastReason = undefined;
    } else if (first.reason !== this.lastReason) {
      this.lastReason = first.reason;
      // Many gateways do not offer these endpoints: one line in the log, nothing in the user's way.
      this.deps.log.info(`The gateway does not tell the key's quota (${first.reason}); the figure is hidden.`);
    }
    this.results = results;
    this.schedule();
    this.changed.fire();
    return first;
  }

  private schedule(): void {
    if (this.timer) this.timers.clear(this.timer);
    this.timer = undefined;
    if (this.current === undefined || !vscode.window.state.focused) return;
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      void this.refresh();
    }, QUOTA_REFRESH_MS);
  }

  /** Without focus no timer runs; on return, figures older than the interval are read again. */
  private focusChanged(focused: boolean): void {
    if (!focused) {
      if (this.timer) this.timers.clear(this.timer);
      this.timer = undefined;
      return;
    }
    const current = this.current;
    if (!current || this.timer || this.loads.busy) return;
    if (Date.now() - current.checkedAt >= QUOTA_REFRESH_MS) void this.refresh();
    else this.schedule();
  }

  private stopTimers(): void {
    if (this.timer) this.timers.clear(this.timer);
    if (this.debounce) this.timers.clear(this.debounce);
    this.timer = undefined;
    this.debounce = undefined;
  }

  dispose(): void {
    this.stopTimers();
    for (const s of this.subscriptions) s.dispose();
  }
}
