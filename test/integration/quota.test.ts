import * as assert from 'node:assert/strict';
import type { ConnectionReport } from '../../src/core/connection';
import type { AskResult } from '../../src/host/chat/ask';
import type { QuotaCommandResult } from '../../src/host/commands/quota';
import { DEMO_KEY, GatewayDouble, type QuotaEndpoints, type RequestLogEntry } from '../gateway';
import { run, setSetting } from './support';

/** The status bar tooltip is markdown with punctuation escaped; this is its plain text. */
function plain(markdown: string): string {
  return markdown.replace(/\\(.)/g, '$1');
}

const QUOTA_PATH = /^\/(v1\/)?dashboard\/billing\/|^\/api\/usage\/token/;
const quotaReads = (log: RequestLogEntry[]) => log.filter((e) => QUOTA_PATH.test(e.path));

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("The key's quota in a real extension host", function () {
  let gw: GatewayDouble;
  const others: GatewayDouble[] = [];
  /** Everything the gateway saw in this suite, for the last test. */
  const seen: RequestLogEntry[] = [];
  const clearLog = () => {
    seen.push(...gw.log);
    gw.clearLog();
  };

  async function otherGateway(quotaEndpoints: QuotaEndpoints): Promise<GatewayDouble> {
    const other = new GatewayDouble({ quotaEndpoints });
    await other.start();
    others.push(other);
    return other;
  }

  before(async () => {
    // The key has its own limit of US$20 on an account with US$100 (new-api reports the key's figures).
    gw = new GatewayDouble({ keys: [{ key: DEMO_KEY, group: 'default', quotaUsd: 100, tokenQuotaUsd: 20 }] });
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await setSetting('quota.show', undefined);
    await run('setApiKey', DEMO_KEY);
  });
  after(async () => {
    await setSetting('quota.show', undefined);
    await run('clearApiKey', { all: true });
    await gw.stop();
    await Promise.all(others.map((o) => o.stop()));
  });
  beforeEach(clearLog);

  it('Check Connection reports what is left and what was used, read with the key from the gateway', async () => {
    const report = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(report.keyAccepted, true);
    assert.deepEqual(report.quota && { ...report.quota, checkedAt: 0 }, {
      source: 'dashboard',
      unit: 'usd',
      unlimited: false,
      remaining: 20,
      used: 0,
      checkedAt: 0,
    });
    const reads = quotaReads(gw.log);
    assert.ok(reads.length >= 2, 'the billing pair was read');
    assert.ok(
      reads.every(
        (e) => e.method === 'GET' && e.origin === 'gateway' && e.headers.authorization === `Bearer ${DEMO_KEY}`,
      ),
    );
  });

  it('the status bar tooltip and the Models view header show it; the status bar text only when asked to', async () => {
    const shown = await run<QuotaCommandResult>('refreshQuota');
    assert.equal(shown.display, 'tooltip');
    assert.match(plain(shown.statusBarTooltip), /Key quota: US\$20\.00 left, US\$0\.00 used\./);
    assert.equal(shown.modelsViewDescription, 'US$20.00 left');
    assert.doesNotMatch(shown.statusBarText, /left/);

    await setSetting('quota.show', 'statusBar');
    await run('refreshModels');
    const inText = await run<QuotaCommandResult>('refreshQuota');
    assert.match(inText.statusBarText, /Gateway .* · US\$20\.00 left$/);
    await setSetting('quota.show', undefined);
  });

  it('a billed chat answer brings a fresh figure by itself, once the call is over', async () => {
    await run('refreshModels');
    await run('refreshQuota');
    clearLog();
    const answer = await run<AskResult>('ask', { prompt: 'a billed question', model: 'gpt-4o-mini' });
    assert.equal(answer.status, 'done', JSON.stringify(answer.error));
    await until('the quota to be read again after the answer', () =>
      gw.log.some((e) => e.path === '/v1/dashboard/billing/usage'),
    );
    const chat = gw.log.findIndex((e) => e.path === '/v1/chat/completions');
    const reread = gw.log.findIndex((e) => e.path === '/v1/dashboard/billing/usage');
    assert.ok(chat >= 0 && reread > chat, 'read after the billed call');
    await until(
      'the figure to change',
      () => gw.log.filter((e) => e.path === '/v1/dashboard/billing/usage' && e.status === 200).length > 0,
    );
    const left = gw.quota(DEMO_KEY).tokenUsd ?? NaN;
    assert.ok(left < 20, 'the chat was charged to the key');
    let shown: QuotaCommandResult | undefined;
    for (let i = 0; i < 50; i++) {
      shown = await run<QuotaCommandResult>('refreshQuota', { read: false });
      if (shown.quota && Math.abs((shown.quota.remaining ?? NaN) - left) < 1e-6) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(
      shown?.quota && Math.abs((shown.quota.remaining ?? NaN) - left) < 1e-6,
      `shown ${shown?.quota?.remaining}, left ${left}`,
    );
    assert.ok((shown.quota.used ?? 0) > 0);
  });

  it('a refusal for quota says what is left on the key', async () => {
    gw.setTokenQuota(DEMO_KEY, 0.0005);
    try {
      // US$0.0005 is 250 units, below what the gateway reserves for this model (≥ 500 tokens × 1.5).
      const refused = await run<AskResult>('ask', {
        prompt: 'too expensive',
        model: 'claude-sonnet-4-5',
        protocol: 'chatCompletions',
      });
      assert.equal(refused.error?.kind, 'quota');
      assert.match(refused.error?.message ?? '', /Left on this key: US\$0\.0005\./);
    } finally {
      gw.setTokenQuota(DEMO_KEY, 20);
    }
  });

  it('"off": the gateway is never asked and nothing is shown', async () => {
    await setSetting('quota.show', 'off');
    try {
      clearLog();
      const report = await run<ConnectionReport>('checkConnection', { silent: true });
      assert.equal(report.keyAccepted, true);
      assert.equal(report.quota, undefined);
      const shown = await run<QuotaCommandResult>('refreshQuota');
      assert.equal(shown.quota, undefined);
      assert.equal(shown.modelsViewDescription, undefined);
      assert.doesNotMatch(plain(shown.statusBarTooltip), /Key quota/);
      const heard = shown.activity.billedCalls;
      await run<AskResult>('ask', { prompt: 'billed, but nobody looks', model: 'gpt-4o-mini' });
      // Decided by what the watcher holds once it heard of the call, not by waiting past its debounce.
      let after = shown;
      for (let i = 0; i < 150 && after.activity.billedCalls <= heard; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await run<QuotaCommandResult>('refreshQuota', { read: false });
      }
      assert.ok(after.activity.billedCalls > heard, 'the watcher heard of the billed call');
      assert.equal(after.activity.readPending, false, 'and no read waits for the calls to pause');
      assert.deepEqual(quotaReads(gw.log), [], 'no quota request at all');
    } finally {
      await setSetting('quota.show', undefined);
    }
  });

  for (const variant of ['none', 'errorBody'] as const) {
    it(`a gateway whose quota endpoints ${variant === 'none' ? 'are missing (404)' : 'answer error bodies with HTTP 200'}: the figure is hidden silently`, async () => {
      const other = await otherGateway(variant);
      await setSetting('baseUrl', other.url);
      try {
        const report = await run<ConnectionReport>('checkConnection', { silent: true });
        assert.equal(report.keyAccepted, true);
        assert.equal(report.quota, undefined);
        assert.ok(quotaReads(other.log).length > 0, 'the endpoints were tried');
        const shown = await run<QuotaCommandResult>('refreshQuota');
        assert.equal(shown.quota, undefined);
        assert.equal(shown.modelsViewDescription, undefined);
        assert.doesNotMatch(plain(shown.statusBarTooltip), /Key quota/);
        assert.match(shown.statusBarText, /Gateway/);
      } finally {
        await setSetting('baseUrl', gw.url);
      }
    });
  }

  it('sent the key to the gateway origins only', () => {
    clearLog();
    const all = [...seen, ...others.flatMap((o) => o.log)];
    assert.ok(
      all.some((e) => e.origin === 'catalog'),
      'the catalog origin was called too',
    );
    for (const e of all) {
      if (e.origin !== 'gateway') assert.equal(e.headers.authorization, undefined, `${e.origin} ${e.path} got no key`);
    }
    assert.ok(!JSON.stringify(all.filter((e) => e.origin !== 'gateway')).includes(DEMO_KEY));
  });
});
