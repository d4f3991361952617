/**
 * The double's prompt caches: a prefix cache per key and model with a minimum length and a lifetime,
 * breakpoints counted and limited on Messages, cached tokens in each protocol's usage shape, and a
 * model that refuses a field it does not know.
 */
import assert from 'node:assert/strict';
import { DEMO_KEY } from '../gateway';
import { CACHE_LIFETIME_MS, PromptCacheDouble } from '../gateway/promptCache';
import { useDoubleClient } from '../support/client';

const long = (n: number) => 'The prefix every request of this conversation starts with. '.repeat(n);

async function post(
  url: string,
  path: string,
  body: unknown,
  key = DEMO_KEY,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('gateway double: prompt caching', () => {
  const double = useDoubleClient();
  beforeEach(() => double.gw.clearPromptCache());

  it('Chat Completions (automatic cache): the second request reads the first one’s prefix, reported in prompt_tokens_details', async () => {
    const messages = [
      { role: 'system', content: long(200) },
      { role: 'user', content: 'first question' },
    ];
    const first = await post(double.gw.url, '/v1/chat/completions', { model: 'deepseek-r1', messages });
    assert.equal(first.status, 200);
    assert.equal(
      (first.json.usage as { prompt_tokens_details: { cached_tokens: number } }).prompt_tokens_details.cached_tokens,
      0,
    );
    const second = await post(double.gw.url, '/v1/chat/completions', {
      model: 'deepseek-r1',
      messages: [...messages, { role: 'assistant', content: 'an answer' }, { role: 'user', content: 'second' }],
    });
    const usage = second.json.usage as { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
    assert.ok(usage.prompt_tokens_details.cached_tokens > usage.prompt_tokens / 2, JSON.stringify(usage));
    // Another key shares nothing with it.
    double.gw.clearLog();
  });

  it('a prefix below the minimum is not cached', async () => {
    const messages = [{ role: 'user', content: 'short' }];
    await post(double.gw.url, '/v1/chat/completions', { model: 'deepseek-r1', messages });
    const again = await post(double.gw.url, '/v1/chat/completions', {
      model: 'deepseek-r1',
      messages: [...messages, { role: 'assistant', content: 'a' }, { role: 'user', content: 'b' }],
    });
    assert.equal(
      (again.json.usage as { prompt_tokens_details: { cached_tokens: number } }).prompt_tokens_details.cached_tokens,
      0,
    );
  });

  it('Messages: nothing is cached without a breakpoint; with one, the write and then the read are reported apart', async () => {
    const system = long(200);
    const ask = (marked: boolean, turns: unknown[]) =>
      post(double.gw.url, '/v1/messages', {
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        system: marked ? [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }] : system,
        messages: turns,
      });
    const q1 = [{ role: 'user', content: 'first' }];
    const q2 = [...q1, { role: 'assistant', content: 'answer' }, { role: 'user', content: 'second' }];
    await ask(false, q1);
    const plain = (await ask(false, q2)).json.usage as Record<string, number>;
    assert.equal(plain.cache_read_input_tokens, 0);
    assert.equal(plain.cache_creation_input_tokens, 0);
    const write = (await ask(true, q1)).json.usage as Record<string, number>;
    assert.ok((write.cache_creation_input_tokens ?? 0) > 1000, JSON.stringify(write));
    assert.equal(write.cache_read_input_tokens, 0);
    const read = (await ask(true, q2)).json.usage as Record<string, number>;
    assert.ok((read.cache_read_input_tokens ?? 0) > 1000, JSON.stringify(read));
    assert.equal(read.cache_creation_input_tokens, 0, 'the system text was written already');
    assert.ok(
      (read.input_tokens ?? 0) < (read.cache_read_input_tokens ?? 0) / 4,
      'input_tokens counts only what was not cached',
    );
  });

  it('Messages: more than 4 breakpoints are refused with 400', async () => {
    const block = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });
    const res = await post(double.gw.url, '/v1/messages', {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: [block('a'), block('b'), block('c')],
      messages: [{ role: 'user', content: [block('d'), block('e')] }],
    });
    assert.equal(res.status, 400);
    assert.match(JSON.stringify(res.json), /maximum of 4 blocks with cache_control/);
  });

  it('Responses: cached tokens in input_tokens_details; a prompt_cache_key keeps its own cache', async () => {
    const input = (extra: unknown[]) => [
      { role: 'user', content: [{ type: 'input_text', text: long(200) }] },
      ...extra,
    ];
    const ask = (key: string, extra: unknown[]) =>
      post(double.gw.url, '/v1/responses', { model: 'gpt-5', prompt_cache_key: key, input: input(extra) });
    await ask('a', []);
    const more = [
      { role: 'assistant', content: [{ type: 'output_text', text: 'x' }] },
      { role: 'user', content: [{ type: 'input_text', text: 'y' }] },
    ];
    const same = (await ask('a', more)).json.usage as { input_tokens_details: { cached_tokens: number } };
    assert.ok(same.input_tokens_details.cached_tokens > 0);
    const other = (await ask('b', more)).json.usage as { input_tokens_details: { cached_tokens: number } };
    assert.equal(other.input_tokens_details.cached_tokens, 0);
  });

  it('a model whose upstream refuses an unknown field answers 400 naming it', async () => {
    double.gw.refuseField('gpt-4o-mini', 'prompt_cache_key');
    const res = await post(double.gw.url, '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      prompt_cache_key: 'k',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(res.status, 400);
    assert.match(JSON.stringify(res.json), /Unrecognized request argument supplied: prompt_cache_key/);
    const without = await post(double.gw.url, '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(without.status, 200);
  });

  it('an entry lives five minutes from its last use', () => {
    let now = 0;
    const cache = new PromptCacheDouble(() => now);
    const body = {
      messages: [
        { role: 'user', content: long(200) },
        { role: 'user', content: 'q' },
      ],
    };
    cache.account('k', 'openai', body);
    now += CACHE_LIFETIME_MS - 1;
    assert.ok(cache.account('k', 'openai', body).ok);
    const hit = cache.account('k', 'openai', body);
    assert.ok(hit.ok && hit.account.cachedTokens > 0);
    now += CACHE_LIFETIME_MS;
    const cold = cache.account('k', 'openai', body);
    assert.ok(cold.ok && cold.account.cachedTokens === 0);
  });
});
