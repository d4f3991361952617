/**
 * Cached tokens as each protocol reports them (and the forms new-api maps them to), and what an
 * answer costs with them.
 */
import assert from 'node:assert/strict';
import { collectChat, eventsFromBytes } from '../../src/core/chat/chat';
import type { Usage } from '../../src/core/chat/events';
import { answerCost } from '../../src/core/chat/tokenCost';
import type { ChatProtocol } from '../../src/core/models/types';

async function usageOf(
  protocol: ChatProtocol,
  frames: Array<[string | undefined, unknown]>,
): Promise<Usage | undefined> {
  const text = frames
    .map(
      ([event, data]) =>
        `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
    )
    .join('');
  async function* chunks() {
    yield new TextEncoder().encode(text);
  }
  const result = await collectChat(eventsFromBytes(protocol, chunks()));
  assert.equal(result.error, undefined);
  return result.usage;
}

const completionsEnd = (usage: Record<string, unknown>): Array<[undefined, unknown]> => [
  [undefined, { choices: [{ delta: { content: 'hi' }, finish_reason: 'stop' }] }],
  [undefined, { choices: [], usage: { prompt_tokens: 2000, completion_tokens: 10, total_tokens: 2010, ...usage } }],
  [undefined, '[DONE]'],
];

describe('prompt caching: cached tokens read from every usage form', () => {
  it('Chat Completions: OpenAI / Qwen / GLM prompt_tokens_details.cached_tokens', async () => {
    const usage = await usageOf('chatCompletions', completionsEnd({ prompt_tokens_details: { cached_tokens: 1536 } }));
    assert.equal(usage?.inputTokens, 2000);
    assert.equal(usage?.cachedInputTokens, 1536);
  });

  it("Chat Completions: new-api's mapping of Claude's reads and writes (cached_tokens, cached_creation_tokens)", async () => {
    const usage = await usageOf(
      'chatCompletions',
      completionsEnd({ prompt_tokens_details: { cached_tokens: 1200, cached_creation_tokens: 300 } }),
    );
    assert.equal(usage?.cachedInputTokens, 1200);
    assert.equal(usage?.cacheWriteTokens, 300);
  });

  it("Chat Completions: DeepSeek's prompt_cache_hit_tokens and Moonshot's top-level cached_tokens", async () => {
    const deepseek = await usageOf(
      'chatCompletions',
      completionsEnd({ prompt_cache_hit_tokens: 1792, prompt_cache_miss_tokens: 208 }),
    );
    assert.equal(deepseek?.cachedInputTokens, 1792);
    const kimi = await usageOf('chatCompletions', completionsEnd({ cached_tokens: 1024 }));
    assert.equal(kimi?.cachedInputTokens, 1024);
  });

  it('Responses: input_tokens_details.cached_tokens', async () => {
    const usage = await usageOf('responses', [
      [
        undefined,
        {
          type: 'response.completed',
          response: {
            status: 'completed',
            output: [],
            usage: {
              input_tokens: 3000,
              output_tokens: 5,
              total_tokens: 3005,
              input_tokens_details: { cached_tokens: 2944 },
            },
          },
        },
      ],
    ]);
    assert.deepEqual(usage, {
      inputTokens: 3000,
      outputTokens: 5,
      totalTokens: 3005,
      reasoningTokens: undefined,
      cachedInputTokens: 2944,
    });
  });

  it("Messages: cache_read_input_tokens / cache_creation_input_tokens, added to Anthropic's uncached input_tokens", async () => {
    const usage = await usageOf('messages', [
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            usage: {
              input_tokens: 50,
              cache_read_input_tokens: 4000,
              cache_creation_input_tokens: 700,
              output_tokens: 1,
            },
          },
        },
      ],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 12 } }],
      ['message_stop', { type: 'message_stop' }],
    ]);
    assert.deepEqual(usage, {
      inputTokens: 4750,
      outputTokens: 12,
      totalTokens: 4762,
      cachedInputTokens: 4000,
      cacheWriteTokens: 700,
    });
  });
});

describe('prompt caching: the cost of an answer', () => {
  const usage: Usage = { inputTokens: 10_000, cachedInputTokens: 8000, outputTokens: 1000 };

  it('bills (input − cached) at the input price and the cached tokens at the cache price', () => {
    const cost = answerCost(usage, { input: 3, output: 15, cacheRead: 0.3 });
    assert.ok(cost);
    assert.equal(cost.cachePriceKnown, true);
    assert.ok(Math.abs(cost.usd - (2000 * 3 + 8000 * 0.3 + 1000 * 15) / 1e6) < 1e-12);
  });

  it('a model without a cache price gets no discount, and says the cache price is unknown', () => {
    const cost = answerCost(usage, { input: 3, output: 15 });
    assert.ok(cost);
    assert.equal(cost.cachePriceKnown, false);
    assert.ok(Math.abs(cost.usd - (10_000 * 3 + 1000 * 15) / 1e6) < 1e-12);
  });

  it('writes to the cache at their own price; no price at all gives no estimate', () => {
    const cost = answerCost(
      { inputTokens: 5000, cacheWriteTokens: 4000, outputTokens: 0 },
      { input: 3, output: 15, cacheWrite: 3.75 },
    );
    assert.ok(cost && Math.abs(cost.usd - (1000 * 3 + 4000 * 3.75) / 1e6) < 1e-12);
    assert.equal(answerCost(usage, undefined), undefined);
    assert.equal(answerCost(usage, { input: 3 }), undefined);
  });
});
