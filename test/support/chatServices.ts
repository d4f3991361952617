/**
 * The part of Services that ChatController reads, for driving the real controller outside VS Code
 * over a real HTTP client (unit tests with fakeVscode.ts, bench children with vscodeStub.ts).
 */
import type { HttpClient } from '../../src/core/http';
import { BillingMeter } from '../../src/core/tools/billing';
import type { Services } from '../../src/host/services';

/** One chat model as the registry holds it (ModelInfo-shaped). */
export const CHAT_MODEL = {
  id: 'gpt-4o-mini',
  name: 'GPT-4o mini',
  provider: 'openai',
  ownedBy: 'openai',
  kind: 'chat',
  protocols: ['chatCompletions'],
  protocolSource: 'gateway',
  available: true,
  inCatalog: false,
};

export const NO_EVENT = (): { dispose(): void } => ({ dispose: () => undefined });

/** A log that says nothing. */
export const QUIET_LOG = {
  warn: () => undefined,
  info: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  trace: () => undefined,
};

export interface ChatServicesOptions {
  /** The global storage folder (conversations, images). */
  storageDir: string;
  baseUrl: string;
  http: HttpClient;
  /** The registry; by default one that lists CHAT_MODEL alone. */
  registry?: object;
  /** The key store; by default one that has a key and never changes. */
  keys?: object;
  /** The session's meter; by default a fresh one. */
  billing?: BillingMeter;
}

export function chatServices(opts: ChatServicesOptions): Services {
  const services = {
    context: {
      globalState: { get: () => undefined, update: async () => undefined },
      globalStorageUri: { fsPath: opts.storageDir, scheme: 'file' },
      extensionUri: {},
    },
    registry: opts.registry ?? {
      snapshot: { updatedAt: Date.now(), models: [CHAT_MODEL] },
      onDidChange: NO_EVENT,
      refresh: async () => undefined,
    },
    keys: opts.keys ?? { onDidChange: NO_EVENT, has: async () => true },
    onDidChangeSettings: NO_EVENT,
    settings: () => ({ baseUrl: opts.baseUrl, catalogUrl: '' }),
    http: () => opts.http,
    ensureCatalogTimer: () => undefined,
    log: QUIET_LOG,
    // The sidebar's answers count in the session's figures.
    billing: opts.billing ?? new BillingMeter(),
  };
  // Only these members are read by the controller; the cast keeps the stub this small.
  return services as unknown as Services;
}
