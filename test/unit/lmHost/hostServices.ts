/**
 * The part of Services that the VS Code chat provider and the status bar use, over a real HTTP
 * client to the gateway double and a real billing meter (load fakeVscode.ts before host code).
 */
import type { HttpClient } from '../../../src/core/http';
import { BillingMeter } from '../../../src/core/tools/billing';
import type { Services } from '../../../src/host/services';

export const CHAT_MODEL = { id: 'gpt-4o-mini', name: 'GPT-4o mini', provider: 'openai', ownedBy: 'openai', kind: 'chat', protocols: ['chatCompletions'], protocolSource: 'gateway', available: true, inCatalog: false };

/** `models`: the registry's chat models (ModelInfo-shaped); gpt-4o-mini alone unless given. */
export function hostServices(http: HttpClient, models: ReadonlyArray<Record<string, unknown>> = [CHAT_MODEL]): { services: Services; billing: BillingMeter } {
  const none = () => ({ dispose: () => undefined });
  const snapshot = { updatedAt: Date.now(), models, keyModels: models.map((m) => m.id) };
  const billing = new BillingMeter();
  const services = {
    registry: { snapshot, onDidChange: none, refresh: async () => snapshot },
    keys: { onDidChange: none, has: async () => true, masked: async () => 'sk-…demo' },
    onDidChangeSettings: none,
    billing,
    http: () => http,
    ensureCatalogTimer: () => undefined,
    log: { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined, trace: () => undefined },
  };
  // Only these members are read by the code under test; the cast keeps the stub this small.
  return { services: services as unknown as Services, billing };
}
