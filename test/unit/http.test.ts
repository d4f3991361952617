import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as z from 'zod/mini';
import { isGatewayError } from '../../src/core/errors';
import { fetchKeyModels } from '../../src/core/models/keyModels';
import { DEMO_KEY, DISABLED_KEY, GatewayDouble, MEMORY_RATE_LIMITED_KEY, VIP_KEY } from '../gateway';
import { clientFor, TEST_TIMEOUTS } from '../support/client';
import { ConnectProxy } from '../support/connectProxy';

const anyJson = z.unknown();

describe('HTTP client against the gateway double', function () {
  let gw: GatewayDouble;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(() => gw.stop());
  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
  });

  it("lists the key's models with endpoint types, sending exactly Bearer <key>", async () => {
    const { http } = clientFor(gw.url, DEMO_KEY);
    const models = await fetchKeyModels(http);
    const ids = models.map((m) => m.id);
    assert.ok(ids.includes('gpt-5') && ids.includes('gpt-image-1'));
    assert.ok(!ids.includes('qwen-max'), 'a vip-only model is not listed for the default group');
    assert.deepEqual(models.find((m) => m.id === 'claude-sonnet-4-5')?.endpointTypes, ['anthropic', 'openai']);
    assert.equal(gw.log.length, 1);
    assert.equal(gw.log[0]?.headers.authorization, `Bearer ${DEMO_KEY}`);
    assert.equal(gw.log[0]?.path, '/v1/models');
  });

  it('lists different models for another group', async () => {
    const ids = (await fetchKeyModels(clientFor(gw.url, VIP_KEY).http)).map((m) => m.id);
    assert.ok(ids.includes('qwen-max'));
  });

  it('never sends the key to another origin, even if a caller passes it', async () => {
    const { http } = clientFor(gw.url, DEMO_KEY);
    await http
      .send({
        method: 'GET',
        url: gw.catalogUrl,
        headers: { Authorization: `Bearer ${DEMO_KEY}`, 'X-Api-Key': DEMO_KEY },
      })
      .then((r) => r.text());
    const catalogRequests = gw.log.filter((e) => e.origin === 'catalog');
    assert.equal(catalogRequests.length, 1);
    assert.equal(catalogRequests[0]?.headers.authorization, undefined);
    assert.equal(catalogRequests[0]?.headers['x-api-key'], undefined);
    assert.ok(!JSON.stringify(catalogRequests).includes(DEMO_KEY));
  });

  it('sends no key to the gateway origin when asked to be anonymous', async () => {
    const { http } = clientFor(gw.url, DEMO_KEY);
    await http
      .send({ method: 'GET', url: `${gw.url}/v1/models`, anonymous: true, acceptStatus: [401] })
      .then((r) => r.text());
    assert.equal(gw.log[0]?.headers.authorization, undefined);
  });

  it('refuses to call the gateway without a key, before sending anything', async () => {
    const { http } = clientFor(gw.url, undefined);
    await assert.rejects(
      fetchKeyModels(http),
      (e: unknown) => isGatewayError(e, 'auth') && /Set API Key/.test(e.message),
    );
    assert.equal(gw.log.length, 0);
  });

  it('maps a refused key to an auth error with the request id', async () => {
    const { http } = clientFor(gw.url, DISABLED_KEY);
    await assert.rejects(
      fetchKeyModels(http),
      (e: unknown) =>
        isGatewayError(e, 'auth') && e.status === 401 && e.requestId === gw.log[0]?.requestId && !!e.requestId,
    );
  });

  it('retries a GET whose connection was reset, once', async () => {
    gw.inject({ match: { path: '/v1/models' }, times: 1, action: { type: 'reset' } });
    const { http, lines } = clientFor(gw.url, DEMO_KEY);
    const models = await fetchKeyModels(http);
    assert.ok(models.length > 0);
    assert.equal(gw.log.filter((e) => e.path === '/v1/models').length, 2);
    assert.ok(lines.some((l) => /retrying/.test(l)));
  });

  it('never retries a billed POST whose connection was reset', async () => {
    gw.inject({ match: { path: '/v1/chat/completions' }, action: { type: 'reset' } });
    const { http } = clientFor(gw.url, DEMO_KEY);
    await assert.rejects(
      http.send({
        method: 'POST',
        url: `${gw.url}/v1/chat/completions`,
        json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      }),
      (e: unknown) => isGatewayError(e, 'network'),
    );
    assert.equal(gw.log.filter((e) => e.path === '/v1/chat/completions').length, 1);
  });

  it('retries a POST turned away by 429 with a short Retry-After', async () => {
    gw.inject({
      match: { path: '/v1/chat/completions' },
      times: 1,
      action: { type: 'status', status: 429, body: '', headers: { 'retry-after': '0' } },
    });
    const { http } = clientFor(gw.url, DEMO_KEY);
    const body = await http.sendJson(
      {
        method: 'POST',
        url: `${gw.url}/v1/chat/completions`,
        json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      },
      anyJson,
      'answer',
    );
    assert.ok(body);
    assert.equal(gw.log.filter((e) => e.path === '/v1/chat/completions').length, 2);
  });

  it('does not wait out a long Retry-After; it reports it', async () => {
    gw.inject({
      match: { path: '/v1/models' },
      action: { type: 'status', status: 429, body: '', headers: { 'retry-after': '120' } },
    });
    const { http } = clientFor(gw.url, DEMO_KEY);
    await assert.rejects(
      fetchKeyModels(http),
      (e: unknown) => isGatewayError(e, 'rateLimited') && /120 s/.test(e.message),
    );
    assert.equal(gw.log.length, 1);
  });

  it("reports the gateway's own empty 429 from its in-memory rate limiter", async () => {
    const { http } = clientFor(gw.url, MEMORY_RATE_LIMITED_KEY);
    const send = () =>
      http
        .send({
          method: 'POST',
          url: `${gw.url}/v1/chat/completions`,
          json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        })
        .then((r) => r.text());
    let error: unknown;
    for (let i = 0; i < 4 && !error; i++) await send().catch((e: unknown) => (error = e));
    assert.ok(isGatewayError(error, 'rateLimited'), String(error));
    assert.match((error as Error).message, /no details/);
  });

  it('turns an HTML error page from a fronting proxy into a readable server error', async () => {
    gw.inject({
      match: { path: '/v1/models' },
      action: {
        type: 'status',
        status: 502,
        body: '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>',
        headers: { 'content-type': 'text/html' },
        fromProxy: true,
      },
    });
    const { http } = clientFor(gw.url, DEMO_KEY);
    await assert.rejects(
      fetchKeyModels(http),
      (e: unknown) => isGatewayError(e, 'server') && /HTML page titled "502 Bad Gateway"/.test(e.message),
    );
    assert.equal(gw.log.length, 3, 'an idempotent GET is retried on 502, bounded to three attempts');
  });

  it('turns a malformed 200 body into a protocol error, not a crash', async () => {
    gw.inject({
      match: { path: '/v1/models' },
      action: {
        type: 'status',
        status: 200,
        body: '{"data":[{"name":"no id"}]}',
        headers: { 'content-type': 'application/json' },
      },
    });
    await assert.rejects(
      fetchKeyModels(clientFor(gw.url, DEMO_KEY).http),
      (e: unknown) => isGatewayError(e, 'protocol') && /data\.0\.id/.test(e.message),
    );
    gw.clearFaults();
    gw.inject({
      match: { path: '/v1/models' },
      action: { type: 'status', status: 200, body: 'ok', headers: { 'content-type': 'text/plain' } },
    });
    await assert.rejects(
      fetchKeyModels(clientFor(gw.url, DEMO_KEY).http),
      (e: unknown) => isGatewayError(e, 'protocol') && /not valid JSON: "ok"/.test(e.message),
    );
  });

  it('takes an error object in a 200 body for the error it is, request id apart', async () => {
    gw.inject({
      match: { path: '/v1/models' },
      action: {
        type: 'status',
        status: 200,
        body: (id) =>
          `{"error":{"message":"当前分组上游负载已饱和，请稍后再试 (request id: ${id})","type":"new_api_error","param":"","code":"insufficient_user_quota"}}`,
        headers: { 'content-type': 'application/json' },
      },
    });
    await assert.rejects(
      fetchKeyModels(clientFor(gw.url, DEMO_KEY).http),
      (e: unknown) =>
        isGatewayError(e, 'quota') &&
        e.status === 200 &&
        /当前分组上游负载已饱和/.test(e.message) &&
        !/request id/.test(e.message) &&
        typeof e.requestId === 'string' &&
        e.requestId.length > 0,
    );
    gw.clearFaults();
    gw.inject({
      match: { path: '/v1/models' },
      action: {
        type: 'status',
        status: 200,
        body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
        headers: { 'content-type': 'application/json' },
      },
    });
    await assert.rejects(
      fetchKeyModels(clientFor(gw.url, DEMO_KEY).http),
      (e: unknown) => isGatewayError(e, 'rateLimited') && /slow down/.test(e.message),
    );
    gw.clearFaults();
    gw.inject({
      match: { path: '/v1/models' },
      action: {
        type: 'status',
        status: 200,
        body: '{"success":false,"message":"无权进行此操作，未登录且未提供 access token"}',
        headers: { 'content-type': 'application/json' },
      },
    });
    await assert.rejects(
      fetchKeyModels(clientFor(gw.url, DEMO_KEY).http),
      (e: unknown) => isGatewayError(e) && e.kind !== 'protocol' && /无权进行此操作/.test(e.message),
    );
    gw.clearFaults();
    // An answer that merely carries an `error` field (null, or beside its data) is an answer.
    gw.inject({
      match: { path: '/v1/models' },
      action: {
        type: 'status',
        status: 200,
        body: '{"data":[{"id":"m"}],"error":null}',
        headers: { 'content-type': 'application/json' },
      },
    });
    assert.deepEqual(
      (await fetchKeyModels(clientFor(gw.url, DEMO_KEY).http)).map((m) => m.id),
      ['m'],
    );
  });

  it('gives a stalled request a first-byte timeout that names the setting', async () => {
    gw.inject({ match: { path: '/v1/models' }, action: { type: 'stall' } });
    const { http } = clientFor(gw.url, DEMO_KEY, { timeouts: { ...TEST_TIMEOUTS, firstByteMs: 300 } });
    await assert.rejects(
      http.send({ method: 'GET', url: `${gw.url}/v1/models`, idempotent: false }),
      (e: unknown) => isGatewayError(e, 'timeout') && /firstByteSeconds/.test(e.message),
    );
  });

  it('uses the long limit for long calls', async () => {
    gw.inject({ match: { path: '/v1/models' }, action: { type: 'delay', ms: 500 } });
    const { http } = clientFor(gw.url, DEMO_KEY, { timeouts: { ...TEST_TIMEOUTS, firstByteMs: 200, longMs: 3000 } });
    const r = await http.send({ method: 'GET', url: `${gw.url}/v1/models`, timeout: 'long' });
    assert.equal(r.status, 200);
    await r.text();
  });

  it('gives a body that stops mid-way an idle timeout', async () => {
    gw.inject({
      match: { path: '/v1/models' },
      action: { type: 'stallAfterHeaders', status: 200, contentType: 'application/json', firstChunk: '{"data":[' },
    });
    const { http } = clientFor(gw.url, DEMO_KEY, { timeouts: { ...TEST_TIMEOUTS, idleMs: 300 } });
    const r = await http.send({ method: 'GET', url: `${gw.url}/v1/models` });
    await assert.rejects(r.text(), (e: unknown) => isGatewayError(e, 'timeout') && /idleSeconds/.test(e.message));
  });

  it('lets a long call stay silent as long as the long limit allows, and says which setting to raise', async () => {
    gw.inject({
      match: { path: '/v1/models' },
      action: { type: 'stallAfterHeaders', status: 200, contentType: 'application/json', firstChunk: '{"data":[' },
    });
    const { http } = clientFor(gw.url, DEMO_KEY, { timeouts: { ...TEST_TIMEOUTS, idleMs: 200, longMs: 2000 } });
    const r = await http.send({ method: 'GET', url: `${gw.url}/v1/models`, timeout: 'long' });
    await assert.rejects(
      r.text(),
      (e: unknown) =>
        isGatewayError(e, 'timeout') && /more than 2 s/.test(e.message) && /longRequestSeconds/.test(e.message),
    );
  });

  it('cancels at once when aborted', async () => {
    gw.inject({ match: { path: '/v1/models' }, action: { type: 'stall' } });
    const { http } = clientFor(gw.url, DEMO_KEY);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await assert.rejects(
      http.send({ method: 'GET', url: `${gw.url}/v1/models`, signal: controller.signal }),
      (e: unknown) => isGatewayError(e, 'cancelled'),
    );
    assert.ok(Date.now() - started < TEST_TIMEOUTS.firstByteMs, 'did not wait for the timeout');
  });

  it('reports a refused connection as a network error after bounded retries', async () => {
    const { http, lines } = clientFor('http://127.0.0.1:1', DEMO_KEY);
    await assert.rejects(
      http.send({ method: 'POST', url: 'http://127.0.0.1:1/v1/chat/completions', json: {} }),
      (e: unknown) => isGatewayError(e, 'network') && /refused/.test(e.message),
    );
    assert.equal(
      lines.filter((l) => /retrying/.test(l)).length,
      2,
      'a request that never left may be sent again, at most twice more',
    );
  });

  describe('through a proxy', () => {
    let proxy: ConnectProxy;
    before(async () => {
      proxy = await new ConnectProxy().start();
    });
    after(() => proxy.stop());
    beforeEach(() => {
      proxy.records.length = 0;
    });

    it("tunnels through VS Code's http.proxy", async () => {
      const { http } = clientFor(gw.url, DEMO_KEY, {
        proxy: {
          mode: 'inherit',
          support: 'override',
          authorization: '',
          proxyUrl: proxy.url,
          strictSSL: true,
          noProxy: [],
          env: {},
        },
      });
      assert.ok((await fetchKeyModels(http)).length > 0);
      assert.equal(proxy.records.length, 1);
      assert.equal(proxy.records[0]?.target, new URL(gw.url).host);
      assert.equal(
        proxy.records[0]?.headers.authorization,
        undefined,
        'the key is inside the tunnel, not on the CONNECT',
      );
      assert.equal(gw.log[0]?.headers.authorization, `Bearer ${DEMO_KEY}`);
    });

    it('tunnels through HTTP_PROXY from the environment', async () => {
      const { http } = clientFor(gw.url, DEMO_KEY, {
        proxy: {
          mode: 'inherit',
          support: 'override',
          authorization: '',
          proxyUrl: '',
          strictSSL: true,
          noProxy: [],
          env: { HTTP_PROXY: proxy.url },
        },
      });
      await fetchKeyModels(http);
      assert.equal(proxy.records.length, 1);
    });

    it('bypasses the proxy for http.noProxy hosts and when turned off', async () => {
      await fetchKeyModels(
        clientFor(gw.url, DEMO_KEY, {
          proxy: {
            mode: 'inherit',
            support: 'override',
            authorization: '',
            proxyUrl: proxy.url,
            strictSSL: true,
            noProxy: ['127.0.0.1'],
            env: {},
          },
        }).http,
      );
      await fetchKeyModels(
        clientFor(gw.url, DEMO_KEY, {
          proxy: {
            mode: 'off',
            support: 'override',
            authorization: '',
            proxyUrl: proxy.url,
            strictSSL: true,
            noProxy: [],
            env: {},
          },
        }).http,
      );
      assert.equal(proxy.records.length, 0);
    });

    it('says so when the proxy refuses', async () => {
      const strict = await new ConnectProxy({ requireAuth: 'Basic dXNlcjpwdw==' }).start();
      try {
        const { http } = clientFor(gw.url, DEMO_KEY, {
          proxy: {
            mode: 'inherit',
            support: 'override',
            authorization: '',
            proxyUrl: strict.url,
            strictSSL: true,
            noProxy: [],
            env: {},
          },
        });
        await assert.rejects(
          fetchKeyModels(http),
          (e: unknown) => isGatewayError(e, 'network') && /proxy/i.test(e.message),
        );
      } finally {
        await strict.stop();
      }
    });
  });
});

describe('HTTP client: leaving a streamed body early', () => {
  /** A local server: each request gets `first`, then whatever `rest` writes. */
  let server: http.Server;
  let url: string;
  let rest: (res: http.ServerResponse) => void = () => undefined;
  /** Per response, in order: whether the server saw it closed before it had finished it (aborted by the client). */
  let aborted: Array<Promise<boolean>> = [];

  before(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      aborted.push(new Promise((resolve) => res.on('close', () => resolve(!res.writableFinished))));
      rest(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    aborted = [];
  });

  /** Sends a request, reads its first chunk, optionally says the answer is complete, leaves, and waits for the body to close. */
  async function readFirst(client: ReturnType<typeof clientFor>['http'], complete: boolean): Promise<unknown[]> {
    const response = await client.send({ method: 'GET', url, anonymous: true });
    const errors: unknown[] = [];
    const closed = new Promise<void>((resolve) => response.body.once('close', () => resolve()));
    response.body.on('error', (err) => errors.push(err));
    for await (const chunk of response.chunks()) {
      assert.ok(Buffer.from(chunk).toString().startsWith('data: first\n\n'));
      if (complete) response.complete();
      break;
    }
    await closed;
    return errors;
  }

  it('lets the end of a completed answer arrive: no error, the server finishes it', async () => {
    rest = (res) => setImmediate(() => res.end('data: [DONE]\n\n'));
    const { http: client } = clientFor(url, undefined);
    try {
      for (let i = 0; i < 3; i++) assert.deepEqual(await readFirst(client, true), []);
      assert.deepEqual(await Promise.all(aborted), [false, false, false]);
    } finally {
      await client.close();
    }
  });

  it('aborts an answer left without being complete, as before', async () => {
    let timer: NodeJS.Timeout | undefined;
    rest = (res) => (timer = setTimeout(() => res.end('data: [DONE]\n\n'), 10_000));
    const { http: client } = clientFor(url, undefined);
    try {
      await readFirst(client, false);
      assert.deepEqual(await Promise.all(aborted), [true]);
    } finally {
      clearTimeout(timer);
      await client.close();
    }
  });

  it('aborts a completed answer whose body goes on and on', async () => {
    let stop = false;
    rest = (res) => {
      // Far more than a body's end after the terminator.
      const more = (): void => {
        while (!stop && !res.destroyed && res.write(Buffer.alloc(16 * 1024, 0x20)));
        if (!stop && !res.destroyed) res.once('drain', more);
      };
      more();
    };
    const { http: client } = clientFor(url, undefined);
    try {
      await readFirst(client, true);
      assert.deepEqual(await Promise.all(aborted), [true]);
    } finally {
      stop = true;
      await client.close();
    }
  });
});
