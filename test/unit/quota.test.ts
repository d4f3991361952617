import * as assert from 'node:assert/strict';
import { isGatewayError } from '../../src/core/errors';
import {
  DEFAULT_UNITS_PER_USD,
  fetchKeyQuota,
  quotaLine,
  quotaRefusalNote,
  quotaShort,
  type KeyQuota,
  type QuotaResult,
} from '../../src/core/quota';
import { say } from '../../src/shared/words';
import { DEMO_KEY, GatewayDouble, LOW_TOKEN_QUOTA_KEY, type KeySpec, type QuotaEndpoints } from '../gateway';
import { QUOTA_PER_USD } from '../gateway/world';
import { clientFor } from '../support/client';

/** A key with its own limit of US$20 on an account with US$100. */
const LIMITED = { key: DEMO_KEY, group: 'default', quotaUsd: 100, tokenQuotaUsd: 20 };

function figures(result: QuotaResult): KeyQuota {
  assert.ok(result.available, `the quota was unavailable: ${result.available ? '' : result.reason}`);
  return result.quota;
}

async function billedChat(url: string, key: string): Promise<void> {
  const { http } = clientFor(url, key);
  const response = await http.send({
    method: 'POST',
    url: `${url}/v1/chat/completions`,
    json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a billed question' }] },
  });
  await response.text();
}

describe("The key's quota (core/quota.ts) against the gateway double", function () {
  const doubles: GatewayDouble[] = [];
  async function gateway(quotaEndpoints: QuotaEndpoints, keys: KeySpec[] = [LIMITED]): Promise<GatewayDouble> {
    const gw = new GatewayDouble({ quotaEndpoints, keys });
    await gw.start();
    doubles.push(gw);
    return gw;
  }
  after(() => Promise.all(doubles.map((d) => d.stop())));

  it('stock new-api: reads the billing pair under /v1, with the key, and follows billed calls', async () => {
    const gw = await gateway('newApi');
    const { http } = clientFor(gw.url, DEMO_KEY);
    const first = figures(await fetchKeyQuota(http, { now: () => 1234 }));
    assert.deepEqual(first, {
      source: 'dashboard',
      unit: 'usd',
      unlimited: false,
      remaining: 20,
      used: 0,
      checkedAt: 1234,
    });
    assert.deepEqual(
      gw.log.map((e) => `${e.method} ${e.path} ${e.status}`),
      ['GET /v1/dashboard/billing/subscription 200', 'GET /v1/dashboard/billing/usage 200'],
    );
    assert.ok(gw.log.every((e) => e.origin === 'gateway' && e.headers.authorization === `Bearer ${DEMO_KEY}`));

    await billedChat(gw.url, DEMO_KEY);
    const spent = gw.quota(DEMO_KEY);
    assert.ok(spent.usedUsd > 0, 'the chat was billed');
    const after = figures(await fetchKeyQuota(http));
    assert.ok(Math.abs((after.used ?? NaN) - spent.usedUsd) < 1e-6, `used ${after.used} = ${spent.usedUsd}`);
    assert.ok(
      Math.abs((after.remaining ?? NaN) - (spent.tokenUsd ?? NaN)) < 1e-6,
      `left ${after.remaining} = ${spent.tokenUsd}`,
    );
  });

  it('an unlimited key reads "unlimited", with what it used', async () => {
    const gw = await gateway('newApi', [{ key: DEMO_KEY, group: 'default', quotaUsd: 100 }]);
    await billedChat(gw.url, DEMO_KEY);
    const q = figures(await fetchKeyQuota(clientFor(gw.url, DEMO_KEY).http));
    assert.equal(q.unlimited, true);
    assert.equal(q.remaining, undefined);
    assert.ok((q.used ?? 0) > 0);
    assert.equal(quotaShort(q), 'unlimited quota');
    assert.match(quotaLine(q), /^Key quota: unlimited, US\$\d/);
  });

  it('only the OpenAI-style pair (one-api style): the same figures', async () => {
    const gw = await gateway('dashboard');
    const q = figures(await fetchKeyQuota(clientFor(gw.url, DEMO_KEY).http));
    assert.equal(q.source, 'dashboard');
    assert.equal(q.remaining, 20);
  });

  it("only new-api's /api/usage/token: raw quota units, after the billing pair answered 404", async () => {
    const gw = await gateway('tokenUsage');
    await billedChat(gw.url, DEMO_KEY);
    gw.clearLog();
    const q = figures(await fetchKeyQuota(clientFor(gw.url, DEMO_KEY).http));
    const spent = gw.quota(DEMO_KEY);
    assert.equal(q.source, 'tokenUsage');
    assert.equal(q.unit, 'units');
    assert.equal(q.remaining, Math.round((spent.tokenUsd ?? NaN) * QUOTA_PER_USD));
    assert.equal(q.used, Math.round(spent.usedUsd * QUOTA_PER_USD));
    assert.deepEqual(
      gw.log.map((e) => `${e.path} ${e.status}`),
      ['/v1/dashboard/billing/subscription 404', '/dashboard/billing/subscription 404', '/api/usage/token 200'],
    );
    assert.ok(gw.log.every((e) => e.headers.authorization === `Bearer ${DEMO_KEY}`));
    assert.match(quotaShort(q), /^[\d,]+ units left$/);
    assert.match(quotaLine(q), new RegExp(`default of ${DEFAULT_UNITS_PER_USD.toLocaleString('en')} units per US\\$1`));
  });

  it('asks the source that answered last time first', async () => {
    const gw = await gateway('tokenUsage');
    figures(await fetchKeyQuota(clientFor(gw.url, DEMO_KEY).http, { prefer: 'tokenUsage' }));
    assert.deepEqual(
      gw.log.map((e) => e.path),
      ['/api/usage/token'],
    );
  });

  for (const variant of ['none', 'errorBody'] as const) {
    it(`a gateway whose quota endpoints are ${variant === 'none' ? 'missing (404)' : 'error bodies with HTTP 200'}: unavailable, nothing thrown`, async () => {
      const gw = await gateway(variant);
      const result = await fetchKeyQuota(clientFor(gw.url, DEMO_KEY).http);
      assert.equal(result.available, false);
      assert.match(
        result.available ? '' : result.reason,
        variant === 'none' ? /dashboard: .*tokenUsage: /s : /record not found.*failed to get token info/s,
      );
      assert.ok(gw.log.every((e) => e.method === 'GET' && e.origin === 'gateway'));
    });
  }

  it('an unparsable answer is unavailable too, and a shape that does not fit falls through to the next source', async () => {
    const gw = await gateway('newApi');
    const { http } = clientFor(gw.url, DEMO_KEY);
    gw.inject({
      match: { path: '/v1/dashboard/billing/subscription' },
      action: { type: 'status', status: 200, body: '<html>maintenance</html>' },
    });
    const fallback = figures(await fetchKeyQuota(http));
    assert.equal(fallback.source, 'tokenUsage', 'the next source answered');
    gw.inject({
      match: { path: '/api/usage/token' },
      action: { type: 'status', status: 200, body: '{"code":true,"data":{"total_available":"lots"}}' },
    });
    const none = await fetchKeyQuota(http);
    assert.equal(none.available, false);
    assert.match(none.available ? '' : none.reason, /not valid JSON.*did not have the expected shape/s);
  });

  it('a cancelled read is a cancellation, not "unavailable"', async () => {
    const gw = await gateway('newApi');
    gw.inject({ match: { path: '/v1/dashboard/billing/subscription' }, action: { type: 'stall' } });
    const controller = new AbortController();
    const pending = fetchKeyQuota(clientFor(gw.url, DEMO_KEY).http, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending, (e: unknown) => isGatewayError(e, 'cancelled'));
  });

  it('names the key once in a line of several keys\' quotas, never "Key "team": Key quota: …"', () => {
    const base = { source: 'dashboard', unit: 'usd', unlimited: false, checkedAt: 0 } as const;
    assert.equal(
      quotaLine({ ...base, remaining: 12.3456, used: 7.5 }, 'team'),
      'Quota of key "team": US$12.35 left, US$7.50 used.',
    );
    assert.equal(quotaLine({ ...base, unlimited: true }, 'default'), 'Quota of key "default": unlimited.');
  });

  it('formats money with cents, and amounts under a cent in full', () => {
    const base = { source: 'dashboard', unit: 'usd', unlimited: false, checkedAt: 0 } as const;
    assert.equal(quotaShort({ ...base, remaining: 12.3456, used: 7.5 }), 'US$12.35 left');
    assert.equal(quotaLine({ ...base, remaining: 12.3456, used: 7.5 }), 'Key quota: US$12.35 left, US$7.50 used.');
    assert.equal(quotaShort({ ...base, remaining: 0.0005 }), 'US$0.0005 left');
    assert.equal(say(quotaRefusalNote({ ...base, remaining: 0.0005 })), 'Left on this key: US$0.0005.');
    assert.match(
      say(quotaRefusalNote({ ...base, unlimited: true })),
      /unlimited quota: the account's balance is what is short/,
    );
    assert.match(
      quotaLine({ ...base, remaining: 1, used: 0, expiresAt: Date.UTC(2030, 0, 2, 12) }),
      /The key expires .*2030/,
    );
  });

  describe('the HTTP client around billable calls', () => {
    it('tells when a billable call is over (its body closed), never for GETs', async () => {
      const gw = await gateway('newApi');
      let calls = 0;
      const { http } = clientFor(gw.url, DEMO_KEY, { afterBillableCall: () => calls++ });
      await fetchKeyQuota(http);
      assert.equal(calls, 0, 'reading the quota is not billable');
      const response = await http.send({
        method: 'POST',
        url: `${gw.url}/v1/chat/completions`,
        json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
      });
      assert.equal(calls, 0, 'not before the answer was read');
      await response.text();
      await new Promise((r) => setImmediate(r));
      assert.equal(calls, 1);
    });

    it('a refusal for quota says what is left on the key', async () => {
      const gw = await gateway('newApi', [
        { key: LOW_TOKEN_QUOTA_KEY, group: 'default', quotaUsd: 100, tokenQuotaUsd: 0.0005 },
      ]);
      let calls = 0;
      const client = clientFor(gw.url, LOW_TOKEN_QUOTA_KEY, {
        afterBillableCall: () => calls++,
        quotaNote: async () => {
          const result = await fetchKeyQuota(client.http);
          return result.available ? quotaRefusalNote(result.quota) : undefined;
        },
      });
      // Its US$0.0005 (250 units) is below what the gateway reserves for this model (≥ 500 tokens × 1.5).
      const refused = client.http.send({
        method: 'POST',
        url: `${gw.url}/v1/chat/completions`,
        json: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hello' }] },
      });
      await assert.rejects(
        refused,
        (e: unknown) =>
          isGatewayError(e, 'quota') && / Left on this key: US\$0\.0005\.$/.test(e.message) && e.status === 403,
      );
      assert.equal(calls, 1, 'the refusal counts as a finished call');
    });

    it('without a figure the refusal is unchanged', async () => {
      const gw = await gateway('none', [
        { key: LOW_TOKEN_QUOTA_KEY, group: 'default', quotaUsd: 100, tokenQuotaUsd: 0.0005 },
      ]);
      const client = clientFor(gw.url, LOW_TOKEN_QUOTA_KEY, {
        quotaNote: async () => {
          const result = await fetchKeyQuota(client.http);
          return result.available ? quotaRefusalNote(result.quota) : undefined;
        },
      });
      await assert.rejects(
        client.http.send({
          method: 'POST',
          url: `${gw.url}/v1/chat/completions`,
          json: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hello' }] },
        }),
        (e: unknown) => isGatewayError(e, 'quota') && !/Left on this key/.test(e.message),
      );
    });
  });
});
