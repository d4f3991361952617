import type { GatewayError } from '../errors';
import type { ChatProtocol } from '../models/types';

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
  | { type: 'usage'; usage: Usage }
  | { type: 'done'; finishReason: FinishReason; raw?: string }
  | { type: 'error'; error: GatewayError };

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  model: string;
  protocol: ChatProtocol;
  messages: ChatMessage[];
  system?: string;
  stream: boolean;
  /** Required by the Messages protocol; optional elsewhere. */
  maxTokens?: number;
  temperature?: number;
  /** Third-provider (Bailian-type) web search switch, sent as `enable_search` on Chat Completions. */
  enableSearch?: boolean;
  signal?: AbortSignal;
}
