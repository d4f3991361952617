import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildReport, formatReport } from '../../src/core/connection';
import { normaliseBaseUrl } from '../../src/core/config';
import { isGatewayError } from '../../src/core/errors';
import { FileCatalogStore, syncCatalog, type CatalogCache, type CatalogStore } from '../../src/core/models/catalogSync';
import { ModelRegistry } from '../../src/core/models/modelRegistry';
import { DEFAULT_GROUPS, DEFAULT_MODELS, DEMO_KEY, DISABLED_KEY, GatewayDouble } from '../gateway';
import { clientFor } from '../support/client';

class MemoryStore implements CatalogStore {
  cache?: CatalogCache;
  async load() {
    return this.cache;
  }
  async save(c: CatalogCache) {
    this.cache = c;
  }
}

describe('catalog sync against the double', function () {
  let gw: GatewayDouble;
  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(() => gw.stop());
  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
    gw.setCatalog({ format: 'opencode' });
  });

  for (const format of ['openai-list', 'opencode', 'models.dev', 'models-list'] as const) {
    it(`reads the double's ${format} catalog`, async () => {
      gw.setCatalog({ format });
      const state = await syncCatalog(clientFor(gw.url, DEMO_KEY).http, gw.catalogUrl, new MemoryStore());
      assert.equal(state.format, format);
      const ids = state.entries.map((e) => e.id);
      assert.ok(ids.includes('qwen-max') && ids.includes('gpt-5') && ids.includes('wan2.5-t2v-preview'), ids.join(','));
    });
  }

  it('revalidates with ETag and keeps the cache on 304, sending no key', async () => {
    const store = new MemoryStore();
    const { http } = clientFor(gw.url, DEMO_KEY);
    const first = await syncCatalog(http, gw.catalogUrl, store);
    assert.equal(first.source, 'network');
    assert.ok(store.cache?.etag);
    const second = await syncCatalog(http, gw.catalogUrl, store);
    assert.equal(second.source, 'revalidated');
    assert.deepEqual(second.entries, first.entries);
    const requests = gw.log.filter((e) => e.origin === 'catalog');
    assert.equal(requests.length, 2);
    assert.equal(requests[1]?.headers['if-none-match'], store.cache?.etag);
    assert.equal(requests[1]?.status, 304);
    assert.ok(requests.every((r) => r.headers.authorization === undefined));
  });

  it('downloads again when the catalog changed', async () => {
    const store = new MemoryStore();
    const { http } = clientFor(gw.url, DEMO_KEY);
    await syncCatalog(http, gw.catalogUrl, store);
    const etag = store.cache?.etag;
    gw.setCatalog({ format: 'models-list' });
    const state = await syncCatalog(http, gw.catalogUrl, store);
    assert.equal(state.source, 'network');
    assert.equal(state.format, 'models-list');
    assert.notEqual(store.cache?.etag, etag);
  });

  it('falls back to the cache when the catalog server is down, and says why', async () => {
    const store = new MemoryStore();
    const { http } = clientFor(gw.url, DEMO_KEY);
    await syncCatalog(http, gw.catalogUrl, store);
    gw.inject({ match: { origin: 'catalog' }, action: { type: 'reset' } });
    const state = await syncCatalog(http, gw.catalogUrl, store);
    assert.equal(state.source, 'cache');
    assert.ok(isGatewayError(state.problem, 'network'));
    assert.ok(state.entries.length > 0);
  });

  it('keeps the cache when the server sends an unknown shape, and reports the shape', async () => {
    const store = new MemoryStore();
    const { http } = clientFor(gw.url, DEMO_KEY);
    await syncCatalog(http, gw.catalogUrl, store);
    const before = store.cache?.body;
    gw.setCatalog({ format: 'unknown' });
    const state = await syncCatalog(http, gw.catalogUrl, store);
    assert.equal(state.source, 'cache');
    assert.ok(
      isGatewayError(state.problem, 'protocol') && /shape the extension does not know/.test(state.problem.message),
    );
    assert.equal(store.cache?.body, before, 'the good cache was not overwritten');
  });

  it('throws a clear error for an unknown shape when there is no cache', async () => {
    gw.setCatalog({ format: 'unknown' });
    await assert.rejects(
      syncCatalog(clientFor(gw.url, DEMO_KEY).http, gw.catalogUrl, new MemoryStore()),
      (e: unknown) => isGatewayError(e, 'protocol'),
    );
  });

  it('keeps the cache in a file, written atomically', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-'));
    try {
      const store = new FileCatalogStore(path.join(dir, 'sub', 'catalog.json'));
      assert.equal(await store.load(), undefined);
      await syncCatalog(clientFor(gw.url, DEMO_KEY).http, gw.catalogUrl, store);
      const saved = await store.load();
      assert.equal(saved?.url, gw.catalogUrl);
      assert.ok(!readFileSync(path.join(dir, 'sub', 'catalog.json'), 'utf8').includes(DEMO_KEY));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('model registry and connection report', function () {
  let gw: GatewayDouble;
  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(() => gw.stop());

  function registry(key: string | undefined, base = gw.url) {
    const { http } = clientFor(base, key);
    return new ModelRegistry({
      http: () => http,
      catalogUrl: () => gw.catalogUrl,
      store: new MemoryStore(),
      keys: async () => (key !== undefined ? [{ id: 'legacy', name: 'default' }] : []),
      modelChoices: async () => ({}),
    });
  }

  it('merges the key list and the catalog into kinds and availability', async () => {
    const snap = await registry(DEMO_KEY).refresh();
    const byId = new Map(snap.models.map((m) => [m.id, m]));
    assert.equal(byId.get('qwen-max')?.available, false, 'in the catalog, not granted to default');
    assert.equal(byId.get('gpt-5')?.available, true);
    assert.equal(byId.get('gpt-image-1')?.kind, 'image');
    assert.equal(byId.get('wan2.5-t2v-preview')?.kind, 'video');
    assert.equal(byId.get('glm-file-parser')?.kind, 'tool');
    assert.equal(byId.get('kimi-file-extract')?.kind, 'tool');
    assert.deepEqual(byId.get('claude-sonnet-4-5')?.protocols, ['messages', 'chatCompletions']);
    assert.deepEqual(byId.get('gpt-5')?.protocols, ['chatCompletions', 'responses']);
    assert.equal(byId.get('gpt-5')?.protocolSource, 'gateway');
  });

  it('reports the connection without calling a billed endpoint', async () => {
    gw.clearLog();
    const snap = await registry(DEMO_KEY).refresh();
    const report = buildReport(normaliseBaseUrl(`${gw.url}/v1/`), true, '••••abcd', snap);
    assert.equal(report.base, gw.url);
    assert.match(report.baseChanges.join(), /v1/);
    assert.equal(report.keyAccepted, true);
    assert.equal(report.reachable, true);
    // Expected counts come from the double's own world (endpoint types), not from our classifier.
    const granted = DEFAULT_MODELS.filter((m) => DEFAULT_GROUPS.default?.includes(m.id));
    const withType = (t: string) => granted.filter((m) => m.supported_endpoint_types.includes(t)).length;
    assert.equal(report.modelsPerKind.image, withType('image-generation'), JSON.stringify(report.modelsPerKind));
    assert.equal(report.modelsPerKind.video, withType('openai-video'));
    assert.ok(report.modelsPerKind.chat >= 5 && report.modelsPerKind.tool === 2, JSON.stringify(report.modelsPerKind));
    assert.ok(report.catalog && report.catalog.ageSeconds <= 1);
    assert.ok(
      gw.log.every((e) => e.method === 'GET'),
      'only GETs were sent',
    );
    assert.match(formatReport(report), /Key accepted/);
  });

  it('reports a refused key as reachable but not accepted', async () => {
    const snap = await registry(DISABLED_KEY).refresh();
    const report = buildReport(normaliseBaseUrl(gw.url), true, '••••xxxx', snap);
    assert.equal(report.keyAccepted, false);
    assert.equal(report.reachable, true);
    assert.ok(
      snap.models.every((m) => !m.available),
      'catalog models are shown, none callable',
    );
  });

  it('reports an unreachable gateway', async () => {
    const snap = await registry(DEMO_KEY, 'http://127.0.0.1:1').refresh();
    const report = buildReport(normaliseBaseUrl('http://127.0.0.1:1'), true, '••••abcd', snap);
    assert.equal(report.reachable, false);
    assert.equal(report.keyAccepted, undefined);
    assert.equal(report.error?.kind, 'network');
  });

  it('shares one refresh between concurrent callers', async () => {
    gw.clearLog();
    const r = registry(DEMO_KEY);
    await Promise.all([r.refresh(), r.refresh(), r.refresh()]);
    assert.equal(gw.log.filter((e) => e.path === '/v1/models').length, 1);
  });
});

describe('model registry freshness', () => {
  let gw: GatewayDouble;
  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(() => gw.stop());

  it('does not hand a refresh started before a key change to a caller after it', async () => {
    let key: string | undefined = undefined;
    const { http, setKey } = clientFor(gw.url, undefined);
    const registry = new ModelRegistry({
      http: () => http,
      catalogUrl: () => '',
      store: new MemoryStore(),
      keys: async () => (key !== undefined ? [{ id: 'legacy', name: 'default' }] : []),
      modelChoices: async () => ({}),
    });
    const early = registry.refresh();
    key = DEMO_KEY;
    setKey(DEMO_KEY);
    registry.invalidate();
    const late = await registry.refresh();
    assert.ok(late.keyModels && late.keyModels.length > 0, 'the refresh after the change sees the key');
    await early;
    assert.ok(registry.snapshot.keyModels, 'the stale refresh did not overwrite the newer result');
  });
});
