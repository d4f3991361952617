import type { GatewayError } from '../errors';
import type { ChatProtocol } from '../models/types';
import type { ImageMediaType } from './images';

/** Why an answer ended, normalised across the three protocols; `raw` keeps the wire value. */
export type FinishReason = 'stop' | 'length' | 'toolCalls' | 'contentFilter' | 'other';

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  totalTokens?: number;
}

/**
 * The one event model all three chat protocols are turned into; the UI never knows which ran.
 * Every failure, before or during the stream, arrives as a final `error` event so that whatever
 * text came before it is kept.
 */
export type ChatEvent =
  | { type: 'textDelta'; text: string }
  | { type: 'reasoningDelta'; text: string }
  | { type: 'toolCall'; id: string; name: string; arguments: string }
  | { type: 'image'; base64: string; partial: boolean; index: number; format?: string; revisedPrompt?: string }
  | { type: 'citation'; url: string; title?: string }
  /** The model searched the web (a Responses `web_search_call`): its queries and the sources it read, when it says them. */
  | { type: 'webSearch'; queries: string[]; sources: string[] }
  | { type: 'usage'; usage: Usage }
  | { type: 'done'; finishReason: FinishReason; raw?: string }
  | { type: 'error'; error: GatewayError };

/** An image sent with a user message: the bytes as base64 and the media type read from them. */
export interface ChatImage {
  mediaType: ImageMediaType;
  base64: string;
}

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
  /** Images of a user message, after its text; each protocol sends them in its own form. */
  images?: ChatImage[];
}

export interface ChatRequest {
  model: string;
  protocol: ChatProtocol;
  messages: ChatMessage[];
  system?: string;
  stream: boolean;
  /**
   * The model only answers streamed calls (catalog `requiresStreaming`, some multimodal models):
   * the request is then sent with streaming on whatever `stream` says.
   */
  requiresStreaming?: boolean;
  /** Required by the Messages protocol; optional elsewhere. */
  maxTokens?: number;
  temperature?: number;
  /**
   * The web-search switch, in the protocol's own form: `enable_search: true` in the Chat
   * Completions body (acted on by third-provider, Bailian-type models), the built-in `web_search`
   * tool on Responses. Messages has no form for it and ignores it. The caller decides whether the
   * model can search (see capabilities.ts).
   */
  enableSearch?: boolean;
  signal?: AbortSignal;
}
