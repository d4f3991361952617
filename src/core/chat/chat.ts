import type { GatewayError } from '../errors';
import type { HttpClient } from '../http';
import type { ChatProtocol } from '../models/types';
import { completionsBody, streamCompletions, streamDecoder as completionsDecoder } from './completions';
import type { ChatEvent, ChatRequest, FinishReason, Usage } from './events';
import { messagesBody, streamDecoder as messagesDecoder, streamMessages } from './messages';
import { streamDecoder as responsesDecoder, streamResponses } from './responses';
import { responsesBody, type ResponsesExtras } from './responsesRequest';
import { thinkingNeedsStream } from './thinking';
import { decodeStream, type ChatStream } from './transport';

/**
 * Sends a chat request over the protocol it names; the events are the same for all three. A model
 * that requires streaming, and a Bailian model asked to think (which it does only when streamed),
 * is always called with streaming on, whatever `stream` says.
 */
export function streamChat(http: HttpClient, given: ChatRequest, extras?: ResponsesExtras): ChatStream {
  const mustStream = given.requiresStreaming || thinkingNeedsStream(given.thinking);
  const request = mustStream && !given.stream ? { ...given, stream: true } : given;
  switch (request.protocol) {
    case 'responses':
      return streamResponses(http, request, extras);
    case 'messages':
      return streamMessages(http, request);
    case 'chatCompletions':
      return streamCompletions(http, request);
  }
}

/** The body `streamChat` sends for `request` over its protocol (the tests and the benchmark read it). */
export function requestBody(request: ChatRequest, extras?: ResponsesExtras): Record<string, unknown> {
  switch (request.protocol) {
    case 'responses':
      return responsesBody(request, extras);
    case 'messages':
      return messagesBody(request);
    case 'chatCompletions':
      return completionsBody(request);
  }
}

/** The events of a streamed answer's raw bytes, as the adapter for `protocol` reads them. */
export function eventsFromBytes(protocol: ChatProtocol, chunks: AsyncIterable<Uint8Array>): ChatStream {
  return decodeStream(
    chunks,
    { responses: responsesDecoder, messages: messagesDecoder, chatCompletions: completionsDecoder }[protocol],
  );
}

/** What a finished answer adds up to; used by commands that return the whole result. */
export interface ChatResult {
  text: string;
  reasoning: string;
  usage?: Usage;
  finishReason?: FinishReason;
  toolCalls: Array<{ id: string; name: string; input: Record<string, unknown>; arguments: string }>;
  /** The signature of the answer's thinking (Messages), to send back with its reasoning. */
  reasoningSignature?: string;
  citations: Array<{ url: string; title?: string }>;
  /** What the model searched the web for, and the sources its searches read (Responses `web_search_call`). */
  searches: Array<{ queries: string[]; sources: string[] }>;
  images: Array<{ base64: string; format?: string }>;
  error?: GatewayError;
}

export async function collectChat(events: AsyncIterable<ChatEvent>): Promise<ChatResult> {
  const result: ChatResult = { text: '', reasoning: '', toolCalls: [], citations: [], searches: [], images: [] };
  for await (const e of events) {
    switch (e.type) {
      case 'textDelta':
        result.text += e.text;
        break;
      case 'reasoningDelta':
        result.reasoning += e.text;
        break;
      case 'toolCall':
        result.toolCalls.push({ id: e.id, name: e.name, input: e.input, arguments: e.arguments });
        break;
      case 'reasoningSignature':
        result.reasoningSignature = e.signature;
        break;
      case 'citation':
        result.citations.push({ url: e.url, ...(e.title ? { title: e.title } : {}) });
        break;
      case 'webSearch':
        result.searches.push({ queries: e.queries, sources: e.sources });
        break;
      case 'image':
        if (!e.partial) result.images.push({ base64: e.base64, ...(e.format ? { format: e.format } : {}) });
        break;
      case 'usage':
        result.usage = e.usage;
        break;
      case 'done':
        result.finishReason = e.finishReason;
        break;
      case 'error':
        result.error = e.error;
        break;
    }
  }
  return result;
}
