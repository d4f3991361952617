import * as l10n from '@vscode/l10n';
import { errorFromStreamPayload } from '../errorBody';
import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import { parseJsonText } from '../validate';
import type { ChatEvent, ChatRequest } from './events';
import { readSse, type SseMessage } from './sse';

export interface ProtocolCall {
  url: string;
  body: unknown;
  headers?: Record<string, string>;
  /** Turns the SSE messages of a streamed answer into events; returns when the stream ended. */
  parseStream: (messages: AsyncIterable<SseMessage>) => AsyncGenerator<ChatEvent>;
  /** Turns a whole JSON answer into events. */
  parseJson: (json: unknown) => ChatEvent[];
}

/**
 * Sends one chat request and yields its events. Whatever goes wrong (HTTP error, a stream cut off,
 * a timeout, a cancel) ends the sequence with an `error` event, after the text that did arrive.
 * A chat POST is billed, so it is never retried here.
 */
export function runChat(http: HttpClient, request: ChatRequest, call: ProtocolCall): AsyncGenerator<ChatEvent> {
  return endWithError(uniqueCitations(send(http, request, call)));
}

async function* send(http: HttpClient, request: ChatRequest, call: ProtocolCall): AsyncGenerator<ChatEvent> {
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
  if ((response.headers['content-type'] ?? '').includes('text/event-stream')) {
    yield* call.parseStream(readSse(response.chunks()));
    return;
  }
  // A server may answer a streaming request with one JSON document (or an error object in a 200).
  const json = parseJsonText(await response.text(), l10n.t('The chat answer'));
  const error = (json as { error?: unknown } | null)?.error;
  if (error && typeof error === 'object') {
    yield { type: 'error', error: errorFromStreamPayload(error) };
    return;
  }
  yield* call.parseJson(json);
}

/**
 * A source cited several times (one annotation per place in the text, or an annotation event and
 * the finished item repeating it) is one citation, numbered where it first appeared.
 */
export async function* uniqueCitations(events: AsyncIterable<ChatEvent>): AsyncGenerator<ChatEvent> {
  const seen = new Set<string>();
  for await (const e of events) {
    if (e.type === 'citation') {
      if (seen.has(e.url)) continue;
      seen.add(e.url);
    }
    yield e;
  }
}

/** Whatever is thrown becomes the last event, after the events that did arrive. */
export async function* endWithError(events: AsyncIterable<ChatEvent>): AsyncGenerator<ChatEvent> {
  try {
    yield* events;
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
