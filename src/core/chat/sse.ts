import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseMessage {
  /** The `event:` line, when the server sent one (Responses and Messages streams do). */
  event?: string;
  data: string;
}

/**
 * Turns a byte stream into SSE messages. Decoding keeps multi-byte characters that are split
 * across chunks intact; comment lines (`: PING`) are dropped by the parser.
 */
export async function* readSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder('utf-8');
  const queue: SseMessage[] = [];
  const parser = createParser({
    onEvent: (m: EventSourceMessage) => queue.push(m.event ? { event: m.event, data: m.data } : { data: m.data }),
  });
  for await (const chunk of chunks) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length) yield queue.shift() as SseMessage;
  }
  // An event cut off before its blank line is dropped: the adapters then see that the stream
  // ended without its terminator and report it, keeping the text that did arrive.
  parser.feed(decoder.decode());
  while (queue.length) yield queue.shift() as SseMessage;
}
