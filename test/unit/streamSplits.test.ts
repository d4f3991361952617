import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { collectChat, eventsFromBytes } from '../../src/core/chat/chat';
import type { ChatEvent } from '../../src/core/chat/events';
import type { ChatProtocol } from '../../src/core/models/types';
import { RECORDED, withCrlf } from './fixtures/recordedStreams';
import { TOOL_STREAMS } from './fixtures/toolStreams';
import { DEMO_KEY, GatewayDouble } from '../gateway';

async function* from(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

async function events(protocol: ChatProtocol, chunks: Uint8Array[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of eventsFromBytes(protocol, from(chunks)))
    out.push(e.type === 'error' ? { type: 'error', kind: e.error.kind, message: e.error.message } : e);
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
  const streams = [
    ...RECORDED.map((r) => ({ ...r, kind: 'answer' })),
    ...TOOL_STREAMS.map((r) => ({ ...r, kind: 'tool calls' })),
  ];
  for (const { protocol, stream, kind } of streams) {
    for (const [variant, text] of [
      ['LF', stream],
      ['CRLF', withCrlf(stream)],
    ] as const) {
      const bytes = new TextEncoder().encode(text);

      it(`${protocol} ${kind} (${variant}): every single split point gives the same events`, async () => {
        const whole = await events(protocol, [bytes]);
        assert.ok(whole.length >= 5);
        assert.ok(!whole.some((e) => (e as ChatEvent).type === 'error'), JSON.stringify(whole));
        for (let i = 1; i < bytes.length; i++) {
          assert.deepEqual(await events(protocol, splitAt(bytes, [i])), whole, `split at byte ${i}`);
        }
      });

      it(`${protocol} ${kind} (${variant}): random multi-splits, down to one byte per chunk, give the same events`, async () => {
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

describe('the gateway double’s tool-call streams split at any byte boundary', () => {
  let gw: GatewayDouble;
  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(async () => gw.stop());

  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city'],
  };
  const prompt = 'Please call the tool get_weather for Zürich days=4';
  const requests: Array<{ protocol: ChatProtocol; model: string; path: string; body: Record<string, unknown> }> = [
    // A Kimi model: fragments without index, ids like get_weather:0, reasoning first.
    {
      protocol: 'chatCompletions',
      model: 'kimi-k2-thinking',
      path: '/v1/chat/completions',
      body: {
        messages: [{ role: 'user', content: prompt }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: schema } }],
      },
    },
    {
      protocol: 'responses',
      model: 'gpt-4o-mini',
      path: '/v1/responses',
      body: {
        input: `[[reasoning]] ${prompt}`,
        tools: [{ type: 'function', name: 'get_weather', parameters: schema }],
      },
    },
    {
      protocol: 'messages',
      model: 'gpt-4o-mini',
      path: '/v1/messages',
      body: {
        max_tokens: 1024,
        messages: [{ role: 'user', content: `[[reasoning]] ${prompt}` }],
        tools: [{ name: 'get_weather', input_schema: schema }],
      },
    },
  ];

  for (const { protocol, model, path, body } of requests) {
    it(`${protocol} (${model}): random splits of the double's stream give the same events, one call with its parsed input`, async () => {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${DEMO_KEY}`,
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify({ model, stream: true, ...body }),
      });
      assert.equal(res.status, 200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const whole = await events(protocol, [bytes]);
      const calls = whole.filter((e) => (e as ChatEvent).type === 'toolCall') as Array<
        Extract<ChatEvent, { type: 'toolCall' }>
      >;
      assert.equal(calls.length, 1);
      assert.deepEqual(calls[0]?.input, { city: 'Zürich', days: 4 });
      assert.equal(calls[0]?.id, gw.log.at(-1)?.answer?.toolCalls[0]?.id);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 80 }), async (cuts) => {
          assert.deepEqual(await events(protocol, splitAt(bytes, cuts)), whole);
        }),
        { numRuns: 80 },
      );
    });
  }
});

describe('recorded streams decode to the right content', () => {
  const decode = async (protocol: ChatProtocol, text: string) =>
    collectChat(eventsFromBytes(protocol, from([new TextEncoder().encode(text)])));

  it('Chat Completions: reasoning, text, tool call fragments, usage chunk with choices []', async () => {
    const r = await decode('chatCompletions', RECORDED[0]!.stream);
    assert.equal(r.reasoning, 'Denke über «Größe» nach… ');
    assert.equal(r.text, 'Héllo, 世界! Emoji 🎉 done.');
    assert.deepEqual(r.toolCalls, [
      { id: 'call_abc', name: 'get_weather', input: { city: 'Zürich' }, arguments: '{"city":"Zürich"}' },
    ]);
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
    assert.deepEqual(r.toolCalls, [
      { id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' }, arguments: '{"city": "Paris"}' },
    ]);
    assert.deepEqual(r.usage, { inputTokens: 25, outputTokens: 42, totalTokens: 67 });
    assert.equal(r.finishReason, 'toolCalls');
  });

  it('Chat Completions tool calls: parallel calls, fragments without index, id only first, "" arguments', async () => {
    const r = await decode('chatCompletions', TOOL_STREAMS[0]!.stream);
    assert.equal(r.reasoning, 'Zwei Städte prüfen… ');
    assert.equal(r.text, 'Checking both.');
    assert.deepEqual(
      r.toolCalls.map(({ id, name, input }) => ({ id, name, input })),
      [
        { id: 'get_weather:0', name: 'get_weather', input: { city: 'Zürich', unit: 'celsius' } },
        { id: 'get_weather:1', name: 'get_weather', input: { city: '東京' } },
        { id: 'get_time:2', name: 'get_time', input: {} },
      ],
    );
    assert.equal(r.finishReason, 'toolCalls');
    assert.equal(r.error, undefined);
  });

  it('Responses tool calls: function_call items with argument deltas, empty arguments', async () => {
    const r = await decode('responses', TOOL_STREAMS[1]!.stream);
    assert.equal(r.reasoning, 'Wetter für Zürich… ');
    assert.deepEqual(
      r.toolCalls.map(({ id, name, input }) => ({ id, name, input })),
      [
        { id: 'call_A1', name: 'get_weather', input: { city: 'Zürich', unit: 'celsius' } },
        { id: 'call_B2', name: 'get_time', input: {} },
      ],
    );
    assert.equal(r.finishReason, 'toolCalls');
    assert.deepEqual(r.usage, { inputTokens: 12, outputTokens: 20, totalTokens: 32, reasoningTokens: 6 });
  });

  it('Messages tool calls: signed thinking, tool_use input joined, a parameterless tool_use', async () => {
    const r = await decode('messages', TOOL_STREAMS[2]!.stream);
    assert.equal(r.reasoning, 'Ich prüfe München… ');
    assert.equal(r.reasoningSignature, 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h');
    assert.equal(r.text, 'Einen Moment.');
    assert.deepEqual(
      r.toolCalls.map(({ id, name, input }) => ({ id, name, input })),
      [
        { id: 'toolu_A', name: 'get_weather', input: { city: 'München', unit: 'celsius' } },
        { id: 'toolu_B', name: 'get_time', input: {} },
      ],
    );
    assert.equal(r.finishReason, 'toolCalls');
  });

  it('Responses tool calls without output_item.done: read from the streamed events, or from the final response', async () => {
    const ev = (type: string, rest: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...rest })}\n\n`;
    const added = ev('response.output_item.added', {
      output_index: 0,
      item: { id: 'fc_9', type: 'function_call', call_id: 'call_9', name: 'lookup', arguments: '' },
    });
    const deltas =
      ev('response.function_call_arguments.delta', { item_id: 'fc_9', delta: '{"q":"ti' }) +
      ev('response.function_call_arguments.delta', { item_id: 'fc_9', delta: 'des"}' });
    const completed = (output: object[]) => ev('response.completed', { response: { status: 'completed', output } });
    const streamedOnly = await decode('responses', added + deltas + completed([]));
    assert.deepEqual(
      streamedOnly.toolCalls.map(({ id, name, input }) => ({ id, name, input })),
      [{ id: 'call_9', name: 'lookup', input: { q: 'tides' } }],
    );
    assert.equal(streamedOnly.finishReason, 'toolCalls');
    const listedOnly = await decode(
      'responses',
      completed([{ id: 'fc_9', type: 'function_call', call_id: 'call_9', name: 'lookup', arguments: '{"q":"moon"}' }]),
    );
    assert.deepEqual(
      listedOnly.toolCalls.map(({ id, input }) => ({ id, input })),
      [{ id: 'call_9', input: { q: 'moon' } }],
    );
    const normal = await decode(
      'responses',
      added +
        deltas +
        ev('response.output_item.done', {
          output_index: 0,
          item: { id: 'fc_9', type: 'function_call', call_id: 'call_9', name: 'lookup', arguments: '{"q":"tides"}' },
        }) +
        completed([
          { id: 'fc_9', type: 'function_call', call_id: 'call_9', name: 'lookup', arguments: '{"q":"tides"}' },
        ]),
    );
    assert.equal(normal.toolCalls.length, 1, 'a call listed again in the final response is one call');
  });

  it('malformed tool arguments are a protocol error naming the tool, after the text that came', async () => {
    const cc =
      'data: {"choices":[{"index":0,"delta":{"content":"Let me check."}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\": Par"}}]}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
    const c = await decode('chatCompletions', cc);
    assert.equal(c.text, 'Let me check.');
    assert.deepEqual(c.toolCalls, []);
    assert.equal(c.error?.kind, 'protocol');
    assert.match(c.error?.message ?? '', /"get_weather".*not valid JSON/);

    const notObject =
      'event: response.output_item.done\ndata: {"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"lookup","arguments":"[1,2]"}}\n\n';
    const r = await decode('responses', notObject);
    assert.equal(r.error?.kind, 'protocol');
    assert.match(r.error?.message ?? '', /"lookup".*not a JSON object/);

    const ms =
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"search","input":{}}}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"q\\":"}}\n\n' +
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n';
    const m = await decode('messages', ms);
    assert.equal(m.error?.kind, 'protocol');
    assert.match(m.error?.message ?? '', /"search".*not valid JSON/);

    const nameless =
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_7","function":{"arguments":"{}"}}]}}]}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
    const n = await decode('chatCompletions', nameless);
    assert.equal(n.error?.kind, 'protocol');
    assert.match(n.error?.message ?? '', /call_7.*names no tool/);
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
    const completions =
      'data: {"choices":[{"index":0,"delta":{"content":"partial "}}]}\n\ndata: {"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}}\n\n';
    const c = await decode('chatCompletions', completions);
    assert.equal(c.text, 'partial ');
    assert.equal(c.error?.kind, 'rateLimited');

    const flat =
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"so far"}\n\nevent: error\ndata: {"type":"error","sequence_number":2,"code":"server_error","message":"boom","param":null}\n\n';
    const nested =
      'event: error\ndata: {"type":"error","sequence_number":1,"error":{"type":"invalid_request_error","code":"rate_limit_exceeded","message":"slow down","param":"input"}}\n\n';
    const f = await decode('responses', flat);
    assert.equal(f.text, 'so far');
    assert.equal(f.error?.kind, 'server');
    assert.match(f.error?.message ?? '', /boom/);
    const n = await decode('responses', nested);
    assert.equal(n.error?.kind, 'badRequest');
    assert.match(n.error?.message ?? '', /slow down/);

    const failed =
      'event: response.failed\ndata: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The server had an error while processing your request."},"output":[]}}\n\n';
    assert.match((await decode('responses', failed)).error?.message ?? '', /server had an error/);

    const incomplete =
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"long"}\n\nevent: response.incomplete\ndata: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}\n\n';
    const i = await decode('responses', incomplete);
    assert.equal(i.finishReason, 'length');
    assert.equal(i.text, 'long');

    const overloaded =
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const o = await decode('messages', overloaded);
    assert.equal(o.text, 'Hi');
    assert.equal(o.error?.kind, 'server');
    assert.match(o.error?.message ?? '', /Overloaded/);
  });

  it('an unreadable event is a protocol error naming the event, not a crash', async () => {
    const r = await decode(
      'chatCompletions',
      'data: {"choices":[{"index":0,"delta":{"content":"ok "}}]}\n\ndata: {not json\n\n',
    );
    assert.equal(r.text, 'ok ');
    assert.equal(r.error?.kind, 'protocol');
  });
});
