import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ConnectionReport } from '../../src/core/connection';
import type { SetKeyResult } from '../../src/host/commands/apiKey';
import type { ModelSummary } from '../../src/host/commands/connection';
import { DEMO_KEY, DISABLED_KEY, GatewayDouble, VIP_KEY } from '../gateway';
import { ConnectProxy } from '../support/connectProxy';
import { EXTENSION_ID, run, setSetting } from './support';

describe('Model Gateway in a real extension host', function () {
  let gw: GatewayDouble;
  const ext = () => vscode.extensions.getExtension(EXTENSION_ID);

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
  });
  after(async () => {
    await run('clearApiKey', { all: true });
    await gw.stop();
  });
  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
  });

  it('registers every command of the manifest', async () => {
    const all = new Set(await vscode.commands.getCommands(true));
    const declared: Array<{ command: string }> = ext()?.packageJSON.contributes.commands ?? [];
    assert.ok(declared.length >= 7);
    for (const c of declared) assert.ok(all.has(c.command), c.command);
  });

  it('refuses malformed keys with the reason and stores nothing', async () => {
    const bearer = await run<SetKeyResult>('setApiKey', `Bearer ${DEMO_KEY}`);
    assert.equal(bearer.stored, false);
    assert.match(bearer.reason ?? '', /without "Bearer"/);
    const joined = await run<SetKeyResult>('setApiKey', { key: `${DEMO_KEY}${VIP_KEY}` });
    assert.match(joined.reason ?? '', /two keys/);
    const report = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(report.keySet, false);
    assert.equal(gw.log.filter((e) => e.origin === 'gateway').length, 0, 'no key, no request to the gateway');
  });

  it('stores a key given as an argument and uses it exactly as copied, only towards the gateway', async () => {
    const result = await run<SetKeyResult>('setApiKey', `  ${DEMO_KEY}\n`);
    assert.deepEqual(result, { stored: true, masked: `••••${DEMO_KEY.slice(-4)}`, trimmed: true, name: 'default' });
    const report = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(report.keyAccepted, true);
    assert.equal(report.maskedKey, `••••${DEMO_KEY.slice(-4)}`);
    assert.ok(report.modelsPerKind.chat > 0 && report.modelsPerKind.tool > 0);
    assert.ok(report.catalog && report.catalog.models > 0);
    const toGateway = gw.log.filter((e) => e.origin === 'gateway');
    const toCatalog = gw.log.filter((e) => e.origin === 'catalog');
    assert.ok(toGateway.length > 0 && toGateway.every((e) => e.headers.authorization === `Bearer ${DEMO_KEY}`));
    assert.ok(toCatalog.length > 0 && toCatalog.every((e) => e.headers.authorization === undefined));
    assert.ok(
      gw.log.every((e) => e.method === 'GET'),
      'the check calls no billed endpoint',
    );
  });

  it('returns the merged model list with kinds, protocols and availability', async () => {
    const models = await run<ModelSummary[]>('refreshModels');
    const byId = new Map(models.map((m) => [m.id, m]));
    assert.deepEqual(byId.get('claude-sonnet-4-5')?.protocols, ['messages', 'chatCompletions']);
    assert.equal(byId.get('gpt-image-1')?.kind, 'image');
    assert.equal(byId.get('wan2.5-t2v-preview')?.kind, 'video');
    assert.equal(byId.get('glm-file-parser')?.kind, 'tool');
    assert.equal(byId.get('qwen-max')?.available, false, 'in the catalog but not granted to the default group');
  });

  it('follows a settings change at once, normalising the base address', async () => {
    await setSetting('baseUrl', `${gw.url}/v1/`);
    const report = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(report.base, gw.url);
    assert.match(report.baseChanges.join(), /\/v1/);
    assert.ok(
      gw.log.some((e) => e.path === '/v1/models'),
      'no /v1/v1 path',
    );
    await setSetting('baseUrl', 'http://127.0.0.1:1');
    const down = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(down.reachable, false);
    assert.equal(down.error?.kind, 'network');
    await setSetting('baseUrl', gw.url);
  });

  it("honours VS Code's http.proxy", async () => {
    const proxy = await new ConnectProxy().start();
    try {
      await setSetting('proxy', proxy.url, 'http');
      const report = await run<ConnectionReport>('checkConnection', { silent: true });
      assert.equal(report.keyAccepted, true);
      assert.ok(
        proxy.records.some((r) => r.target === new URL(gw.url).host),
        'the gateway was reached through the proxy',
      );
      await setSetting('proxy', 'off');
      proxy.records.length = 0;
      await run<ConnectionReport>('checkConnection', { silent: true });
      assert.equal(proxy.records.length, 0, 'modelGateway.proxy = off connects directly');
    } finally {
      await setSetting('proxy', undefined);
      await setSetting('proxy', undefined, 'http');
      await proxy.stop();
    }
  });

  it('reports a refused key as refused', async () => {
    await run('setApiKey', DISABLED_KEY);
    const report = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(report.keyAccepted, false);
    assert.equal(report.error?.kind, 'auth');
    assert.ok(report.error?.requestId, 'the request id is reported');
  });

  it('clears the key', async () => {
    assert.deepEqual(await run('clearApiKey'), { cleared: true, removed: ['default'] });
    const report = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(report.keySet, false);
    assert.equal(report.maskedKey, undefined);
  });
});
