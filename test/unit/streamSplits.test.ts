import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { collectChat, eventsFromBytes } from '../../src/core/chat/chat';
import type { ChatEvent } from '../../src/core/chat/events';
import type { ChatProtocol } from '../../src/core/models/types';
import { RECORDED, withCrlf } from './fixtures/recordedStreams';

async function* from(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

async function events(protocol: ChatProtocol, chunks: Uint8Array[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of eventsFromBytes(protocol, from(chunks))) out.push(e.type === 'error' ? { type: 'error', kind: e.error.kind, message: e.error.message } : e);
  return out;
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const p of points) {
    chunks.push(bytes.subarray(start, p));
    start = p;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

describe('streams split at any byte boundary', () => {
  for (const { protocol, stream } of RECORDED) {
    for (const [variant, text] of [
      ['LF', stream],
      ['CRLF', withCrlf(stream)],
    ] as const) {
      const bytes = new TextEncoder().encode(text);

      it(`${protocol} (${variant}): every single split point gives the same events`, async () => {
        const whole = await events(protocol, [bytes]);
        assert.ok(whole.length > 5);
        assert.ok(!whole.some((e) => (e as ChatEvent).type === 'error'), JSON.stringify(whole));
        for (let i = 1; i < bytes.length; i++) {
          assert.deepEqual(await events(protocol, splitAt(bytes, [i])), whole, `split at byte ${i}`);
        }
      });

      it(`${protocol} (${variant}): random multi-splits, down to one byte per chunk, give the same events`, async () => {
        const whole = await events(protocol, [bytes]);
        await fc.assert(
          fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 60 }), async (cuts) => {
            assert.deepEqual(await events(protocol, splitAt(bytes, cuts)), whole);
          }),
          { numRuns: 60 },
        );
        const bytewise = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
        assert.deepEqual(await events(protocol, bytewise), whole);
      });
    }
  }
});

describe('recorded streams decode to the right content', () => {
  const decode = async (protocol: ChatProtocol, text: string) => collectChat(eventsFromBytes(protocol, from([new TextEncoder().encode(text)])));

  it('Chat Completions: reasoning, text, tool call fragments, usage chunk with choices []', async () => {
    const r = await decode('chatCompletions', RECORDED[0]!.stream);
    assert.equal(r.reasoning, 'Denke über «Größe» nach… ');
    assert.equal(r.text, 'Héllo, 世界! Emoji 🎉 done.');
    assert.deepEqual(r.toolCalls, [{ id: 'call_abc', name: 'get_weather', arguments: '{"city":"Zürich"}' }]);
    assert.deepEqual(r.usage, { inputTokens: 9, outputTokens: 12, totalTokens: 21, reasoningTokens: 5 });
    assert.equal(r.finishReason, 'toolCalls');
    assert.equal(r.error, undefined);
  });

  it('Responses: reasoning summary, text, url citation, partial and final image, usage', async () => {
    const r = await decode('responses', RECORDED[1]!.stream);
    assert.equal(r.reasoning, 'Überlege kurz… ');
    assert.equal(r.text, 'Grüße aus 東京 und 🍣.');
    assert.deepEqual(r.citations, [{ url: 'https://example.com/tokyo', title: 'Tōkyō' }]);
    assert.deepEqual(r.images, [{ base64: 'iVBORw0KGgpGSU5BTA==', format: 'png' }]);
    assert.deepEqual(r.usage, { inputTokens: 10, outputTokens: 7, totalTokens: 17, reasoningTokens: 3 });
    assert.equal(r.finishReason, 'stop');
  });

  it('Messages: thinking, ping skipped, text, tool input JSON joined, cumulative usage', async () => {
    const r = await decode('messages', RECORDED[2]!.stream);
    assert.equal(r.reasoning, 'Ich überlege… ');
    assert.equal(r.text, 'Bonjour, ça va? 日本語 ✓');
    assert.deepEqual(r.toolCalls, [{ id: 'toolu_01', name: 'get_weather', arguments: '{"city": "Paris"}' }]);
    assert.deepEqual(r.usage, { inputTokens: 25, outputTokens: 42, totalTokens: 67 });
    assert.equal(r.finishReason, 'toolCalls');
  });

  it('a stream cut mid-event keeps the text before it and ends with a protocol error', async () => {
    for (const { protocol, stream } of RECORDED) {
      const cut = stream.slice(0, Math.floor(stream.length * 0.6));
      const r = await decode(protocol, cut);
      assert.ok(r.text.length > 0 || r.reasoning.length > 0, protocol);
      assert.equal(r.error?.kind, 'protocol', protocol);
      assert.match(r.error?.message ?? '', /cut off.*kept/);
    }
  });

  it('errors inside the stream become error events with their kind', async () => {
    const completions = 'data: {"choices":[{"index":0,"delta":{"content":"partial "}}]}\n\ndata: {"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}}\n\n';
    const c = await decode('chatCompletions', completions);
    assert.equal(c.text, 'partial ');
    assert.equal(c.error?.kind, 'rateLimited');

    const flat = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"so far"}\n\nevent: error\ndata: {"type":"error","sequence_number":2,"code":"server_error","message":"boom","param":null}\n\n';
    const nested = 'event: error\ndata: {"type":"error","sequence_number":1,"error":{"type":"invalid_request_error","code":"rate_limit_exceeded","message":"slow down","param":"input"}}\n\n';
    const f = await decode('responses', flat);
    assert.equal(f.text, 'so far');
    assert.equal(f.error?.kind, 'server');
    assert.match(f.error?.message ?? '', /boom/);
    const n = await decode('responses', nested);
    assert.equal(n.error?.kind, 'badRequest');
    assert.match(n.error?.message ?? '', /slow down/);

    const failed = 'event: response.failed\ndata: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The server had an error while processing your request."},"output":[]}}\n\n';
    assert.match((await decode('responses', failed)).error?.message ?? '', /server had an error/);

    const incomplete = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"long"}\n\nevent: response.incomplete\ndata: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}\n\n';
    const i = await decode('responses', incomplete);
    assert.equal(i.finishReason, 'length');
    assert.equal(i.text, 'long');

    const overloaded = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const o = await decode('messages', overloaded);
    assert.equal(o.text, 'Hi');
    assert.equal(o.error?.kind, 'server');
    assert.match(o.error?.message ?? '', /Overloaded/);
  });

  it('an unreadable event is a protocol error naming the event, not a crash', async () => {
    const r = await decode('chatCompletions', 'data: {"choices":[{"index":0,"delta":{"content":"ok "}}]}\n\ndata: {not json\n\n');
    assert.equal(r.text, 'ok ');
    assert.equal(r.error?.kind, 'protocol');
  });
});
