/**
 * VS Code's Language Models editor lists nothing until the provider answers. A window that has seen
 * the gateway's models once answers at once from the last list kept for its keys (beside the cached
 * catalog), reads the gateway behind it, and tells VS Code when that changed what it shows.
 */
// First: answers `vscode` for every host module imported after it.
import { CancellationTokenSource } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HttpClient } from '../../../src/core/http';
import { FileCatalogStore } from '../../../src/core/models/catalogSync';
import { FileKeyListMemory } from '../../../src/core/models/keyListMemory';
import { ModelRegistry } from '../../../src/core/models/modelRegistry';
import { GatewayChatProvider } from '../../../src/host/lm/chatProvider';
import type { Services } from '../../../src/host/services';
import { DEMO_KEY, GatewayDouble, TEAM_KEY } from '../../gateway';
import { NO_EVENT } from '../../support/chatServices';
import { clientFor } from '../../support/client';
import { until } from '../../support/until';

/** The client with its model-list requests held until `open()`: the read behind the answer, under the test's control. */
function gated(http: HttpClient): { http: HttpClient; open(): void } {
  let open = (): void => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const held = new Proxy(http, {
    get(target, name, receiver) {
      if (name !== 'sendJson') return Reflect.get(target, name, receiver) as unknown;
      return async (...args: Parameters<HttpClient['sendJson']>) => {
        await gate;
        return target.sendJson(...args);
      };
    },
  });
  return { http: held, open };
}

describe("VS Code's model list: answered at once from the last list, refreshed behind it", function () {
  this.timeout(60_000);
  let gw: GatewayDouble;
  let dir: string;
  const clients: HttpClient[] = [];
  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(() => gw.stop());
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-keylists-'))));
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** One window's registry over the shared storage folder, calling the gateway with `key` (under the one key id). */
  function windowWith(key: string, base = gw.url): { registry: ModelRegistry; open(): void } {
    const client = clientFor(base, key).http;
    clients.push(client);
    const { http, open } = gated(client);
    const registry = new ModelRegistry({
      http: () => http,
      catalogUrl: () => gw.catalogUrl,
      store: new FileCatalogStore(path.join(dir, 'catalog.json')),
      keyLists: new FileKeyListMemory(path.join(dir, 'keyModels.json')),
      keys: async () => [{ id: 'legacy', name: 'default' }],
      modelChoices: async () => ({}),
    });
    return { registry, open };
  }

  function providerOver(registry: ModelRegistry): { provider: GatewayChatProvider; changes: () => number } {
    const services = {
      registry,
      keys: { onDidChange: NO_EVENT, has: async () => true },
      onDidChangeSettings: NO_EVENT,
      ensureCatalogTimer: () => undefined,
      log: { warn: () => undefined, info: () => undefined },
    };
    // Only these members are read when the list is asked for; the cast keeps the stub this small.
    const provider = new GatewayChatProvider(services as unknown as Services);
    let changes = 0;
    provider.onDidChangeLanguageModelChatInformation(() => changes++);
    return { provider, changes: () => changes };
  }

  const ask = async (provider: GatewayChatProvider) =>
    (await provider.provideLanguageModelChatInformation({ silent: true }, new CancellationTokenSource().token as never))
      .map((m) => m.id)
      .sort();

  it('a new window answers with the last list before the gateway answers, then tells VS Code of the change', async () => {
    const first = windowWith(DEMO_KEY);
    first.open();
    const seen = (await first.registry.refresh()).models.filter((m) => m.kind === 'chat' && m.available);
    assert.ok(seen.length > 0);

    // The next window, with the same key id now calling the team key (whose group lists other models).
    const next = windowWith(TEAM_KEY);
    const { provider, changes } = providerOver(next.registry);
    try {
      const shown = await ask(provider);
      assert.equal(next.registry.snapshot.updatedAt, 0, 'the answer did not wait for the gateway');
      assert.deepEqual(shown, (await ask(providerOver(first.registry).provider)).sort(), 'the last list, as seen');
      assert.equal(changes(), 0);

      next.open();
      await until(() => changes() > 0, 'VS Code to be told that the list changed');
      const fresh = await ask(provider);
      assert.notDeepEqual(fresh, shown, "the team key's list");
      assert.ok(next.registry.snapshot.updatedAt > 0);
    } finally {
      provider.dispose();
    }
  });

  it('says nothing to VS Code when the read finds what was shown', async () => {
    const first = windowWith(DEMO_KEY);
    first.open();
    await first.registry.refresh();
    const next = windowWith(DEMO_KEY);
    const { provider, changes } = providerOver(next.registry);
    try {
      const shown = await ask(provider);
      next.open();
      await until(() => next.registry.snapshot.updatedAt > 0, 'the read behind the answer');
      assert.equal(changes(), 0);
      assert.deepEqual(await ask(provider), shown);
    } finally {
      provider.dispose();
    }
  });

  it('waits for the gateway where nothing was seen for these keys at this gateway', async () => {
    const first = windowWith(DEMO_KEY);
    first.open();
    await first.registry.refresh();
    assert.equal(await windowWith(DEMO_KEY, gw.url.replace('127.0.0.1', 'localhost')).registry.lastKnown(), undefined);

    fs.writeFileSync(path.join(dir, 'keyModels.json'), '{"origins": 7}');
    const next = windowWith(DEMO_KEY);
    assert.equal(await next.registry.lastKnown(), undefined, 'a damaged file is no list');
    const { provider } = providerOver(next.registry);
    try {
      const answer = ask(provider);
      next.open();
      assert.ok((await answer).length > 0);
      assert.ok(next.registry.snapshot.updatedAt > 0, 'the answer is the read');
    } finally {
      provider.dispose();
    }
  });
});
