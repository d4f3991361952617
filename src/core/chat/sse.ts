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
 * A streaming `TextDecoder` keeps the bytes of a character split across chunks for the next one,
 * and drops the stream's byte order mark (only at its start), as the SSE format asks.
 */
export class SseReader {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser: EventSourceParser;
  private messages: SseMessage[] = [];

  constructor() {
    this.parser = createParser({
      // The parser's own object (its `id` unused): no second object per message.
      onEvent: (m: EventSourceMessage) => this.messages.push(m),
    });
  }

  /** The messages this chunk completes. */
  feed(chunk: Uint8Array): SseMessage[] {
    this.text(this.decoder.decode(chunk, { stream: true }));
    return this.take();
  }

  /**
   * The messages completed by the end of the stream. An event cut off before its blank line is
   * dropped: the adapters then see that the stream ended without its terminator and report it,
   * keeping the text that did arrive.
   */
  end(): SseMessage[] {
    // A character cut off by the end of the stream decodes to U+FFFD.
    this.text(this.decoder.decode());
    return this.take();
  }

  private text(text: string): void {
    if (text) this.parser.feed(text);
  }

  private take(): SseMessage[] {
    const messages = this.messages;
    if (messages.length) this.messages = [];
    return messages;
  }
}
