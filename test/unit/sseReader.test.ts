/**
 * The SSE reader decodes the chunks as they come, a character a chunk cuts off completed by the
 * next: whatever the split, it must give what one decode of the whole body gives.
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { SseReader, type SseMessage } from '../../src/core/chat/sse';

/** The reference: the chunks through one streaming decoder (which keeps split characters whole), then parsed. */
function reference(chunks: Uint8Array[]): SseMessage[] {
  const out: SseMessage[] = [];
  const parser = createParser({
    onEvent: (m: EventSourceMessage) => out.push({ ...(m.event ? { event: m.event } : {}), data: m.data }),
  });
  const decoder = new TextDecoder();
  for (const c of chunks) parser.feed(decoder.decode(c, { stream: true }));
  parser.feed(decoder.decode());
  return out;
}

function read(chunks: Uint8Array[]): SseMessage[] {
  const reader = new SseReader();
  const out = [...chunks.flatMap((c) => reader.feed(c)), ...reader.end()];
  return out.map((m) => ({ ...(m.event ? { event: m.event } : {}), data: m.data }));
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const p of points) {
    chunks.push(bytes.slice(start, p));
    start = p;
  }
  chunks.push(bytes.slice(start));
  return chunks;
}

const encode = (s: string) => new TextEncoder().encode(s);

describe('SseReader: chunks decoded one by one', () => {
  it('characters of two, three and four bytes split at every byte give the same messages', () => {
    const body = encode('event: delta\ndata: {"t":"é中😀"}\n\ndata: ü€𝄞 and \uFEFF inside\n\n');
    const expected = reference([body]);
    assert.deepEqual(
      expected.map((m) => m.data),
      ['{"t":"é中😀"}', 'ü€𝄞 and \uFEFF inside'],
    );
    for (let i = 1; i < body.length; i++) assert.deepEqual(read(splitAt(body, [i])), expected, `split at ${i}`);
    assert.deepEqual(
      read(
        splitAt(
          body,
          Array.from({ length: body.length }, (_, i) => i),
        ),
      ),
      expected,
      'one byte per chunk',
    );
  });

  it('any text, split anywhere, reads as one decode of the whole body', () => {
    const message = fc.record({
      event: fc.option(fc.stringMatching(/^[a-z_.]{1,12}$/), { nil: undefined }),
      data: fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, ' ')),
    });
    fc.assert(
      fc.property(fc.array(message, { maxLength: 6 }), fc.array(fc.nat(400), { maxLength: 12 }), (messages, cuts) => {
        const body = encode(messages.map((m) => `${m.event ? `event: ${m.event}\n` : ''}data: ${m.data}\n\n`).join(''));
        assert.deepEqual(read(splitAt(body, cuts)), reference([body]));
      }),
    );
  });

  it('drops the stream’s byte order mark only, and keeps a U+FEFF that starts a later chunk', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    const first = encode('data: a\n\n');
    const body = new Uint8Array([...bom, ...first, ...encode('data: \uFEFFb\n\n')]);
    assert.deepEqual(read(splitAt(body, [1, 2, bom.length + first.length + 6])), [{ data: 'a' }, { data: '\uFEFFb' }]);
    assert.deepEqual(
      read([encode('data: \uFEFFc\n\n')]),
      [{ data: '\uFEFFc' }],
      'a U+FEFF that is not at the start of the stream',
    );
  });

  it('any bytes, valid UTF-8 or not, split anywhere, read as through a streaming decoder', () => {
    // Mostly text around lead and continuation bytes, so that cut characters and invalid sequences meet chunk ends.
    const piece = fc.oneof(
      fc.constantFrom('data: ', 'event: e\n', '\n', '\n\n', 'é', '中', '😀', '\uFEFF').map((t) => [...encode(t)]),
      fc.array(fc.constantFrom(0x61, 0x80, 0x9f, 0xbf, 0xc0, 0xc3, 0xe0, 0xe4, 0xed, 0xf0, 0xf4, 0xf8, 0xff), {
        maxLength: 4,
      }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 20 }), fc.array(fc.nat(80), { maxLength: 10 }), (pieces, cuts) => {
        const body = new Uint8Array(pieces.flat());
        const chunks = splitAt(body, cuts);
        assert.deepEqual(read(chunks), reference(chunks));
      }),
      { numRuns: 500 },
    );
  });
});
