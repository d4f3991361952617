import * as l10n from '@vscode/l10n';
import { errorFromStreamPayload } from '../errorBody';
import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import { parseJsonText } from '../validate';
import type { ChatEvent, ChatRequest } from './events';
import { SseReader, type SseMessage } from './sse';

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

/** What an answer's body turned out to be: a stream to decode, or a whole answer already read. */
type Body = { chunks: AsyncIterable<Uint8Array> } | { events: ChatEvent[] };

/**
 * Sends one chat request and yields its events. Whatever goes wrong (HTTP error, a stream cut off,
 * a timeout, a cancel) ends the sequence with an `error` event, after the text that did arrive.
 * A chat POST is billed, so it is never retried here.
 */
export function runChat(http: HttpClient, request: ChatRequest, call: ProtocolCall): AsyncGenerator<ChatEvent> {
  return decodeAnswer(() => open(http, request, call), call.streamDecoder);
}

/** The events of a streamed answer's raw bytes, read by `decoder`. */
export function decodeStream(chunks: AsyncIterable<Uint8Array>, decoder: () => StreamDecoder): AsyncGenerator<ChatEvent> {
  return decodeAnswer(() => Promise.resolve({ chunks }), decoder);
}

async function open(http: HttpClient, request: ChatRequest, call: ProtocolCall): Promise<Body> {
  const response = await http.send({
    method: 'POST',
    url: call.url,
    json: call.body,
    headers: { accept: request.stream ? 'text/event-stream' : 'application/json', ...call.headers },
    signal: request.signal,
    model: request.model,
    idempotent: false,
    ...(request.timeout ? { timeout: request.timeout } : {}),
  });
  if ((response.headers['content-type'] ?? '').includes('text/event-stream')) return { chunks: response.chunks() };
  // A server may answer a streaming request with one JSON document (or an error object in a 200).
  const json = parseJsonText(await response.text(), l10n.t('The chat answer'));
  const error = (json as { error?: unknown } | null)?.error;
  if (error && typeof error === 'object') return { events: [{ type: 'error', error: errorFromStreamPayload(error) }] };
  return { events: call.parseJson(json) };
}

/**
 * The one generator between the network and the caller: per network chunk, its SSE messages are
 * read and turned into events in one synchronous pass, then handed on. A source cited several
 * times (one annotation per place in the text, or an annotation event and the finished item
 * repeating it) is one citation, numbered where it first appeared. Whatever is thrown becomes the
 * last event, after the events that did arrive (those of the same chunk included).
 */
async function* decodeAnswer(open: () => Promise<Body>, streamDecoder: () => StreamDecoder): AsyncGenerator<ChatEvent> {
  const cited = new Set<string>();
  /** False for a citation already given. */
  const fresh = (e: ChatEvent): boolean => {
    if (e.type !== 'citation') return true;
    if (cited.has(e.url)) return false;
    cited.add(e.url);
    return true;
  };
  try {
    const body = await open();
    if ('events' in body) {
      for (const e of body.events) if (fresh(e)) yield e;
      return;
    }
    const decoder = streamDecoder();
    const sse = new SseReader();
    const out: ChatEvent[] = [];
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
    for await (const chunk of body.chunks) {
      const status = read(sse.feed(chunk), false);
      for (const e of out) if (fresh(e)) yield e;
      out.length = 0;
      if (typeof status === 'object') throw status.error;
      // Returning closes the body: nothing after the terminator is read.
      if (status) return;
    }
    const status = read(sse.end(), true);
    for (const e of out) if (fresh(e)) yield e;
    if (typeof status === 'object') throw status.error;
  } catch (err) {
    yield { type: 'error', error: isGatewayError(err) ? err : new GatewayError('protocol', err instanceof Error ? err.message : String(err), { cause: err }) };
  }
}

/** Parses one SSE data payload as JSON, or explains which event was unreadable. */
export function parseEventJson(message: SseMessage): Record<string, unknown> {
  const what = message.event ? l10n.t('A streamed event ({0})', message.event) : l10n.t('A streamed event');
  const value = parseJsonText(message.data, what);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('protocol', l10n.t('{0} was not a JSON object.', what));
  }
  return value as Record<string, unknown>;
}

export function endedEarly(what: string): GatewayError {
  return new GatewayError('protocol', l10n.t('The answer was cut off: the stream ended before {0}. The text received so far is kept.', what));
}
