import type { GatewayError } from '../errors';
import type { ChatProtocol } from '../models/types';
import type { ImageMediaType } from '../imageBytes';
import type { PromptCacheRequest } from './promptCache';
import type { ThinkingRequest } from './thinking';

/** Why an answer ended, normalised across the three protocols; `raw` keeps the wire value. */
export type FinishReason = 'stop' | 'length' | 'toolCalls' | 'contentFilter' | 'other';

export interface Usage {
  /** Every input token, those read from the cache included (Anthropic's own count leaves them out; it is added up). */
  inputTokens?: number;
  /** Input tokens read from the upstream's prompt cache (billed at the cache price). */
  cachedInputTokens?: number;
  /** Input tokens written to the cache (Anthropic, and Claude through new-api's conversion; billed above the input price). */
  cacheWriteTokens?: number;
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
  /**
   * One finished function call. `input` is the parsed argument object (`{}` when the model sent no
   * arguments); `arguments` keeps the JSON text as it came, for callers that show or store it.
   */
  | { type: 'toolCall'; id: string; name: string; input: Record<string, unknown>; arguments: string }
  /**
   * The signature of a Messages thinking block (`signature_delta`, or the block's `signature` in a
   * whole answer). Anthropic accepts a thinking block sent back only with its signature, and a
   * tool-use turn must send its thinking back, so a caller keeps it with the turn's reasoning.
   */
  | { type: 'reasoningSignature'; signature: string }
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

/** A function the model may call: its JSON Schema goes out as `parameters` / `input_schema`. */
export interface ChatTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A call an assistant turn made, sent back with that turn. */
export interface ChatToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The result of one call, sent in the next user turn. */
export interface ChatToolResult {
  /** The `id` of the call it answers. */
  callId: string;
  content: string;
  /** The tool failed; only Messages has a field for it (`is_error`), elsewhere the text says so. */
  isError?: boolean;
}

/** The reasoning an assistant turn produced, kept to be sent back with that turn. */
export interface ChatReasoning {
  text: string;
  /** The Messages thinking block's signature; without it the block cannot be sent back. */
  signature?: string;
}

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
  /** Images of a user message, after its text; each protocol sends them in its own form. */
  images?: ChatImage[];
  /** The calls an assistant turn made. */
  toolCalls?: ChatToolCall[];
  /**
   * What an assistant turn reasoned. Sent back only with turns that made tool calls: that is where
   * Kimi-type and DeepSeek-type thinking models require it (they answer 400 without it), and where
   * Messages requires the signed thinking block.
   */
  reasoning?: ChatReasoning;
  /** Results of the previous assistant turn's calls, carried by the user turn that follows it (before its text). */
  toolResults?: ChatToolResult[];
}

/** `auto`: the model decides; `required`: it must call one of the offered tools. */
export type ToolMode = 'auto' | 'required';

export interface ChatRequest {
  model: string;
  /** The id of the key to send it with (the key a conversation remembers); the model's own key when absent. */
  key?: string;
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
  /** The model's own output limit, when known: a Messages thinking budget is added to `maxTokens` up to it. */
  modelMaxOutput?: number;
  temperature?: number;
  /**
   * The web-search switch, in the protocol's own form: `enable_search: true` in the Chat
   * Completions body (acted on by third-provider, Bailian-type models), the built-in `web_search`
   * tool on Responses. Messages has no form for it and ignores it. The caller decides whether the
   * model can search (see capabilities.ts).
   */
  enableSearch?: boolean;
  /**
   * Thinking on, off or at a depth, in the upstream's own form (see thinking.ts); absent leaves the
   * model's default. A protocol ignores a request meant for another protocol's wire form.
   */
  thinking?: ThinkingRequest;
  /** Functions the model may call. */
  tools?: ChatTool[];
  /** Whether it must call one; `auto` when absent. Only sent with `tools`. */
  toolMode?: ToolMode;
  /**
   * Prompt caching asked for in the model's family's form (promptCache.ts); absent, nothing is
   * asked and the stable prefix alone serves the upstreams that cache by themselves.
   */
  cache?: PromptCacheRequest;
  signal?: AbortSignal;
  /** The lowest place in the key's queue (an inline completion; see HttpRequest.background). */
  background?: { giveUp: () => void };
  /** Told when the request waits in its key's queue for a free slot (see keyQueue.ts). */
  onQueued?: () => void;
  /** `long` for calls that legitimately take minutes (an image made through the Responses protocol). */
  timeout?: 'standard' | 'long';
}
