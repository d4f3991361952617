import { errorFromStreamPayload } from '../errorBody';
import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import { parseJsonText } from '../validate';
import type { ChatEvent, ChatRequest } from './events';
import { SseReader, type SseMessage } from './sse';
import { words, type Said, type Words } from '../../shared/words';

/**
 * Reads the SSE messages of one streamed answer, in order. Synchronous on purpose: all the
 * messages a network chunk completes are read in one pass, with no generator per message.
 */
export interface StreamDecoder {
  /** Pushes the events of one message onto `out`; true when the message ended the answer. */
  message(message: SseMessage, out: ChatEvent[]): boolean;
  /** Pushes what a stream that stopped without its terminator adds up to (usually an error). */
  end(out: ChatEvent[]): void;
}

export interface ProtocolCall {
  url: string;
  body: unknown;
  headers?: Record<string, string>;
  /** A reader for the SSE messages of a streamed answer. */
  streamDecoder: () => StreamDecoder;
  /** Turns a whole JSON answer into events. */
  parseJson: (json: unknown) => ChatEvent[];
}

/**
 * What an answer's body turned out to be: a stream to decode (`complete` tells the response that
 * its terminator arrived), or a whole answer already read.
 */
type Body = { chunks: AsyncIterable<Uint8Array>; complete?: () => void } | { events: ChatEvent[] };

/**
 * A streamed answer. Iterated, it gives its events one by one; `batches()` gives them instead as
 * they were decoded, one array per network chunk (never empty). A long answer is tens of thousands
 * of events, and each step of an async generator costs about a microsecond, as much as parsing the
 * event: the extension's own readers (the chat view, VS Code's chat) take the batches. A stream is
 * read one way or the other, not both.
 */
export type ChatStream = AsyncGenerator<ChatEvent> & { batches(): AsyncGenerator<ChatEvent[]> };

/**
 * Sends one chat request and yields its events. Whatever goes wrong (HTTP error, a stream cut off,
 * a timeout, a cancel) ends the sequence with an `error` event, after the text that did arrive.
 * A chat POST is billed, so it is never retried here.
 */
export function runChat(http: HttpClient, request: ChatRequest, call: ProtocolCall): ChatStream {
  return chatStream(() => decodeAnswer(() => open(http, request, call), call.streamDecoder));
}

/** The events of a streamed answer's raw bytes, read by `decoder`. */
export function decodeStream(chunks: AsyncIterable<Uint8Array>, decoder: () => StreamDecoder): ChatStream {
  return chatStream(() => decodeAnswer(() => Promise.resolve({ chunks }), decoder));
}

/** The events of batches, one by one. */
export async function* eachEvent(batches: AsyncIterable<ChatEvent[]>): AsyncGenerator<ChatEvent> {
  for await (const batch of batches) for (const e of batch) yield e;
}

/** Nothing starts until one of the two ways is read (both are lazy generators). */
function chatStream(batches: () => AsyncGenerator<ChatEvent[]>): ChatStream {
  let source: AsyncGenerator<ChatEvent[]> | undefined;
  const take = () => (source ??= batches());
  const events = eachEvent({ [Symbol.asyncIterator]: take });
  return Object.assign(events, { batches: take });
}

async function open(http: HttpClient, request: ChatRequest, call: ProtocolCall): Promise<Body> {
  const response = await http.send({
    method: 'POST',
    url: call.url,
    json: call.body,
    headers: { accept: request.stream ? 'text/event-stream' : 'application/json', ...call.headers },
    signal: request.signal,
    ...(request.onQueued ? { onQueued: request.onQueued } : {}),
    model: request.model,
    ...(request.key !== undefined ? { key: request.key } : {}),
    idempotent: false,
    ...(request.timeout ? { timeout: request.timeout } : {}),
    ...(request.background ? { background: request.background } : {}),
  });
  if ((response.headers['content-type'] ?? '').includes('text/event-stream'))
    return { chunks: response.chunks(), complete: () => response.complete() };
  // A server may answer a streaming request with one JSON document (or an error object in a 200).
  const json = parseJsonText(await response.text(), words('The chat answer'));
  const error = (json as { error?: unknown } | null)?.error;
  if (error && typeof error === 'object') return { events: [{ type: 'error', error: errorFromStreamPayload(error) }] };
  return { events: call.parseJson(json) };
}

/**
 * The one generator between the network and the caller: per network chunk, its SSE messages are
 * read and turned into events in one synchronous pass, then handed on as one batch. A source cited
 * several times (one annotation per place in the text, or an annotation event and the finished
 * item repeating it) is one citation, numbered where it first appeared. Whatever is thrown becomes
 * the last event, after the events that did arrive (those of the same chunk included).
 */
async function* decodeAnswer(
  open: () => Promise<Body>,
  streamDecoder: () => StreamDecoder,
): AsyncGenerator<ChatEvent[]> {
  const cited = new Set<string>();
  /** The batch without citations already given. */
  const fresh = (events: ChatEvent[]): ChatEvent[] => {
    if (!events.some((e) => e.type === 'citation')) return events;
    return events.filter((e) => {
      if (e.type !== 'citation') return true;
      if (cited.has(e.url)) return false;
      cited.add(e.url);
      return true;
    });
  };
  let out: ChatEvent[] = [];
  try {
    const body = await open();
    if ('events' in body) {
      const events = fresh(body.events);
      if (events.length) yield events;
      return;
    }
    const decoder = streamDecoder();
    const sse = new SseReader();
    /**
     * Pushes the events of `messages` onto `out`; true when the answer ended, or what failed (it
     * comes after the events the messages before it gave).
     */
    const read = (messages: SseMessage[], atEnd: boolean): boolean | { error: unknown } => {
      try {
        for (const m of messages) if (decoder.message(m, out)) return true;
        if (atEnd) decoder.end(out);
        return atEnd;
      } catch (error) {
        return { error };
      }
    };
    const handOver = (): ChatEvent[] => {
      const events = fresh(out);
      out = [];
      return events;
    };
    for await (const chunk of body.chunks) {
      const status = read(sse.feed(chunk), false);
      if (typeof status === 'object') throw status.error;
      if (out.length) yield handOver();
      // Returning closes the body: nothing after the terminator is decoded. The response is told
      // first, so that it lets the body's end arrive rather than aborting it.
      if (status) {
        body.complete?.();
        return;
      }
    }
    const status = read(sse.end(), true);
    if (typeof status === 'object') throw status.error;
    if (out.length) yield handOver();
  } catch (err) {
    // The events decoded before the failure, then the failure.
    const events = fresh(out);
    events.push({
      type: 'error',
      error: isGatewayError(err)
        ? err
        : new GatewayError('protocol', err instanceof Error ? err.message : String(err), { cause: err }),
    });
    yield events;
  }
}

/**
 * Parses one SSE data payload as JSON, or explains which event was unreadable. The explanation is
 * worded only when it is needed: formatting it for each of tens of thousands of events cost a
 * tenth of the decoding.
 */
export function parseEventJson(message: SseMessage): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    // Parses again to word the error (it throws).
    value = parseJsonText(message.data, eventLabel(message));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('protocol', words('{0} was not a JSON object.', eventLabel(message)));
  }
  return value as Record<string, unknown>;
}

function eventLabel(message: SseMessage): Words {
  return message.event ? words('A streamed event ({0})', message.event) : words('A streamed event');
}

export function endedEarly(what: Said): GatewayError {
  return new GatewayError(
    'protocol',
    words('The answer was cut off: the stream ended before {0}. The text received so far is kept.', what),
  );
}
