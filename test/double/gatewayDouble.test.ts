import assert from 'node:assert/strict';
import {
  DEMO_KEY,
  DISABLED_KEY,
  EXPIRED_KEY,
  GatewayDouble,
  LOW_TOKEN_QUOTA_KEY,
  MEMORY_RATE_LIMITED_KEY,
  newRequestId,
  RATE_LIMITED_KEY,
  VIP_KEY,
  VIP_ONLY_MODEL,
  WHITELIST_KEY,
  ZERO_QUOTA_KEY,
  type CatalogFormat,
} from '../gateway';
import {
  anthropicError,
  GLM_INSUFFICIENT_BALANCE,
  GLM_RATE_LIMITED,
  htmlErrorPage,
  kimiError,
  notJsonBody,
  oneApiMiddlewareError,
  oneApiNoChannelMessage,
  oneApiRelayError,
  taskError,
} from '../gateway/errorBodies';

/** wire-formats §0: YYYYMMDDHHMMSS + unpadded nanos + 8-hex build hash + 8 random chars. */
const REQUEST_ID = /^\d{14}\d{1,9}[0-9a-f]{8}[A-Za-z0-9]{8}$/;

type Json = Record<string, unknown>;

describe('gateway double', function () {
  let gw: GatewayDouble;

  beforeEach(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });

  afterEach(async () => {
    await gw.stop();
  });

  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

  function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(gw.url + path, { headers });
  }

  function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(gw.url + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  const chat = (key: string, model = 'gpt-4o-mini', text = 'hello') =>
    post('/v1/chat/completions', { model, messages: [{ role: 'user', content: text }] }, bearer(key));

  async function json(res: Response): Promise<Json> {
    return (await res.json()) as Json;
  }

  function requestId(res: Response): string {
    const id = res.headers.get('x-oneapi-request-id');
    assert.ok(id, 'X-Oneapi-Request-Id header missing');
    return id;
  }

  /** The middleware shape: keys code/message/type only (no param), message suffixed with the header's id. */
  async function assertMiddlewareError(res: Response, status: number, message: string, code = ''): Promise<void> {
    assert.equal(res.status, status);
    const body = await json(res);
    assert.deepEqual(body, {
      error: { code, message: `${message} (request id: ${requestId(res)})`, type: 'new_api_error' },
    });
  }

  describe('GET /v1/models', () => {
    it('lists the models of the key’s group in new-api’s OpenAI format', async () => {
      const res = await get('/v1/models', bearer(DEMO_KEY));
      assert.equal(res.status, 200);
      assert.match(requestId(res), REQUEST_ID);
      const body = await json(res);
      assert.equal(body.success, true);
      assert.equal(body.object, 'list');
      const data = body.data as Json[];
      const ids = data.map((m) => m.id);
      assert.ok(!ids.includes(VIP_ONLY_MODEL));
      for (const id of [
        'gpt-4o-mini',
        'claude-sonnet-4-5',
        'glm-4.6',
        'wan2.5-t2v-preview',
        'glm-file-parser',
        'kimi-file-extract',
      ]) {
        assert.ok(ids.includes(id), id);
      }
      assert.ok(data.every((m) => m.created === 1626777600 && m.object === 'model'));
      assert.deepEqual(
        data.find((m) => m.id === 'gpt-4o-mini'),
        {
          id: 'gpt-4o-mini',
          object: 'model',
          created: 1626777600,
          owned_by: 'openai',
          supported_endpoint_types: ['openai', 'openai-response'],
        },
      );
      const extract = data.find((m) => m.id === 'kimi-file-extract');
      assert.equal(extract?.owned_by, 'custom');
      assert.deepEqual(extract?.supported_endpoint_types, []);
    });

    it('shows the vip-only model to a vip key', async () => {
      const body = await json(await get('/v1/models', bearer(VIP_KEY)));
      assert.ok((body.data as Json[]).some((m) => m.id === VIP_ONLY_MODEL));
    });

    it('lists exactly the whitelist of a whitelisted key', async () => {
      const body = await json(await get('/v1/models', bearer(WHITELIST_KEY)));
      assert.deepEqual(
        (body.data as Json[]).map((m) => m.id),
        ['gpt-4o-mini', 'qwen-plus', VIP_ONLY_MODEL],
      );
    });

    it('answers in the Anthropic format to x-api-key plus anthropic-version', async () => {
      const res = await get('/v1/models', { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01' });
      assert.equal(res.status, 200);
      const body = await json(res);
      const data = body.data as Json[];
      assert.deepEqual(data[0], {
        id: 'gpt-4o-mini',
        created_at: '2021-07-20T10:40:00Z',
        display_name: 'gpt-4o-mini',
        type: 'model',
      });
      assert.equal(body.first_id, 'gpt-4o-mini');
      assert.equal(body.last_id, data[data.length - 1]?.id);
      assert.equal(body.has_more, false);
      assert.equal(body.success, undefined);
    });

    it('takes x-api-key alone as the key but keeps the OpenAI format', async () => {
      const body = await json(await get('/v1/models', { 'x-api-key': DEMO_KEY }));
      assert.equal(body.object, 'list');
    });

    it('retrieves a known model with null endpoint types and an unknown one as an error with HTTP 200', async () => {
      const known = await get('/v1/models/qwen-plus', bearer(DEMO_KEY));
      assert.deepEqual(await json(known), {
        id: 'qwen-plus',
        object: 'model',
        created: 1626777600,
        owned_by: 'ali',
        supported_endpoint_types: null,
      });
      const unknown = await get('/v1/models/nope-1', bearer(DEMO_KEY));
      assert.equal(unknown.status, 200);
      assert.deepEqual(await json(unknown), {
        error: {
          message: "The model 'nope-1' does not exist",
          type: 'invalid_request_error',
          param: 'model',
          code: 'model_not_found',
        },
      });
    });

    it('is not rate limited', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await get('/v1/models', bearer(RATE_LIMITED_KEY))).status, 200);
    });
  });

  describe('middleware errors', () => {
    it('answers 401 Invalid token for a missing, unknown, disabled or expired key', async () => {
      await assertMiddlewareError(await get('/v1/models'), 401, 'Invalid token');
      await assertMiddlewareError(await get('/v1/models', bearer('sk-nope')), 401, 'Invalid token');
      await assertMiddlewareError(await get('/v1/models', bearer(DISABLED_KEY)), 401, 'Invalid token');
      await assertMiddlewareError(await chat(EXPIRED_KEY), 401, 'Invalid token');
    });

    it('speaks Chinese for a zh-CN user or a zh Accept-Language', async () => {
      await assertMiddlewareError(await get('/v1/models', { 'Accept-Language': 'zh-CN,zh;q=0.9' }), 401, '无效的令牌');
      const zh = new GatewayDouble({ language: 'zh-CN' });
      await zh.start();
      try {
        await assertMiddlewareError(await fetch(`${zh.url}/v1/models`), 401, '无效的令牌');
      } finally {
        await zh.stop();
      }
    });

    it('copies x-api-key only on Messages and models paths', async () => {
      const res = await post(
        '/v1/chat/completions',
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
        { 'x-api-key': DEMO_KEY },
      );
      await assertMiddlewareError(res, 401, 'Invalid token');
    });

    it('accepts the key without sk- and refuses a pinned channel', async () => {
      assert.equal((await get('/v1/models', bearer(DEMO_KEY.slice(3)))).status, 200);
      await assertMiddlewareError(await get('/v1/models', bearer(`${DEMO_KEY}-3`)), 403, '普通用户不支持指定渠道');
    });

    it('answers 400 for a missing model and for a body that is not JSON', async () => {
      const missing = await post('/v1/chat/completions', { messages: [] }, bearer(DEMO_KEY));
      await assertMiddlewareError(missing, 400, 'Model name not specified, model name cannot be empty');
      const broken = await post('/v1/chat/completions', '{"model":', bearer(DEMO_KEY));
      await assertMiddlewareError(broken, 400, 'Invalid request: invalid JSON request body');
    });

    it('answers 503 model_not_found for a model outside the key’s group', async () => {
      await assertMiddlewareError(
        await chat(DEMO_KEY, VIP_ONLY_MODEL),
        503,
        `No available channel for model ${VIP_ONLY_MODEL} under group default (distributor)`,
        'model_not_found',
      );
      assert.equal((await chat(VIP_KEY, VIP_ONLY_MODEL)).status, 200);
    });

    it('checks the whitelist before the group', async () => {
      await assertMiddlewareError(await chat(WHITELIST_KEY, 'gpt-5'), 403, 'This token has no access to model gpt-5');
      assert.equal((await chat(WHITELIST_KEY, VIP_ONLY_MODEL)).status, 503);
    });

    it('rate limits with a Chinese message (redis) or an empty body (memory), failed requests included', async () => {
      assert.equal((await chat(RATE_LIMITED_KEY, 'no-such-model')).status, 503);
      assert.equal((await chat(RATE_LIMITED_KEY)).status, 200);
      await assertMiddlewareError(
        await chat(RATE_LIMITED_KEY),
        429,
        '您已达到总请求数限制：1分钟内最多请求2次，包括失败次数，请检查您的请求是否正确',
      );
      await chat(MEMORY_RATE_LIMITED_KEY);
      await chat(MEMORY_RATE_LIMITED_KEY);
      const limited = await chat(MEMORY_RATE_LIMITED_KEY);
      assert.equal(limited.status, 429);
      assert.equal(await limited.text(), '');
      assert.match(requestId(limited), REQUEST_ID);
    });

    it('answers unknown paths with 404 Invalid URL before authenticating', async () => {
      const res = await get('/v1/xyz?a=1');
      assert.equal(res.status, 404);
      assert.match(requestId(res), REQUEST_ID);
      assert.deepEqual(await json(res), {
        error: { message: 'Invalid URL (GET /v1/xyz)', type: 'invalid_request_error', param: '', code: '' },
      });
      assert.equal((await get('/v1/chat/completions', bearer(DEMO_KEY))).status, 404);
    });

    it('answers /v1/files with 501 api_not_implemented', async () => {
      const expected = {
        error: { message: 'API not implemented', type: 'new_api_error', param: '', code: 'api_not_implemented' },
      };
      const list = await get('/v1/files', bearer(DEMO_KEY));
      assert.equal(list.status, 501);
      assert.deepEqual(await json(list), expected);
      const form = new FormData();
      form.append('purpose', 'file-extract');
      form.append('file', new Blob(['%PDF-1.4']), 'a.pdf');
      const upload = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: bearer(DEMO_KEY), body: form });
      assert.equal(upload.status, 501);
      assert.equal((await get('/v1/files', bearer('sk-nope'))).status, 401);
    });
  });

  describe('relay errors and quota', () => {
    it('rejects a user with no quota: 403 insufficient_user_quota, relay shape with param ""', async () => {
      const res = await chat(ZERO_QUOTA_KEY);
      assert.equal(res.status, 403);
      assert.deepEqual(await json(res), {
        error: {
          message: `用户额度不足, 剩余额度: ＄0.000000 (request id: ${requestId(res)})`,
          type: 'new_api_error',
          param: '',
          code: 'insufficient_user_quota',
        },
      });
    });

    it('rejects a user whose quota is below the pre-consumption', async () => {
      gw.setQuota(DEMO_KEY, 0.0001);
      const res = await chat(DEMO_KEY, 'claude-sonnet-4-5');
      assert.equal(res.status, 403);
      const error = (await json(res)).error as Json;
      assert.equal(error.code, 'insufficient_user_quota');
      assert.equal(
        error.message,
        `预扣费额度失败, 用户剩余额度: ＄0.000100, 需要预扣费额度: ＄0.001500 (request id: ${requestId(res)})`,
      );
    });

    it('rejects a key whose own quota is short: pre_consume_token_quota_failed', async () => {
      const res = await chat(LOW_TOKEN_QUOTA_KEY, 'claude-sonnet-4-5');
      assert.equal(res.status, 403);
      const error = (await json(res)).error as Json;
      assert.equal(error.code, 'pre_consume_token_quota_failed');
      assert.equal(
        error.message,
        `token quota is not enough, token remain quota: ＄0.000500, need quota: ＄0.001500 (request id: ${requestId(res)})`,
      );
    });

    it('reports relay validation failures as 500 invalid_request', async () => {
      const res = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [] }, bearer(DEMO_KEY));
      assert.equal(res.status, 500);
      assert.equal(((await json(res)).error as Json).code, 'invalid_request');
    });

    it('is as strict as Anthropic on /v1/messages: max_tokens required, turns start with the user and alternate', async () => {
      const headers = { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01' };
      const refused = async (body: Json, message: string) => {
        const res = await post('/v1/messages', body, headers);
        assert.equal(res.status, 400);
        const error = (await json(res)).error as Json;
        assert.equal(error.type, 'invalid_request_error');
        assert.equal(error.message, message);
      };
      const user = { role: 'user', content: 'hi' };
      const assistant = { role: 'assistant', content: 'hello' };
      await refused({ model: 'claude-sonnet-4-5', messages: [user] }, 'max_tokens: Field required');
      await refused(
        { model: 'claude-sonnet-4-5', max_tokens: 0, messages: [user] },
        'max_tokens: Input should be a valid integer greater than or equal to 1',
      );
      await refused(
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [assistant, user] },
        'messages: first message must use the "user" role',
      );
      await refused(
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [user, user] },
        'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
      );
      const ok = await post(
        '/v1/messages',
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [user, assistant, user] },
        headers,
      );
      assert.equal(ok.status, 200);
    });

    it('uses the Messages shape for relay errors on /v1/messages but the middleware shape for middleware errors', async () => {
      const message = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
      const quota = await post('/v1/messages', message, {
        'x-api-key': ZERO_QUOTA_KEY,
        'anthropic-version': '2023-06-01',
      });
      assert.equal(quota.status, 403);
      assert.deepEqual(await json(quota), {
        type: 'error',
        error: {
          type: 'new_api_error',
          message: `用户额度不足, 剩余额度: ＄0.000000 (request id: ${requestId(quota)})`,
        },
      });
      await assertMiddlewareError(
        await post('/v1/messages', message, { 'x-api-key': DISABLED_KEY }),
        401,
        'Invalid token',
      );
      await assertMiddlewareError(
        await post('/v1/messages', { ...message, model: VIP_ONLY_MODEL }, { 'x-api-key': DEMO_KEY }),
        503,
        `No available channel for model ${VIP_ONLY_MODEL} under group default (distributor)`,
        'model_not_found',
      );
    });
  });

  describe('answers', () => {
    it('answers chat completions deterministically and charges the quota', async () => {
      const res = await chat(DEMO_KEY, 'gpt-4o-mini', 'hello');
      assert.equal(res.status, 200);
      const body = await json(res);
      assert.equal(body.object, 'chat.completion');
      assert.equal(body.model, 'gpt-4o-mini');
      const [choice] = body.choices as Json[];
      assert.deepEqual(choice?.message, {
        role: 'assistant',
        content: 'Echo from gpt-4o-mini: hello',
        refusal: null,
        annotations: [],
      });
      assert.equal(choice?.finish_reason, 'stop');
      const usage = body.usage as Json;
      assert.equal(usage.total_tokens, (usage.prompt_tokens as number) + (usage.completion_tokens as number));
      const left = gw.quota(DEMO_KEY).userUsd;
      assert.ok(left !== undefined && left < 100 && left > 99.99, String(left));
    });

    it('answers a Messages request in the Anthropic shape', async () => {
      const res = await post(
        '/v1/messages',
        {
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
        },
        { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01' },
      );
      assert.equal(res.status, 200);
      const body = await json(res);
      assert.equal(body.type, 'message');
      assert.deepEqual(body.content, [{ type: 'text', text: 'Echo from claude-sonnet-4-5: hi' }]);
      assert.equal(body.stop_reason, 'end_turn');
    });
  });

  describe('catalog origin', () => {
    it('serves the catalog with validators and no gateway request id, and 304s matching conditionals', async () => {
      const res = await fetch(gw.catalogUrl);
      assert.equal(res.status, 200);
      assert.ok(gw.catalogUrl.endsWith('/static/models.json'));
      assert.notEqual(new URL(gw.catalogUrl).port, new URL(gw.url).port);
      assert.equal(res.headers.get('x-oneapi-request-id'), null);
      const etag = res.headers.get('etag');
      const lastModified = res.headers.get('last-modified');
      assert.ok(etag && lastModified);
      await res.text();

      const byTag = await fetch(gw.catalogUrl, { headers: { 'If-None-Match': etag } });
      assert.equal(byTag.status, 304);
      assert.equal(byTag.headers.get('etag'), etag);
      assert.equal((await fetch(gw.catalogUrl, { headers: { 'If-Modified-Since': lastModified } })).status, 304);
      assert.equal(
        (await fetch(gw.catalogUrl, { headers: { 'If-None-Match': '"stale"', 'If-Modified-Since': lastModified } }))
          .status,
        200,
      );
    });

    it('changes ETag and moves Last-Modified forward when the catalog changes', async () => {
      const first = await fetch(gw.catalogUrl);
      await first.text();
      gw.setCatalog({ format: 'models-list' });
      const second = await fetch(gw.catalogUrl, { headers: { 'If-None-Match': first.headers.get('etag') ?? '' } });
      assert.equal(second.status, 200);
      assert.notEqual(second.headers.get('etag'), first.headers.get('etag'));
      assert.ok(
        Date.parse(second.headers.get('last-modified') ?? '') > Date.parse(first.headers.get('last-modified') ?? ''),
      );
      assert.ok(Array.isArray(((await second.json()) as Json).models));
    });

    it('logs the Authorization header only when one is sent', async () => {
      await (await fetch(gw.catalogUrl)).text();
      await (await fetch(gw.catalogUrl, { headers: bearer(DEMO_KEY) })).text();
      const [plain, withKey] = gw.log.filter((e) => e.origin === 'catalog');
      assert.equal(plain?.headers.authorization, undefined);
      assert.equal(withKey?.headers.authorization, `Bearer ${DEMO_KEY}`);
    });

    async function catalog(format: CatalogFormat): Promise<{ text: string; doc: Json }> {
      gw.setCatalog({ format });
      const text = await (await fetch(gw.catalogUrl)).text();
      assert.ok(!text.includes('sk-') && !/apiKey/i.test(text), 'a catalog holds no API key');
      assert.ok(text.includes(VIP_ONLY_MODEL), 'the catalog lists models some groups cannot use');
      assert.ok(!text.includes('kimi-file-extract'), 'tool entries are not models');
      return { text, doc: JSON.parse(text) as Json };
    }

    it('generates the opencode format pointing at the gateway', async () => {
      const { doc } = await catalog('opencode');
      const provider = (doc.provider as Record<string, Json>)['model-gateway'];
      assert.equal(provider?.npm, '@ai-sdk/openai-compatible');
      assert.deepEqual(provider?.options, { baseURL: `${gw.url}/v1` });
      const models = provider?.models as Record<string, Json>;
      assert.deepEqual(models['claude-sonnet-4-5']?.provider, { npm: '@ai-sdk/anthropic', api: `${gw.url}/v1` });
      assert.deepEqual(models['gpt-5']?.provider, { npm: '@ai-sdk/openai', api: `${gw.url}/v1` });
      assert.deepEqual((models['wan2.5-t2v-preview']?.modalities as Json).output, ['video']);
    });

    it('generates the models.dev format keyed by provider', async () => {
      const { doc } = await catalog('models.dev');
      const alibaba = doc.alibaba as Json;
      assert.equal(alibaba.npm, '@ai-sdk/openai-compatible');
      const qwen = (alibaba.models as Record<string, Json>)['qwen-plus'];
      assert.deepEqual(qwen?.modalities, { input: ['text'], output: ['text'] });
      assert.equal((doc.anthropic as Json).npm, '@ai-sdk/anthropic');
      assert.equal((doc.deepseek as Json).api, `${gw.url}/v1`);
    });

    it('generates the models-list and openai-list formats with video hints', async () => {
      const list = (await catalog('models-list')).doc.models as Json[];
      const wan = list.find((m) => m.id === 'wan2.5-t2v-preview');
      assert.deepEqual(wan?.video, { sizes: ['832*480'], durations: [5] });
      assert.equal(list.find((m) => m.id === 'deepseek-r1')?.reasoning, true);
      const data = (await catalog('openai-list')).doc.data as Json[];
      const wanListed = data.find((m) => m.id === 'wan2.5-t2v-preview');
      assert.deepEqual(wanListed?.supported_sizes, ['832*480']);
      assert.deepEqual(wanListed?.supported_durations, [5]);
      assert.equal(data.find((m) => m.id === 'gpt-5')?.context_length, 400_000);
    });

    it('generates an unrecognisable format and serves raw overrides verbatim', async () => {
      const { doc } = await catalog('unknown');
      assert.deepEqual(Object.keys(doc).sort(), ['entries', 'schema']);
      gw.setCatalog({ format: 'opencode', body: 'not json at all' });
      assert.equal(await (await fetch(gw.catalogUrl)).text(), 'not json at all');
    });

    it('answers other paths with a 404 page', async () => {
      const res = await fetch(new URL('/static/other.json', gw.catalogUrl));
      assert.equal(res.status, 404);
      assert.match(await res.text(), /404 Not Found/);
    });
  });

  describe('faults', () => {
    it('delays, then handles normally', async () => {
      gw.inject({ match: { path: '/v1/models' }, times: 1, action: { type: 'delay', ms: 120 } });
      const started = Date.now();
      assert.equal((await get('/v1/models', bearer(DEMO_KEY))).status, 200);
      assert.ok(Date.now() - started >= 110);
    });

    it('stalls without answering', async () => {
      gw.inject({ match: { path: '/v1/models' }, action: { type: 'stall' } });
      await assert.rejects(fetch(`${gw.url}/v1/models`, { signal: AbortSignal.timeout(150) }), {
        name: 'TimeoutError',
      });
      assert.equal(gw.log[0]?.status, 0);
    });

    it('stalls after the head and a first chunk', async () => {
      gw.inject({
        match: { method: 'POST', path: '/v1/chat/completions' },
        action: { type: 'stallAfterHeaders', firstChunk: 'data: {}\n\n' },
      });
      const res = await post('/v1/chat/completions', {}, bearer(DEMO_KEY));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      assert.match(requestId(res), REQUEST_ID);
      const reader = res.body?.getReader();
      assert.ok(reader);
      const first = await reader.read();
      assert.equal(new TextDecoder().decode(first.value), 'data: {}\n\n');
      // A barrier instead of a wait: the fault runs to its end when the head is written (nothing is
      // left to write), and another request answered in full after it means whatever the stalled
      // response was given has been written to its socket too. The read must still be waiting.
      let settled: string | undefined;
      const rest = reader.read().then(
        (r) => (settled = r.done ? 'ended' : 'data'),
        () => (settled = 'failed'),
      );
      assert.equal((await get('/v1/models', bearer(DEMO_KEY))).status, 200);
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      assert.equal(settled, undefined, 'nothing more arrives and the response stays open');
      await reader.cancel();
      await rest;
    });

    it('resets the connection', async () => {
      gw.inject({ match: { origin: 'catalog' }, times: 1, action: { type: 'reset' } });
      await assert.rejects(fetch(gw.catalogUrl), TypeError);
      assert.equal((await fetch(gw.catalogUrl)).status, 200);
    });

    it('answers with an injected status the given number of times', async () => {
      gw.inject({
        match: { path: /^\/v1\/models\?page=2$/ },
        times: 1,
        action: { type: 'status', status: 502, body: htmlErrorPage(502), fromProxy: true },
      });
      assert.equal((await get('/v1/models?page=1', bearer(DEMO_KEY))).status, 200);
      const proxied = await get('/v1/models?page=2', bearer(DEMO_KEY));
      assert.equal(proxied.status, 502);
      assert.equal(proxied.headers.get('content-type'), 'text/html');
      assert.equal(proxied.headers.get('x-oneapi-request-id'), null);
      assert.match(await proxied.text(), /<center>nginx<\/center>/);
      assert.equal((await get('/v1/models?page=2', bearer(DEMO_KEY))).status, 200);
    });

    it('passes the request id to an injected body and keeps the header', async () => {
      gw.inject({
        match: { origin: 'gateway', method: 'post' },
        action: {
          type: 'status',
          status: 429,
          body: (id) => JSON.stringify({ error: { message: `busy (request id: ${id})` } }),
        },
      });
      const res = await chat(DEMO_KEY);
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.deepEqual(await json(res), { error: { message: `busy (request id: ${requestId(res)})` } });
      gw.clearFaults();
      assert.equal((await chat(DEMO_KEY)).status, 200);
    });

    it('cuts stalled requests off on stop()', async () => {
      gw.inject({ match: {}, action: { type: 'stall' } });
      const pending = fetch(`${gw.url}/v1/models`);
      while (gw.log.length === 0) await new Promise((r) => setTimeout(r, 5));
      await gw.stop();
      await assert.rejects(pending, TypeError);
    });
  });

  describe('request log', () => {
    it('records both origins with lower-case headers, body and status', async () => {
      await chat(DEMO_KEY, 'gpt-4o-mini', 'logged');
      await (await fetch(`${gw.catalogUrl}?v=2`)).text();
      const [call, download] = gw.log;
      assert.equal(call?.origin, 'gateway');
      assert.equal(call?.method, 'POST');
      assert.equal(call?.path, '/v1/chat/completions');
      assert.equal(call?.headers.authorization, `Bearer ${DEMO_KEY}`);
      assert.equal(call?.headers['content-type'], 'application/json');
      assert.equal(JSON.parse(call?.bodyText ?? '{}').messages[0].content, 'logged');
      assert.equal(call?.bodyBytes, Buffer.byteLength(call?.bodyText ?? ''));
      assert.equal(call?.status, 200);
      assert.match(call?.requestId ?? '', REQUEST_ID);
      assert.ok(typeof call?.time === 'number' && call.time <= Date.now());
      assert.equal(download?.origin, 'catalog');
      assert.equal(download?.path, '/static/models.json?v=2');
      assert.equal(download?.requestId, undefined);
      gw.clearLog();
      assert.equal(gw.log.length, 0);
    });

    it('keeps binary bodies out of bodyText', async () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array([0, 1, 2])]), 'a.bin');
      await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: bearer(DEMO_KEY), body: form });
      assert.equal(gw.log[0]?.bodyText, undefined);
      assert.ok((gw.log[0]?.bodyBytes ?? 0) > 3);
    });
  });
});

describe('gateway double error bodies', () => {
  it('makes request ids in new-api’s format', () => {
    const id = newRequestId(new Date(Date.UTC(2026, 5, 12, 8, 30, 15, 7)));
    assert.match(id, REQUEST_ID);
    assert.ok(id.startsWith('20260612083015'));
  });

  it('builds the provider and task shapes', () => {
    assert.deepEqual(GLM_INSUFFICIENT_BALANCE, {
      status: 429,
      body: { error: { code: '1113', message: '余额不足或无可用资源包,请充值。' } },
    });
    assert.deepEqual(kimiError('invalid_request_error', 'Invalid purpose'), {
      error: { type: 'invalid_request_error', message: 'Invalid purpose' },
    });
    assert.deepEqual(taskError('task_not_exist', 'task_not_exist'), {
      code: 'task_not_exist',
      message: 'task_not_exist',
      data: null,
    });
    assert.deepEqual(oneApiMiddlewareError('无效的令牌', 'r1'), {
      error: { message: '无效的令牌 (request id: r1)', type: 'one_api_error' },
    });
    assert.deepEqual(oneApiRelayError('user quota is not enough', 'insufficient_user_quota'), {
      error: { message: 'user quota is not enough', type: 'one_api_error', param: '', code: 'insufficient_user_quota' },
    });
    assert.equal(oneApiNoChannelMessage('default', 'qwen-max'), '当前分组 default 下对于模型 qwen-max 无可用渠道');
    assert.deepEqual(GLM_RATE_LIMITED.body, { error: { code: '1302', message: 'Rate limit reached for requests' } });
    assert.deepEqual(anthropicError('overloaded_error', 'Overloaded', 'req_1'), {
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      request_id: 'req_1',
    });
  });

  it('builds bodies that are not JSON', () => {
    assert.throws(() => JSON.parse(notJsonBody()));
    assert.match(htmlErrorPage(504), /<title>504 Gateway Time-out<\/title>/);
  });
});

describe('gateway double connection options', () => {
  /** The Keep-Alive header of an answer: Node words the server's keepAliveTimeout there. */
  async function keepAlive(gw: GatewayDouble): Promise<string | null> {
    const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
    await res.arrayBuffer();
    return res.headers.get('keep-alive');
  }

  it("keeps idle connections as long as keepAliveTimeoutMs says, Node's 5 s by default", async () => {
    for (const [options, expected] of [
      [{}, 'timeout=5'],
      [{ keepAliveTimeoutMs: 120_000 }, 'timeout=120'],
    ] as const) {
      const gw = new GatewayDouble(options);
      await gw.start();
      try {
        assert.equal(await keepAlive(gw), expected);
      } finally {
        await gw.stop();
      }
    }
  });
});
