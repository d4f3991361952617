import * as assert from 'node:assert/strict';
import { DEMO_KEY, DISABLED_KEY, GatewayDouble } from '../gateway';

/** The double's quota endpoints, read with plain fetch (the client's reading of them is in test/unit/quota.test.ts). */
describe('gateway double: quota endpoints', function () {
  let gw: GatewayDouble;
  const get = async (path: string, key?: string) => {
    const response = await fetch(
      gw.url + path,
      key === undefined ? {} : { headers: { Authorization: `Bearer ${key}` } },
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  before(async () => {
    gw = new GatewayDouble({
      keys: [
        { key: DEMO_KEY, group: 'default', quotaUsd: 100, tokenQuotaUsd: 20 },
        { key: DISABLED_KEY, group: 'default', tokenQuotaUsd: 5, status: 'disabled' },
      ],
    });
    await gw.start();
  });
  after(() => gw.stop());

  it('answers the billing pair under /v1 and at the root, with the key only', async () => {
    for (const prefix of ['/v1', '']) {
      const sub = await get(`${prefix}/dashboard/billing/subscription`, DEMO_KEY);
      assert.equal(sub.status, 200);
      assert.equal(sub.body.object, 'billing_subscription');
      assert.equal(sub.body.hard_limit_usd, 20);
      const usage = await get(`${prefix}/dashboard/billing/usage`, DEMO_KEY);
      assert.deepEqual(usage.body, { object: 'list', total_usage: 0 });
    }
    assert.equal((await get('/v1/dashboard/billing/subscription')).status, 401, 'TokenAuth first');
  });

  it('counts what billed calls used, in cents, and what is left', async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await response.text();
    const { usedUsd, tokenUsd } = gw.quota(DEMO_KEY);
    assert.ok(usedUsd > 0);
    const usage = await get('/v1/dashboard/billing/usage', DEMO_KEY);
    assert.ok(Math.abs((usage.body.total_usage as number) - usedUsd * 100) < 1e-9);
    const sub = await get('/v1/dashboard/billing/subscription', DEMO_KEY);
    assert.ok(
      Math.abs((sub.body.hard_limit_usd as number) - ((tokenUsd ?? NaN) + usedUsd)) < 1e-9,
      'granted = left + used',
    );
  });

  it('/api/usage/token reads the key itself: a disabled key still gets its figures; no header is 401, an unknown key an error body with 200', async () => {
    const disabled = await get('/api/usage/token', DISABLED_KEY);
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.code, true);
    assert.equal((disabled.body.data as Record<string, unknown>).total_available, 5 * 500_000);
    assert.equal((disabled.body.data as Record<string, unknown>).unlimited_quota, false);
    assert.equal((await get('/api/usage/token')).status, 401);
    const unknown = await get('/api/usage/token', 'sk-not-a-key');
    assert.equal(unknown.status, 200);
    assert.equal(unknown.body.success, false);
  });

  it('variants: none answers 404, errorBody an error object with HTTP 200', async () => {
    const none = new GatewayDouble({ quotaEndpoints: 'none' });
    const broken = new GatewayDouble({ quotaEndpoints: 'errorBody' });
    await none.start();
    await broken.start();
    try {
      const missing = await fetch(`${none.url}/v1/dashboard/billing/subscription`, {
        headers: { Authorization: `Bearer ${DEMO_KEY}` },
      });
      assert.equal(missing.status, 404);
      const error = await fetch(`${broken.url}/v1/dashboard/billing/subscription`, {
        headers: { Authorization: `Bearer ${DEMO_KEY}` },
      });
      assert.equal(error.status, 200);
      assert.ok(((await error.json()) as { error?: unknown }).error);
    } finally {
      await none.stop();
      await broken.stop();
    }
  });
});
