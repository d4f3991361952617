import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

export interface SseMessage {
  /** The `event:` line, when the server sent one (Responses and Messages streams do). */
  event?: string;
  data: string;
}

/**
 * Turns the chunks of a byte stream into SSE messages, all the messages a chunk completes at once
 * (no generator per message: a 10 MB answer is tens of thousands of them). Comment lines
 * (`: PING`) are dropped by the parser.
 *
 * Each chunk is decoded whole, up to its last complete character; the bytes of a character split
 * across chunks wait for the next one. A streaming `TextDecoder` (`{stream: true}`) would do the
 * same but, in Node, takes about five times as long as a one-shot decode of the same bytes.
 */
export class SseReader {
  /** `ignoreBOM`: a chunk that happens to start with U+FEFF keeps it; only the stream's own BOM is dropped (below). */
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly parser: EventSourceParser;
  private messages: SseMessage[] = [];
  /** The start of a character the last chunk cut off. */
  private carry: Uint8Array | undefined;
  private first = true;

  constructor() {
    this.parser = createParser({
      // The parser's own object (its `id` unused): no second object per message.
      onEvent: (m: EventSourceMessage) => this.messages.push(m),
    });
  }

  /** The messages this chunk completes. */
  feed(chunk: Uint8Array): SseMessage[] {
    let bytes = chunk;
    if (this.carry) {
      bytes = new Uint8Array(this.carry.length + chunk.length);
      bytes.set(this.carry);
      bytes.set(chunk, this.carry.length);
      this.carry = undefined;
    }
    const whole = completeLength(bytes);
    // A copy: the caller may reuse the chunk's memory.
    if (whole < bytes.length) this.carry = bytes.slice(whole);
    this.text(this.decoder.decode(whole < bytes.length ? bytes.subarray(0, whole) : bytes));
    return this.take();
  }

  /**
   * The messages completed by the end of the stream. An event cut off before its blank line is
   * dropped: the adapters then see that the stream ended without its terminator and report it,
   * keeping the text that did arrive.
   */
  end(): SseMessage[] {
    // A character cut off by the end of the stream decodes to U+FFFD, as a streaming decoder's flush does.
    if (this.carry) this.text(this.decoder.decode(this.carry));
    this.carry = undefined;
    return this.take();
  }

  private text(text: string): void {
    if (this.first && text) {
      this.first = false;
      // The stream's byte order mark, which a streaming TextDecoder drops.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text) this.parser.feed(text);
  }

  private take(): SseMessage[] {
    const messages = this.messages;
    if (messages.length) this.messages = [];
    return messages;
  }
}

/**
 * How many of `bytes` end on a UTF-8 character boundary: all of them unless the last character's
 * lead byte (at most three bytes back) announces more bytes than follow it.
 */
export function completeLength(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = n - 1; i >= 0 && i >= n - 3; i--) {
    const byte = bytes[i] as number;
    if (byte < 0x80) return n;
    if (byte >= 0xc0) {
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return n - i >= length ? n : i;
    }
  }
  return n;
}
