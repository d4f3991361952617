/**
 * The streamed-event fast paths: each adapter checks the common event shapes by hand and leaves
 * every other event to its zod schema. These properties hold the hand checks to the schemas:
 * whatever a hand check accepts, the schema accepts unchanged; reading an event with the fast path
 * gives what the schema alone gives, the same data or the same `protocol` error; and whole
 * streams of generated events decode to the same events either way.
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import * as completions from '../../src/core/chat/completions';
import type { ChatEvent } from '../../src/core/chat/events';
import * as messages from '../../src/core/chat/messages';
import * as responses from '../../src/core/chat/responses';
import { decodeStream, type StreamDecoder } from '../../src/core/chat/transport';
import { isGatewayError } from '../../src/core/errors';
import { RECORDED } from './fixtures/recordedStreams';
import { TOOL_STREAMS } from './fixtures/toolStreams';

type Json = Record<string, unknown>;

/** A value of the wrong JSON type for any field. */
const wrong = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.string().map((s) => [s]),
  fc.string().map((s) => ({ s })),
);
/** Mostly the right value, sometimes null, sometimes the wrong type (absent comes from `record`). */
const field = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 6, arbitrary: valid },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: wrong },
  );
const text = field(fc.string({ maxLength: 12 }));
const count = field(fc.nat(1000));
/** Any keys optional; through JSON, as a stream delivers it (no `undefined`, no -0). */
const record = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T): fc.Arbitrary<Json> =>
  fc.record(model, { requiredKeys: [] }).map((r) => JSON.parse(JSON.stringify(r)) as Json);

const completionsChunk = (() => {
  const toolCall = record({
    index: count,
    id: text,
    type: fc.constant('function'),
    function: field(record({ name: text, arguments: text })),
  });
  const annotation = record({
    type: field(fc.constantFrom('url_citation', 'file_citation')),
    url_citation: field(record({ url: text, title: text })),
  });
  const delta = record({
    role: fc.constant('assistant'),
    content: text,
    reasoning_content: text,
    reasoning: text,
    tool_calls: field(fc.array(toolCall, { maxLength: 2 })),
    annotations: field(fc.array(annotation, { maxLength: 2 })),
  });
  const choice = record({
    index: fc.nat(2),
    delta: field(delta),
    finish_reason: field(fc.constantFrom('stop', 'length', 'tool_calls', 'content_filter', 'other')),
    logprobs: fc.constant(null),
  });
  const usage = record({
    prompt_tokens: count,
    completion_tokens: count,
    total_tokens: count,
    completion_tokens_details: field(record({ reasoning_tokens: count })),
  });
  // The common chunks (text and reasoning deltas, a finish) as often as any other shape.
  const commonDelta = record({
    role: fc.constant('assistant'),
    content: text,
    reasoning_content: text,
    reasoning: text,
  });
  const commonChoice = record({
    index: fc.nat(2),
    delta: field(commonDelta),
    finish_reason: field(fc.constantFrom('stop', 'length')),
    logprobs: fc.constant(null),
  });
  const common = record({
    id: fc.string({ maxLength: 8 }),
    object: fc.constant('chat.completion.chunk'),
    choices: fc.array(commonChoice, { minLength: 1, maxLength: 2 }),
  });
  const any = record({
    id: fc.string({ maxLength: 8 }),
    object: fc.constant('chat.completion.chunk'),
    choices: field(fc.array(choice, { maxLength: 2 })),
    usage: field(usage),
  });
  return fc.oneof(common, any);
})();

const MESSAGES_TYPES = [
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'other',
] as const;
const messagesEvent = (() => {
  const citation = record({
    type: field(fc.constantFrom('web_search_result_location', 'char_location')),
    url: text,
    title: text,
  });
  const delta = record({
    type: field(
      fc.constantFrom('text_delta', 'thinking_delta', 'signature_delta', 'input_json_delta', 'citations_delta'),
    ),
    text,
    thinking: text,
    signature: text,
    partial_json: text,
    stop_reason: field(fc.constantFrom('end_turn', 'max_tokens', 'tool_use', 'refusal')),
    stop_sequence: fc.constant(null),
    citation: field(citation),
  });
  const block = record({
    type: field(fc.constantFrom('text', 'thinking', 'tool_use', 'server_tool_use')),
    text,
    thinking: text,
    signature: text,
    id: text,
    name: text,
    input: field(fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 })),
    citations: field(fc.array(citation, { maxLength: 2 })),
  });
  const usage = record({ input_tokens: count, output_tokens: count });
  // The common events (deltas and stops) as often as any other shape.
  const common = record({
    type: field(fc.constantFrom('content_block_delta', 'content_block_stop', 'message_stop')),
    index: count,
    delta: field(delta),
  });
  const any = record({
    type: field(fc.constantFrom(...MESSAGES_TYPES)),
    index: count,
    content_block: field(block),
    delta: field(delta),
    message: field(record({ id: fc.constant('msg_1'), usage: field(usage) })),
    usage: field(usage),
  });
  return fc.oneof(common, any);
})();

const RESPONSES_TYPES = [
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
  'response.output_text.annotation.added',
  'response.image_generation_call.partial_image',
  'response.output_item.added',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.output_item.done',
  'response.content_part.added',
  'response.completed',
  'response.incomplete',
  'response.failed',
] as const;
const responsesEvent = (() => {
  const annotation = record({ type: field(fc.constantFrom('url_citation', 'file_citation')), url: text, title: text });
  const item = record({
    type: field(fc.constantFrom('function_call', 'message', 'web_search_call', 'image_generation_call', 'reasoning')),
    id: text,
    call_id: text,
    name: text,
    arguments: field(fc.constantFrom('', '{}', '{"a":1}', '[1]', 'not json')),
    result: text,
    output_format: text,
    action: field(
      record({
        type: text,
        query: text,
        queries: field(fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 })),
        sources: field(fc.array(record({ type: text, url: text }), { maxLength: 2 })),
      }),
    ),
    content: field(
      fc.array(
        record({
          type: field(fc.constant('output_text')),
          text,
          annotations: field(fc.array(annotation, { maxLength: 2 })),
        }),
        { maxLength: 2 },
      ),
    ),
    summary: field(fc.array(record({ text }), { maxLength: 2 })),
  });
  const usage = record({
    input_tokens: count,
    output_tokens: count,
    total_tokens: count,
    output_tokens_details: field(record({ reasoning_tokens: count })),
  });
  const response = record({
    status: field(fc.constantFrom('completed', 'incomplete', 'failed', 'in_progress')),
    output: field(fc.array(item, { maxLength: 2 })),
    usage: field(usage),
    error: field(record({ code: text, message: text })),
    incomplete_details: field(record({ reason: field(fc.constantFrom('max_output_tokens', 'content_filter')) })),
  });
  // The common events (deltas) as often as any other shape.
  const common = record({
    type: field(
      fc.constantFrom(
        ...RESPONSES_TYPES.filter((t) => t.endsWith('.delta') || t.endsWith('.done') || t.endsWith('.partial_image')),
      ),
    ),
    sequence_number: fc.nat(100),
    item_id: text,
    output_index: fc.nat(3),
    content_index: fc.nat(3),
    delta: fc.oneof(text, wrong),
    arguments: text,
    logprobs: fc.constant([]),
    partial_image_b64: text,
    partial_image_index: count,
    output_format: text,
  });
  const any = record({
    type: field(fc.constantFrom(...RESPONSES_TYPES)),
    sequence_number: fc.nat(100),
    item_id: text,
    delta: fc.oneof(text, wrong),
    arguments: text,
    item: field(item),
    response: field(response),
    annotation: field(annotation),
    partial_image_b64: text,
    partial_image_index: count,
    output_format: text,
  });
  return fc.oneof(common, any);
})();

type Outcome = { data: unknown } | { error: string };

/** What reading gave: the data, or the error's kind and message (anything else thrown is a failure of the test). */
function outcome(read: () => unknown): Outcome {
  try {
    return { data: read() };
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    return { error: `${err.kind}: ${err.message}` };
  }
}

interface Adapter {
  protocol: 'chatCompletions' | 'messages' | 'responses';
  arbitrary: fc.Arbitrary<Json>;
  isPlain: (json: Json) => boolean;
  read: (json: Json) => unknown;
  schema: (json: Json) => unknown;
  decoder: (schemaOnly: boolean) => StreamDecoder;
  /** One event as SSE text. */
  frame: (json: Json) => string;
}

const eventName = (json: Json) => (typeof json.type === 'string' ? `event: ${json.type}\n` : '');
const ADAPTERS: Adapter[] = [
  {
    protocol: 'chatCompletions',
    arbitrary: completionsChunk,
    isPlain: completions.isPlainChunk,
    read: completions.readChunk,
    schema: completions.schemaChunk,
    decoder: (schemaOnly) => completions.streamDecoder(schemaOnly ? completions.schemaChunk : undefined),
    frame: (json) => `data: ${JSON.stringify(json)}\n\n`,
  },
  {
    protocol: 'messages',
    arbitrary: messagesEvent,
    isPlain: messages.isPlainEvent,
    read: (json) => messages.readEvent(json, String(json.type)),
    schema: (json) => messages.schemaEvent(json, String(json.type)),
    decoder: (schemaOnly) => messages.streamDecoder(schemaOnly ? messages.schemaEvent : undefined),
    frame: (json) => `${eventName(json)}data: ${JSON.stringify(json)}\n\n`,
  },
  {
    protocol: 'responses',
    arbitrary: responsesEvent,
    isPlain: responses.isPlainEvent,
    read: responses.readEvent,
    schema: responses.schemaEvent,
    decoder: (schemaOnly) => responses.streamDecoder(schemaOnly ? responses.schemaEvent : undefined),
    frame: (json) => `${eventName(json)}data: ${JSON.stringify(json)}\n\n`,
  },
];

async function decoded(text: string, decoder: () => StreamDecoder): Promise<unknown[]> {
  async function* body(): AsyncGenerator<Uint8Array> {
    yield new TextEncoder().encode(text);
  }
  const out: unknown[] = [];
  for await (const e of decodeStream(body(), decoder))
    out.push(e.type === 'error' ? { type: 'error', kind: e.error.kind, message: e.error.message } : e);
  return out;
}

describe('streamed-event fast paths agree with the schemas', () => {
  for (const a of ADAPTERS) {
    describe(a.protocol, () => {
      it('accepts only what the schema accepts, unchanged', () => {
        let plain = 0;
        let runs = 0;
        fc.assert(
          fc.property(a.arbitrary, (json) => {
            runs++;
            if (!a.isPlain(json)) return;
            plain++;
            assert.deepEqual(
              outcome(() => a.schema(json)),
              { data: json },
            );
          }),
          { numRuns: 2000 },
        );
        // The generated events must reach the fast path often enough for the property to say something.
        assert.ok(plain > runs / 20, `only ${plain} of ${runs} generated events took the fast path`);
      });

      it('reads every event as the schema alone does: the same data, or the same protocol error', () => {
        let failed = 0;
        fc.assert(
          fc.property(a.arbitrary, (json) => {
            const expected = outcome(() => a.schema(json));
            if ('error' in expected) failed++;
            assert.deepEqual(
              outcome(() => a.read(json)),
              expected,
            );
          }),
          { numRuns: 2000 },
        );
        assert.ok(failed > 0, 'no generated event was malformed');
      });

      it('decodes whole streams of generated events to the same events as the schema alone', async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(a.arbitrary, { maxLength: 12 }), fc.boolean(), async (events, doneMarker) => {
            const text = events.map(a.frame).join('') + (doneMarker ? 'data: [DONE]\n\n' : '');
            assert.deepEqual(await decoded(text, () => a.decoder(false)), await decoded(text, () => a.decoder(true)));
          }),
          { numRuns: 500 },
        );
      });
    });
  }

  it('takes the fast path for every delta of the recorded streams', () => {
    const deltas =
      /^(response\.(output_text|refusal|reasoning_summary_text|reasoning_text|function_call_arguments)\.delta|content_block_delta|content_block_stop|message_stop)$/;
    let checked = 0;
    for (const { protocol, stream } of [...RECORDED, ...TOOL_STREAMS]) {
      const adapter = ADAPTERS.find((a) => a.protocol === protocol) as Adapter;
      for (const line of stream.split('\n')) {
        if (!line.startsWith('data: {')) continue;
        const json = JSON.parse(line.slice(6)) as Json;
        const choices = json.choices as Array<{ delta?: Json }> | undefined;
        const common =
          protocol === 'chatCompletions'
            ? !choices?.some((c) => c.delta?.annotations)
            : deltas.test(String(json.type)) && !(json.delta as Json | undefined)?.citation;
        if (!common) continue;
        checked++;
        assert.ok(adapter.isPlain(json), `${protocol}: ${line} was left to the schema`);
      }
    }
    assert.ok(checked >= 15, `${checked} events checked`);
  });

  it('still rejects a malformed delta with a clear protocol error after the text before it', async () => {
    const cases: Array<[Adapter['protocol'], string]> = [
      [
        'chatCompletions',
        'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\ndata: {"choices":[{"delta":{"content":5}}]}\n\n',
      ],
      [
        'messages',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":"0","delta":{"type":"text_delta","text":"x"}}\n\n',
      ],
      [
        'responses',
        'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\nevent: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":7,"delta":"x"}\n\n',
      ],
    ];
    for (const [protocol, text] of cases) {
      const adapter = ADAPTERS.find((a) => a.protocol === protocol) as Adapter;
      const events = (await decoded(text, () => adapter.decoder(false))) as ChatEvent[];
      assert.deepEqual(events[0], { type: 'textDelta', text: 'Hi' }, protocol);
      const last = events[1] as unknown as { type: string; kind: string; message: string };
      assert.equal(last.type, 'error', protocol);
      assert.equal(last.kind, 'protocol', protocol);
      assert.match(last.message, /did not have the expected shape/, protocol);
      assert.equal(events.length, 2, protocol);
    }
  });
});
