import * as assert from 'node:assert/strict';
import { collectChat, streamChat } from '../../src/core/chat/chat';
import type { ChatRequest } from '../../src/core/chat/events';
import { errorFromResponse } from '../../src/core/errorBody';
import { isGatewayError } from '../../src/core/errors';
import { KeyQueue } from '../../src/core/keyQueue';
import { generateImages } from '../../src/core/media/images';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { clientFor } from '../support/client';
import { until } from '../support/until';

const BUSY_KEY = 'sk-BusyKeyOfTheDoubleWithConcurrency2';
const LIMIT = 2;

/** new-api's refusal of a request past the key's concurrency limit. */
const busyBody = (id: string) =>
  JSON.stringify({
    error: {
      code: 'token_concurrency_limit_reached',
      message: `token_concurrency_limit_reached (request id: ${id})`,
      type: 'new_api_error',
    },
  });

function chatRequest(prompt: string, signal?: AbortSignal): ChatRequest {
  return {
    model: 'gpt-4o-mini',
    protocol: 'chatCompletions',
    messages: [{ role: 'user', content: prompt }],
    stream: true,
    ...(signal ? { signal } : {}),
  };
}

/** A client whose waits between attempts are recorded and take no time. */
function recordingClient(gw: GatewayDouble, key: string, extra: { now?: () => number; keyQueue?: KeyQueue } = {}) {
  const waits: number[] = [];
  const client = clientFor(gw.url, key, { wait: async (ms) => void waits.push(ms), ...extra });
  return { ...client, waits };
}

describe('Limits the gateway enforces', () => {
  let gw: GatewayDouble;

  before(async () => {
    gw = new GatewayDouble();
    gw.addKey({ key: BUSY_KEY, group: 'default', maxConcurrency: LIMIT });
    await gw.start();
  });
  after(() => gw.stop());
  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
  });

  const chats = () => gw.log.filter((e) => e.path === '/v1/chat/completions');

  describe('429 and Retry-After', () => {
    it('waits the seconds Retry-After gives, then sends again', async () => {
      gw.inject({
        match: { path: '/v1/chat/completions' },
        times: 1,
        action: { type: 'status', status: 429, body: busyBody, headers: { 'retry-after': '2' } },
      });
      const { http, waits } = recordingClient(gw, DEMO_KEY);
      const result = await collectChat(streamChat(http, chatRequest('hello')));
      assert.equal(result.error, undefined);
      assert.match(result.text, /Echo from gpt-4o-mini/);
      assert.deepEqual(waits, [2000]);
      assert.equal(chats().length, 2);
    });

    it('waits until the HTTP date Retry-After gives, measured on the injected clock', async () => {
      const now = Date.parse('2026-11-28T08:00:00Z');
      gw.inject({
        match: { path: '/v1/chat/completions' },
        times: 1,
        action: {
          type: 'status',
          status: 429,
          body: '',
          headers: { 'retry-after': new Date(now + 3000).toUTCString() },
        },
      });
      const { http, waits } = recordingClient(gw, DEMO_KEY, { now: () => now });
      const result = await collectChat(streamChat(http, chatRequest('hello')));
      assert.equal(result.error, undefined);
      assert.deepEqual(waits, [3000]);
    });

    it('spaces out attempts refused for concurrency without Retry-After, and stops after a bounded number', async () => {
      gw.inject({ match: { path: '/v1/chat/completions' }, action: { type: 'status', status: 429, body: busyBody } });
      const { http, waits } = recordingClient(gw, DEMO_KEY);
      const result = await collectChat(streamChat(http, chatRequest('hello')));
      assert.ok(isGatewayError(result.error, 'rateLimited'), String(result.error));
      assert.match(result.error.message, /concurrency limit allows/);
      assert.deepEqual(waits, [500, 1000, 2000, 4000, 8000]);
      assert.equal(chats().length, 6);
    });

    it('does not retry a rate-limit 429 that gives no Retry-After (new-api counts refused requests too)', async () => {
      gw.inject({
        match: { path: '/v1/chat/completions' },
        action: {
          type: 'status',
          status: 429,
          body: (id) =>
            JSON.stringify({
              error: {
                code: '',
                message: `您已达到总请求数限制：1分钟内最多请求2次 (request id: ${id})`,
                type: 'new_api_error',
              },
            }),
        },
      });
      const { http, waits } = recordingClient(gw, DEMO_KEY);
      const result = await collectChat(streamChat(http, chatRequest('hello')));
      assert.ok(isGatewayError(result.error, 'rateLimited'));
      assert.deepEqual(waits, []);
      assert.equal(chats().length, 1);
    });

    it('never sends again once text has streamed, even when the stream ends with a concurrency error', async () => {
      const sse =
        'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Half an answer"}}]}\n\n' +
        'data: {"error":{"code":"token_concurrency_limit_reached","message":"token_concurrency_limit_reached","type":"new_api_error"}}\n\n' +
        'data: [DONE]\n\n';
      gw.inject({
        match: { path: '/v1/chat/completions' },
        action: { type: 'status', status: 200, body: sse, headers: { 'content-type': 'text/event-stream' } },
      });
      const { http, waits } = recordingClient(gw, DEMO_KEY);
      const result = await collectChat(streamChat(http, chatRequest('hello')));
      assert.equal(result.text, 'Half an answer');
      assert.ok(isGatewayError(result.error, 'rateLimited'), String(result.error));
      assert.deepEqual(waits, []);
      assert.equal(chats().length, 1);
    });
  });

  describe('a burst of one key from two front ends', () => {
    it('queues the requests so that all succeed and the gateway never has more than its limit', async () => {
      const queue = new KeyQueue();
      const { http } = recordingClient(gw, BUSY_KEY, { keyQueue: queue });
      const before = gw.concurrency(BUSY_KEY);
      const hold = gw.holdRelays();
      try {
        // The sidebar (or VS Code's chat) asks three answers while an image tool runs twice.
        const answers = [1, 2, 3].map((i) => collectChat(streamChat(http, chatRequest(`answer ${i}`))));
        const images = [1, 2].map((i) =>
          generateImages(http, { model: 'gpt-image-1', prompt: `picture ${i}`, n: 1, size: '1024x1024' }),
        );
        await until(() => queue.state().waiting === 3, 'the refused requests wait in the queue');
        assert.equal(gw.concurrency(BUSY_KEY).inFlight, LIMIT);
        assert.equal(queue.state().limit, LIMIT, 'learnt from what ran when the gateway refused');
        hold.release();
        const results = await Promise.all(answers);
        for (const r of results) assert.equal(r.error, undefined, String(r.error));
        assert.deepEqual(
          results.map((r) => /answer (\d)/.exec(r.text)?.[1]),
          ['1', '2', '3'],
        );
        for (const imgs of await Promise.all(images)) assert.equal(imgs.length, 1);
      } finally {
        hold.release();
      }
      const after = gw.concurrency(BUSY_KEY);
      assert.ok(after.peak <= LIMIT, `never more than ${LIMIT} in flight (peak ${after.peak})`);
      assert.equal(after.refused - before.refused, 3, 'only the first burst was refused; the queue held the rest');
      assert.equal(queue.state().inFlight, 0, 'every slot was given back');
    });

    it('tells a request that it waits in the queue, and cancels it there without sending it', async () => {
      const queue = new KeyQueue();
      queue.learn('default', 2, LIMIT);
      const { http } = recordingClient(gw, BUSY_KEY, { keyQueue: queue });
      const hold = gw.holdRelays();
      const controller = new AbortController();
      let waiting: Promise<unknown> | undefined;
      try {
        const running = [1, 2].map((i) => collectChat(streamChat(http, chatRequest(`answer ${i}`))));
        await until(() => gw.concurrency(BUSY_KEY).inFlight === LIMIT, 'two answers run');
        let told = 0;
        waiting = collectChat(
          streamChat(http, { ...chatRequest('the third', controller.signal), onQueued: () => void told++ }),
        );
        await until(() => queue.state().waiting === 1, 'the third waits');
        assert.equal(told, 1, 'the chat request is told it waits for a free slot (the view says so)');
        controller.abort();
        const third = (await waiting) as Awaited<ReturnType<typeof collectChat>>;
        assert.ok(isGatewayError(third.error, 'cancelled'), String(third.error));
        assert.equal(queue.state().waiting, 0);
        hold.release();
        for (const r of await Promise.all(running)) assert.equal(r.error, undefined);
      } finally {
        hold.release();
      }
      assert.equal(chats().length, 2, 'the cancelled answer never reached the gateway');
      assert.ok(!chats().some((e) => (e.bodyText ?? '').includes('the third')));
    });
  });

  describe("new-api's error codes", () => {
    const refusal = (status: number, code: string, message: string) => (id: string) =>
      JSON.stringify({ error: { message: `${message} (request id: ${id})`, type: 'new_api_error', param: '', code } });

    it('token_concurrency_limit_reached: says the limit where the gateway states it', () => {
      const stated = errorFromResponse({
        status: 429,
        body: JSON.stringify({
          error: {
            code: 'token_concurrency_limit_reached',
            message: 'token concurrency limit reached: max concurrency 3',
          },
        }),
      });
      assert.equal(stated.kind, 'rateLimited');
      assert.match(stated.message, /run 3 requests at once/);
      const unstated = errorFromResponse({ status: 429, body: busyBody('r1') });
      assert.match(unstated.message, /did not say the limit/);
      const chinese = errorFromResponse({
        status: 429,
        body: JSON.stringify({ error: { message: '当前令牌并发请求数已达上限 2' } }),
      });
      assert.match(chinese.message, /run 2 requests at once/);
    });

    it('insufficient_user_quota: the quota error with what is left on the key', async () => {
      gw.inject({
        match: { path: '/v1/chat/completions' },
        times: 1,
        action: {
          type: 'status',
          status: 403,
          body: refusal(403, 'insufficient_user_quota', '用户额度不足, 剩余额度: ＄0.010000'),
        },
      });
      const waits: number[] = [];
      const noted = clientFor(gw.url, DEMO_KEY, {
        wait: async (ms) => void waits.push(ms),
        quotaNote: async () => 'US$0.01 is left on this key.',
      }).http;
      const result = await collectChat(streamChat(noted, chatRequest('hello')));
      assert.ok(isGatewayError(result.error, 'quota'), String(result.error));
      assert.equal(result.error.code, 'insufficient_user_quota');
      assert.match(result.error.message, /quota is not enough.*＄0\.010000.*US\$0\.01 is left on this key\./s);
      assert.deepEqual(waits, []);
      assert.equal(chats().length, 1);
    });

    it('pre_consume_token_quota_failed: the same quota error, with what is left', async () => {
      gw.inject({
        match: { path: '/v1/chat/completions' },
        times: 1,
        action: {
          type: 'status',
          status: 403,
          body: refusal(
            403,
            'pre_consume_token_quota_failed',
            'token quota is not enough, token remain quota: ＄0.000500, need quota: ＄0.002000',
          ),
        },
      });
      const noted = clientFor(gw.url, DEMO_KEY, { quotaNote: async () => 'Nothing is left on this key.' }).http;
      const result = await collectChat(streamChat(noted, chatRequest('hello')));
      assert.ok(isGatewayError(result.error, 'quota'), String(result.error));
      assert.equal(result.error.code, 'pre_consume_token_quota_failed');
      assert.match(result.error.message, /token remain quota: ＄0\.000500.*Nothing is left on this key\.$/s);
    });

    it('model_not_found: the model-unavailable error, which takes the model-gone path', async () => {
      gw.inject({
        match: { path: '/v1/chat/completions' },
        times: 1,
        action: {
          type: 'status',
          status: 503,
          body: refusal(
            503,
            'model_not_found',
            'No available channel for model gpt-4o-mini under group default (distributor)',
          ),
        },
      });
      const result = await collectChat(streamChat(clientFor(gw.url, DEMO_KEY).http, chatRequest('hello')));
      assert.ok(isGatewayError(result.error, 'modelUnavailable'), String(result.error));
      assert.match(result.error.message, /not granted to this key's group "default"/);
    });

    for (const [code, words] of [
      ['prompt_blocked', 'prompt blocked by the upstream safety filter'],
      ['sensitive_words_detected', '敏感词检测失败: 包含敏感词'],
    ] as const) {
      it(`${code}: "the gateway refused this content" with its words, not retried`, async () => {
        gw.inject({
          match: { path: '/v1/chat/completions' },
          action: { type: 'status', status: 400, body: refusal(400, code, words), headers: { 'retry-after': '1' } },
        });
        const { http, waits } = recordingClient(gw, DEMO_KEY);
        const result = await collectChat(streamChat(http, chatRequest('hello')));
        assert.ok(isGatewayError(result.error, 'contentRefused'), String(result.error));
        assert.match(result.error.message, /The gateway refused this content \(HTTP 400\)/);
        assert.ok(result.error.message.includes(words), result.error.message);
        assert.ok(!/request id/.test(result.error.message));
        assert.deepEqual(waits, []);
        assert.equal(chats().length, 1);
      });
    }

    it('a content refusal inside a stream keeps its kind', async () => {
      const sse =
        'data: {"error":{"code":"sensitive_words_detected","message":"sensitive words detected","type":"new_api_error"}}\n\ndata: [DONE]\n\n';
      gw.inject({
        match: { path: '/v1/chat/completions' },
        action: { type: 'status', status: 200, body: sse, headers: { 'content-type': 'text/event-stream' } },
      });
      const result = await collectChat(streamChat(clientFor(gw.url, DEMO_KEY).http, chatRequest('hello')));
      assert.ok(isGatewayError(result.error, 'contentRefused'), String(result.error));
    });
  });
});
