/**
 * Caching asked for in each family's form, a setting that turns it off, and a field an upstream
 * refuses: the request is sent again without it and the model never gets it again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChatEvent } from '../../src/core/chat/events';
import { promptCacheRequest } from '../../src/core/chat/promptCache';
import { GatewayError } from '../../src/core/errors';
import { withoutRefused, withProtocolFallback } from '../../src/core/models/protocolFallback';
import { RefusalMemory } from '../../src/core/models/refusalMemory';
import type { ChatProtocol } from '../../src/core/models/types';
import type { CacheField } from '../../src/core/chat/cacheFields';
import { channelModel as model } from '../support/models';

describe('prompt caching: what each family is asked', () => {
  const on = { enabled: true, conversation: 'c1' };

  it('Claude: breakpoints on Messages and Chat Completions past its minimum, none on Responses; no key', () => {
    assert.deepEqual(promptCacheRequest(model('claude-sonnet-4-5', 'claude'), 'messages', on), {
      breakpoints: { minTokens: 1024 },
    });
    assert.deepEqual(promptCacheRequest(model('claude-haiku-4-5', 'claude'), 'chatCompletions', on), {
      breakpoints: { minTokens: 4096 },
    });
    assert.equal(promptCacheRequest(model('claude-sonnet-4-5', 'claude'), 'responses', on), undefined);
  });

  it('Qwen: explicit markers on Chat Completions only; OpenAI: prompt_cache_key per conversation', () => {
    assert.deepEqual(promptCacheRequest(model('qwen-plus', 'ali'), 'chatCompletions', on), {
      breakpoints: { minTokens: 1024 },
    });
    assert.equal(promptCacheRequest(model('qwen-plus', 'ali'), 'responses', on), undefined);
    assert.deepEqual(promptCacheRequest(model('gpt-5.1', 'openai'), 'responses', on), { key: { conversation: 'c1' } });
    assert.deepEqual(promptCacheRequest(model('gpt-4o', 'openai'), 'chatCompletions', { enabled: true }), { key: {} });
  });

  it('DeepSeek, Kimi and GLM cache by themselves: nothing is sent; the setting off sends nothing to anyone', () => {
    for (const [id, owner] of [
      ['deepseek-chat', 'deepseek'],
      ['kimi-k2', 'moonshot'],
      ['glm-4.6', 'zhipu'],
    ] as const)
      for (const protocol of ['chatCompletions', 'responses', 'messages'] as ChatProtocol[])
        assert.equal(promptCacheRequest(model(id, owner), protocol, on), undefined, `${id} ${protocol}`);
    assert.equal(promptCacheRequest(model('claude-sonnet-4-5', 'claude'), 'messages', { enabled: false }), undefined);
    assert.equal(promptCacheRequest(model('gpt-5.1', 'openai'), 'responses', { enabled: false }), undefined);
  });
});

describe('prompt caching: a field the upstream refuses', () => {
  const refusal = new GatewayError('badRequest', 'Unrecognized request argument supplied: prompt_cache_key', {
    status: 400,
    detail: 'Unrecognized request argument supplied: prompt_cache_key',
    jsonBody: true,
  });

  it('is sent once more without the field, told to onField, and the answer passes on', async () => {
    const gpt = model('gpt-5.1', 'openai');
    const runs: Array<[ChatProtocol, readonly CacheField[]]> = [];
    const refused: CacheField[] = [];
    async function* run(protocol: ChatProtocol, without: readonly CacheField[]): AsyncGenerator<ChatEvent[]> {
      runs.push([protocol, [...without]]);
      if (!without.includes('promptCacheKey')) yield [{ type: 'error', error: refusal }];
      else
        yield [
          { type: 'textDelta', text: 'hello' },
          { type: 'done', finishReason: 'stop' },
        ];
    }
    const events: ChatEvent[] = [];
    for await (const batch of withProtocolFallback(gpt, 'responses', run, () => assert.fail('no protocol switch'), {
      sent: (p) => (promptCacheRequest(gpt, p, { enabled: true })?.key ? ['promptCacheKey'] : []),
      onField: (field) => void refused.push(field),
    }))
      events.push(...batch);
    assert.deepEqual(runs, [
      ['responses', []],
      ['responses', ['promptCacheKey']],
    ]);
    assert.deepEqual(refused, ['promptCacheKey']);
    assert.deepEqual(
      events.map((e) => e.type),
      ['textDelta', 'done'],
    );
  });

  it('a refusal of a field the request did not carry is an ordinary error', async () => {
    const deepseek = model('deepseek-chat', 'deepseek');
    const events: ChatEvent[] = [];
    async function* run(): AsyncGenerator<ChatEvent[]> {
      yield [{ type: 'error', error: refusal }];
    }
    for await (const batch of withProtocolFallback(deepseek, 'chatCompletions', run, () => assert.fail('no switch'), {
      sent: () => [],
      onField: () => assert.fail('no field was sent'),
    }))
      events.push(...batch);
    assert.deepEqual(
      events.map((e) => e.type),
      ['error'],
    );
  });

  it('is remembered with the refused protocols (per gateway, shared file) and never asked of the model again', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'refusals-'));
    try {
      const memory = new RefusalMemory(path.join(dir, 'refused.json'));
      await memory.add('https://gw.example', 'gpt-5.1', 'promptCacheKey');
      const later = await new RefusalMemory(path.join(dir, 'refused.json')).load('https://gw.example');
      const [gpt] = withoutRefused([model('gpt-5.1', 'openai')], later);
      assert.ok(gpt);
      assert.deepEqual(gpt.refusedFields, ['promptCacheKey']);
      assert.deepEqual(
        gpt.protocols,
        ['chatCompletions', 'responses', 'messages'],
        'a field refusal takes no protocol away',
      );
      assert.equal(promptCacheRequest(gpt, 'responses', { enabled: true, conversation: 'c' }), undefined);
      assert.deepEqual(await memory.load('https://other.example'), {});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
