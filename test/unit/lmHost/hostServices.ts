/**
 * The part of Services that the VS Code chat provider and the status bar use, over a real HTTP
 * client to the gateway double and a real billing meter (load fakeVscode.ts before host code).
 */
import type { HttpClient } from '../../../src/core/http';
import { BillingMeter } from '../../../src/core/tools/billing';
import { QuotaWatcher, type QuotaTimers } from '../../../src/host/quota';
import type { Services } from '../../../src/host/services';
import { CHAT_MODEL, NO_EVENT } from '../../support/chatServices';

export { CHAT_MODEL };

/** An in-memory `globalState`, as far as host code uses it. */
export function memento(): {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Promise<void>;
  keys(): readonly string[];
} {
  const values = new Map<string, unknown>();
  return {
    get: <T>(key: string) => values.get(key) as T | undefined,
    update: async (key: string, value: unknown) =>
      void (value === undefined ? values.delete(key) : values.set(key, value)),
    keys: () => [...values.keys()],
  };
}

/** `models`: the registry's chat models (ModelInfo-shaped); gpt-4o-mini alone unless given. */
export function hostServices(
  http: HttpClient,
  models: ReadonlyArray<Record<string, unknown>> = [CHAT_MODEL],
  /** The quota watcher's timers (see ManualTimers in quotaHost.test.ts); the real ones unless given. */
  timers?: QuotaTimers,
): { services: Services; billing: BillingMeter; quota: QuotaWatcher; logLines: string[]; warnLines: string[] } {
  const snapshot = { updatedAt: Date.now(), models, keyModels: models.map((m) => m.id) };
  const billing = new BillingMeter();
  const logLines: string[] = [];
  const warnLines: string[] = [];
  const log = {
    warn: (line: string) => void warnLines.push(line),
    info: (line: string) => void logLines.push(line),
    error: () => undefined,
    debug: () => undefined,
    trace: () => undefined,
  };
  // Only `info` is used by the watcher; the cast keeps the stub this small.
  const quota = new QuotaWatcher({
    http: () => http,
    keys: async () => [{ id: 'legacy', name: 'default' }],
    keyOf: async () => 'legacy',
    log: log as never,
    ...(timers ? { timers } : {}),
  });
  const services = {
    registry: { snapshot, onDidChange: NO_EVENT, refresh: async () => snapshot, lastKnown: async () => undefined },
    keys: { onDidChange: NO_EVENT, has: async () => true, masked: async () => 'sk-…demo' },
    onDidChangeSettings: NO_EVENT,
    billing,
    http: () => http,
    ensureCatalogTimer: () => undefined,
    quota,
    log,
    context: { globalState: memento() },
  };
  // Only these members are read by the code under test; the cast keeps the stub this small.
  return { services: services as unknown as Services, billing, quota, logLines, warnLines };
}
