import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { effectiveProtocol, offeredProtocols } from '../../src/core/chat/capabilities';
import { collectChat, streamChat } from '../../src/core/chat/chat';
import type { ChatEvent } from '../../src/core/chat/events';
import { eachEvent } from '../../src/core/chat/transport';
import { errorFromResponse } from '../../src/core/errorBody';
import { GatewayError } from '../../src/core/errors';
import type { HttpClient } from '../../src/core/http';
import { mergeModels } from '../../src/core/models/classify';
import { fetchKeyModels } from '../../src/core/models/keyModels';
import { ModelRegistry } from '../../src/core/models/modelRegistry';
import {
  isProtocolRejection,
  withoutRefused,
  withProtocolFallback,
  type ProtocolSwitch,
} from '../../src/core/models/protocolFallback';
import { REFUSAL_TTL_MS, RefusalMemory } from '../../src/core/models/refusalMemory';
import type { ChatProtocol, ModelInfo } from '../../src/core/models/types';
import { DEFAULT_MODELS, DEMO_KEY, GatewayDouble } from '../gateway';
import { clientFor } from '../support/client';

describe('a protocol the relay refuses although the gateway lists it', function () {
  this.timeout(20_000);

  it('recognises the refusals new-api sends, and nothing else', () => {
    const refusals = [
      {
        status: 400,
        body: '{"error":{"message":"Model gpt-5 does not support apiType:openai.responses parameter (request id: 1)","type":"bad_response_status_code","param":"","code":"bad_response_status_code"}}',
      },
      {
        status: 500,
        body: '{"error":{"message":"not implemented (request id: 2)","type":"new_api_error","param":"","code":"convert_request_failed"}}',
      },
      {
        status: 404,
        body: '{"error":{"message":"Invalid URL (POST /v1/responses)","type":"invalid_request_error","param":"","code":""}}',
      },
    ];
    for (const r of refusals) assert.equal(isProtocolRejection(errorFromResponse(r)), true, r.body);
    const others = [
      { status: 400, body: '{"error":{"message":"max_tokens is too large","type":"invalid_request_error","code":""}}' },
      {
        status: 403,
        body: '{"error":{"message":"用户额度不足","type":"new_api_error","code":"insufficient_user_quota"}}',
      },
      {
        status: 404,
        body: '{"error":{"message":"Invalid URL (GET /v1/foo)","type":"invalid_request_error","code":""}}',
      },
      { status: 500, body: '{"error":{"message":"upstream error","type":"upstream_error","code":"server_error"}}' },
    ];
    for (const r of others) assert.equal(isProtocolRejection(errorFromResponse(r)), false, r.body);
    // What a proxy or web server in front of the gateway answers says nothing about the relay.
    const proxies = [
      { status: 501, body: '' },
      { status: 501, body: 'Not Implemented' },
      { status: 501, body: '<html><head><title>501 Not Implemented</title></head><body>nginx</body></html>' },
      { status: 404, body: '<html><head><title>Invalid URL (POST /v1/responses)</title></head></html>' },
      { status: 404, body: '<!DOCTYPE html><html><body>404 Not Found</body></html>' },
      { status: 400, body: 'Model gpt-5 does not support apiType:openai.responses parameter' },
    ];
    for (const r of proxies) assert.equal(isProtocolRejection(errorFromResponse(r)), false, `${r.status} ${r.body}`);
    assert.equal(
      isProtocolRejection(
        errorFromResponse({
          status: 501,
          body: '{"error":{"message":"not implemented","type":"new_api_error","code":"api_not_implemented"}}',
        }),
      ),
      true,
      "new-api's own 501",
    );
    const refused = errorFromResponse(refusals[0] ?? { status: 0, body: '' });
    assert.equal(refused.kind, 'notImplemented');
    assert.match(refused.message, /does not support the requested protocol/);
  });

  it('takes refused protocols out of a chat model, never all of them', () => {
    const models = mergeModels(
      [
        { id: 'gpt-5', endpointTypes: ['openai', 'openai-response'] },
        { id: 'glm', endpointTypes: ['openai'] },
        { id: 'img', endpointTypes: ['image-generation'] },
      ],
      undefined,
    );
    const out = withoutRefused(models, { 'gpt-5': ['chatCompletions'], glm: ['chatCompletions'], img: ['responses'] });
    assert.deepEqual(
      out.map((m) => [m.id, m.protocols]),
      [
        ['glm', ['chatCompletions']],
        ['gpt-5', ['responses']],
        ['img', []],
      ],
    );
  });

  describe('against the double', () => {
    let gw: GatewayDouble;
    let http: HttpClient;
    let models: ModelInfo[];

    before(async () => {
      gw = new GatewayDouble({ refusedEndpoints: { 'gpt-5': ['openai'] } });
      await gw.start();
      http = clientFor(gw.url, DEMO_KEY).http;
      models = mergeModels(await fetchKeyModels(http), undefined);
    });
    after(() => gw.stop());
    beforeEach(() => gw.clearLog());

    const model = (id: string) => models.find((m) => m.id === id) as ModelInfo;
    const ask = (over: ChatProtocol, text = 'hello there') =>
      streamChat(http, {
        model: 'gpt-5',
        protocol: over,
        messages: [{ role: 'user', content: text }],
        stream: true,
        maxTokens: 256,
      });
    const posts = () => gw.log.filter((e) => e.method === 'POST').map((e) => `${e.path} ${e.status}`);

    it('the double lists the protocol yet refuses it the way new-api relays the upstream refusal', async () => {
      assert.deepEqual(model('gpt-5').protocols, ['chatCompletions', 'responses'], 'advertised');
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: Record<string, string> };
      assert.match(
        body.error.message ?? '',
        /^Model gpt-5 does not support apiType:openai\.chat parameter \(request id: \w+\)$/,
      );
      assert.equal(body.error.code, 'bad_response_status_code');
      const before = gw.quota(DEMO_KEY).userUsd;
      await collectChat(ask('chatCompletions'));
      assert.equal(gw.quota(DEMO_KEY).userUsd, before, 'nothing charged for a refusal');
    });

    it('falls back once to the next listed protocol, tells the caller, and the answer arrives', async () => {
      const switches: ProtocolSwitch[] = [];
      const result = await collectChat(
        eachEvent(
          withProtocolFallback(
            model('gpt-5'),
            'chatCompletions',
            (over) => ask(over).batches(),
            (s) => void switches.push(s),
          ),
        ),
      );
      assert.equal(result.error, undefined, result.error?.message);
      assert.match(result.text, /hello there/);
      assert.deepEqual(
        switches.map((s) => [s.model, s.from, s.to, s.error.kind]),
        [['gpt-5', 'chatCompletions', 'responses', 'notImplemented']],
      );
      assert.deepEqual(posts(), ['/v1/chat/completions 400', '/v1/responses 200']);
    });

    it('never loops: when the second protocol is refused too, its error ends the answer', async () => {
      gw.refuseEndpoint('gpt-4o-mini', 'openai');
      gw.refuseEndpoint('gpt-4o-mini', 'openai-response');
      const switches: ProtocolSwitch[] = [];
      const mini = (over: ChatProtocol) =>
        streamChat(http, {
          model: 'gpt-4o-mini',
          protocol: over,
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
          maxTokens: 64,
        });
      const result = await collectChat(
        eachEvent(
          withProtocolFallback(
            model('gpt-4o-mini'),
            'chatCompletions',
            (over) => mini(over).batches(),
            (s) => void switches.push(s),
          ),
        ),
      );
      assert.equal(switches.length, 1);
      assert.match(result.error?.detail ?? '', /apiType:openai\.responses/);
      assert.deepEqual(posts(), ['/v1/chat/completions 400', '/v1/responses 400']);
    });

    it('does not fall back from an error after the answer began, nor from other errors', async () => {
      const switches: ProtocolSwitch[] = [];
      const cut = await collectChat(
        eachEvent(
          withProtocolFallback(
            model('gpt-5'),
            'responses',
            () => ask('responses', '[[midstream-error]] hello').batches(),
            (s) => void switches.push(s),
          ),
        ),
      );
      assert.ok(cut.error);
      assert.ok(cut.text.length > 0, 'the text that arrived is kept');
      const quota = async function* (): AsyncGenerator<ChatEvent[]> {
        yield [{ type: 'error', error: new GatewayError('quota', 'no quota') }];
      };
      const refused = await collectChat(
        eachEvent(withProtocolFallback(model('gpt-5'), 'chatCompletions', quota, (s) => void switches.push(s))),
      );
      assert.equal(refused.error?.kind, 'quota');
      assert.equal(switches.length, 0);
    });

    it('on the Messages route the refusal comes in the Messages error shape, and Chat Completions takes over', async () => {
      gw.refuseEndpoint('claude-sonnet-4-5', 'anthropic');
      const res = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { type: string; error: { message: string } };
      assert.equal(body.type, 'error');
      assert.match(
        body.error.message,
        /^Model claude-sonnet-4-5 does not support apiType:anthropic\.messages parameter/,
      );
      gw.clearLog();
      const claude = model('claude-sonnet-4-5');
      assert.deepEqual(claude.protocols, ['messages', 'chatCompletions']);
      const switches: ProtocolSwitch[] = [];
      const run = (over: ChatProtocol) =>
        streamChat(http, {
          model: claude.id,
          protocol: over,
          messages: [{ role: 'user', content: 'hi claude' }],
          stream: true,
          maxTokens: 64,
        });
      const result = await collectChat(
        eachEvent(
          withProtocolFallback(
            claude,
            'messages',
            (over) => run(over).batches(),
            (s) => void switches.push(s),
          ),
        ),
      );
      assert.equal(result.error, undefined, result.error?.message);
      assert.match(result.text, /hi claude/);
      assert.deepEqual(
        switches.map((s) => [s.from, s.to]),
        [['messages', 'chatCompletions']],
      );
      assert.deepEqual(posts(), ['/v1/messages 400', '/v1/chat/completions 200']);
    });

    it('a model listing one protocol has nothing to fall back to: the refusal is shown as it is', async () => {
      const only = { ...model('gpt-5'), protocols: ['chatCompletions'] as ChatProtocol[] };
      const switches: ProtocolSwitch[] = [];
      const result = await collectChat(
        eachEvent(
          withProtocolFallback(
            only,
            'chatCompletions',
            (over) => ask(over).batches(),
            (s) => void switches.push(s),
          ),
        ),
      );
      assert.equal(result.error?.kind, 'notImplemented');
      assert.equal(switches.length, 0);
      assert.deepEqual(posts(), ['/v1/chat/completions 400']);
    });

    describe('the registry remembers a refusal', () => {
      let dir: string;
      let now: number;
      beforeEach(() => {
        dir = mkdtempSync(path.join(os.tmpdir(), 'refusals-'));
        now = Date.UTC(2026, 0, 1);
      });
      afterEach(() => rmSync(dir, { recursive: true, force: true }));
      const registryAt = (client: HttpClient) =>
        new ModelRegistry({
          http: () => client,
          catalogUrl: () => '',
          store: { load: async () => undefined, save: async () => undefined },
          keys: async () => [{ id: 'legacy', name: 'default' }],
          modelChoices: async () => ({}),
          refused: new RefusalMemory(path.join(dir, 'refused-protocols.json'), { now: () => now }),
        });

      it('for that model at that gateway, across a restart of the registry, and in other windows', async () => {
        const registry = registryAt(http);
        await registry.refresh();
        assert.deepEqual(registry.find('gpt-5')?.protocols, ['chatCompletions', 'responses']);
        let notified = 0;
        registry.onDidChange(() => notified++);
        await registry.refuseProtocol('gpt-5', 'chatCompletions');
        assert.deepEqual(registry.find('gpt-5')?.protocols, ['responses']);
        assert.equal(notified, 1, 'views and VS Code learn of the change');
        const next = registryAt(http);
        await next.refresh();
        assert.deepEqual(
          next.find('gpt-5')?.protocols,
          ['responses'],
          'remembered in the next session (or another window)',
        );
        assert.deepEqual(next.find('gpt-5')?.protocolSource, 'gateway');
        assert.deepEqual(
          next.find('gpt-4o-mini')?.protocols,
          model('gpt-4o-mini').protocols,
          'other models keep theirs',
        );
      });

      it('not for another gateway', async () => {
        await registryAt(http).refuseProtocol('gpt-5', 'chatCompletions');
        const other = new GatewayDouble({ refusedEndpoints: {} });
        await other.start();
        const otherHttp = clientFor(other.url.replace('127.0.0.1', 'localhost'), DEMO_KEY).http;
        try {
          const elsewhere = registryAt(otherHttp);
          await elsewhere.refresh();
          assert.deepEqual(elsewhere.find('gpt-5')?.protocols, ['chatCompletions', 'responses']);
        } finally {
          await otherHttp.close();
          await other.stop();
        }
      });

      it('until it expires after 7 days, or the reset command forgets it', async () => {
        const registry = registryAt(http);
        await registry.refresh();
        await registry.refuseProtocol('gpt-5', 'chatCompletions');
        now += REFUSAL_TTL_MS - 1000;
        await registry.refresh();
        assert.deepEqual(registry.find('gpt-5')?.protocols, ['responses']);
        now += 2000;
        await registry.refresh();
        assert.deepEqual(registry.find('gpt-5')?.protocols, ['chatCompletions', 'responses'], 'expired');
        await registry.refuseProtocol('gpt-5', 'chatCompletions');
        assert.deepEqual(registry.find('gpt-5')?.protocols, ['responses']);
        await registry.resetRefusals();
        assert.deepEqual(registry.find('gpt-5')?.protocols, ['chatCompletions', 'responses'], 'reset at once');
        const next = registryAt(http);
        await next.refresh();
        assert.deepEqual(next.find('gpt-5')?.protocols, ['chatCompletions', 'responses'], 'and for good');
      });

      it("a user's explicit choice of a refused protocol wins; without one the working protocol is used", async () => {
        const registry = registryAt(http);
        await registry.refresh();
        await registry.refuseProtocol('gpt-5', 'chatCompletions');
        const gpt5 = registry.find('gpt-5') as ModelInfo;
        assert.equal(effectiveProtocol(gpt5, undefined), 'responses');
        assert.equal(effectiveProtocol(gpt5, 'chatCompletions'), 'chatCompletions');
        assert.deepEqual(
          offeredProtocols(gpt5),
          ['responses', 'chatCompletions'],
          'still offered, after the working one',
        );
        assert.equal(effectiveProtocol(gpt5, 'messages'), 'responses', 'a protocol the gateway never listed is not');
      });
    });
  });

  it('embedding and rerank models the double lists are not chat models', async () => {
    const extra = [
      { id: 'text-embedding-3-small', owned_by: 'openai', supported_endpoint_types: ['embeddings'] },
      { id: 'jina-reranker-v2-base-multilingual', owned_by: 'jina', supported_endpoint_types: ['jina-rerank'] },
    ];
    const gw = new GatewayDouble({
      models: [...DEFAULT_MODELS, ...extra],
      groups: { default: [...DEFAULT_MODELS.map((m) => m.id), ...extra.map((m) => m.id)] },
    });
    await gw.start();
    try {
      const listed = mergeModels(await fetchKeyModels(clientFor(gw.url, DEMO_KEY).http), undefined);
      assert.deepEqual(
        listed.filter((m) => extra.some((e) => e.id === m.id)).map((m) => [m.id, m.kind, m.protocols]),
        [
          ['jina-reranker-v2-base-multilingual', 'other', []],
          ['text-embedding-3-small', 'other', []],
        ],
      );
    } finally {
      await gw.stop();
    }
  });
});

describe('the refusal file shared with other versions', () => {
  it("keeps a newer version's kinds it does not know, and loads the ones it knows", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mg-refusals-'));
    try {
      const file = path.join(dir, 'refused-protocols.json');
      const at = 1_000_000;
      const newer = [
        { origin: 'https://gw.example', model: 'm', protocol: 'some-future-field', at },
        { origin: 'https://gw.example', model: 'm', protocol: 'responses', at },
      ];
      writeFileSync(file, JSON.stringify({ version: 1, refusals: newer }));
      const memory = new RefusalMemory(file, { now: () => at + 1 });
      assert.deepEqual(await memory.load('https://gw.example'), { m: ['responses'] });
      await memory.add('https://gw.example', 'm', 'fim');
      const kept = JSON.parse(readFileSync(file, 'utf8')) as { refusals: { protocol: string }[] };
      assert.deepEqual(kept.refusals.map((r) => r.protocol).sort(), ['fim', 'responses', 'some-future-field']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
