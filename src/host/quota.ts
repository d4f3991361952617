import * as vscode from 'vscode';
import type { HttpClient } from '../core/http';
import { GenerationalLoad } from '../core/generationalLoad';
import type { RegistrySnapshot } from '../core/models/modelRegistry';
import { fetchKeyQuota, quotaRefusalNote, type KeyQuota, type QuotaResult, type QuotaSource } from '../core/quota';
import { SECTION } from './settings';

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
  hasKey: () => Promise<boolean>;
  log: vscode.LogOutputChannel;
  /** The debounce and the slow refresh; the real ones unless given. */
  timers?: QuotaTimers;
}

/**
 * Keeps the key's quota for the status bar, the Models view and Check Connection. It asks the gateway
 * only when there is something to show it in: after the key's model list was read (never on
 * activation), after billed calls (debounced), every ten minutes while the window has focus and a
 * figure is shown, and when asked. A gateway without the endpoints hides the figure with one log line;
 * nothing more is tried until the models are read again.
 */
export class QuotaWatcher implements vscode.Disposable {
  private result?: QuotaResult;
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
    this.subscriptions = [this.changed, vscode.window.onDidChangeWindowState((state) => this.focusChanged(state.focused))];
  }

  /** The figures to show, or undefined (turned off, not known, or the gateway does not tell). */
  get current(): KeyQuota | undefined {
    return quotaDisplay() !== 'off' && this.result?.available ? this.result.quota : undefined;
  }

  /** The key or the settings changed: what is known belongs to another key or gateway, until the models are read again. */
  reset(): void {
    this.loads.invalidate();
    this.lastModelsRead = 0;
    this.stopTimers();
    this.preferred = undefined;
    this.lastReason = undefined;
    if (this.result) {
      this.result = undefined;
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
    if (quotaDisplay() === 'off' || (this.result && !this.result.available)) return;
    if (this.debounce) this.timers.clear(this.debounce);
    this.debounce = this.timers.set(() => {
      this.debounce = undefined;
      void this.refresh();
    }, QUOTA_DEBOUNCE_MS);
  }

  /**
   * Reads the figures now (sharing a read already under way). Undefined when turned off, without a key,
   * or when the key changed meanwhile; failures never throw.
   */
  refresh(signal?: AbortSignal): Promise<QuotaResult | undefined> {
    if (quotaDisplay() === 'off') return Promise.resolve(undefined);
    return this.loads.run((generation) => this.load(generation, signal));
  }

  /** For a refusal for quota: a fresh figure if one comes quickly, else nothing. */
  async refusalNote(): Promise<string | undefined> {
    let wait: unknown;
    const late = new Promise<undefined>((resolve) => (wait = this.timers.set(() => resolve(undefined), NOTE_WAIT_MS)));
    const fresh = await Promise.race([this.refresh(), late]).finally(() => this.timers.clear(wait));
    const quota = fresh?.available ? fresh.quota : this.current;
    return quota ? quotaRefusalNote(quota) : undefined;
  }

  private async load(generation: number, signal?: AbortSignal): Promise<QuotaResult | undefined> {
    let result: QuotaResult;
    try {
      if (!(await this.deps.hasKey())) return undefined;
      result = await fetchKeyQuota(this.deps.http(), { signal, prefer: this.preferred });
    } catch (err) {
      // A cancellation or a missing base address: nothing learned, nothing to change.
      this.deps.log.info(`Key quota not read: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    if (!this.loads.isCurrent(generation)) return undefined;
    if (result.available) {
      this.preferred = result.quota.source;
      this.lastReason = undefined;
    } else if (result.reason !== this.lastReason) {
      this.lastReason = result.reason;
      // Many gateways do not offer these endpoints: one line in the log, nothing in the user's way.
      this.deps.log.info(`The gateway does not tell the key's quota (${result.reason}); the figure is hidden.`);
    }
    this.result = result;
    this.schedule();
    this.changed.fire();
    return result;
  }

  private schedule(): void {
    if (this.timer) this.timers.clear(this.timer);
    this.timer = undefined;
    if (!this.result?.available || quotaDisplay() === 'off' || !vscode.window.state.focused) return;
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
    if (!this.result?.available || this.timer || this.loads.busy) return;
    if (Date.now() - this.result.quota.checkedAt >= QUOTA_REFRESH_MS) void this.refresh();
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
