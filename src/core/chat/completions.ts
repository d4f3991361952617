import * as z from 'zod/mini';
import { errorFromStreamPayload } from '../errorBody';
import type { HttpClient } from '../http';
import { isNumber, isNumberOrNull, isRecord, isText, parseWith } from '../validate';
import type { ChatEvent, ChatMessage, ChatRequest, ChatTool, FinishReason, Usage } from './events';
import { completionsThinkingFields } from './thinking';
import { cacheMarker, PrefixLength, promptCacheKey } from './promptCache';
import { callsOf, echoedReasoning, stableTools, toolCallEvent } from './tools';
import { endedEarly, parseEventJson, runChat, type ChatStream, type StreamDecoder } from './transport';
import { words } from '../../shared/words';

const text = z.optional(z.nullable(z.string()));
const count = z.optional(z.nullable(z.number()));
const toolCallDelta = z.looseObject({
  index: z.optional(z.nullable(z.number())),
  id: z.optional(z.nullable(z.string())),
  function: z.optional(z.nullable(z.looseObject({ name: text, arguments: text }))),
});
const usage = z.optional(
  z.nullable(
    z.looseObject({
      prompt_tokens: z.optional(z.number()),
      completion_tokens: z.optional(z.number()),
      total_tokens: z.optional(z.number()),
      completion_tokens_details: z.optional(
        z.nullable(z.looseObject({ reasoning_tokens: z.optional(z.nullable(z.number())) })),
      ),
      // OpenAI, Qwen, GLM, and new-api for every upstream it relays (Claude's cache reads and writes,
      // DeepSeek's hits): the cached part of `prompt_tokens`.
      prompt_tokens_details: z.optional(
        z.nullable(z.looseObject({ cached_tokens: count, cached_creation_tokens: count })),
      ),
      // DeepSeek's own form, and Moonshot's top-level `cached_tokens`.
      prompt_cache_hit_tokens: count,
      cached_tokens: count,
    }),
  ),
);
/** OpenAI's `url_citation` annotation on a Chat Completions message (search-enabled models). */
const annotations = z.optional(
  z.nullable(
    z.array(
      z.looseObject({
        type: z.optional(z.string()),
        url_citation: z.optional(z.nullable(z.looseObject({ url: text, title: text }))),
      }),
    ),
  ),
);
/** What a choice carries: the whole message of a completion, or a stream chunk's delta of it. */
const choiceContent = z.looseObject({
  content: text,
  reasoning_content: text,
  reasoning: text,
  tool_calls: z.optional(z.nullable(z.array(toolCallDelta))),
  annotations,
});
const chunkSchema = z.looseObject({
  choices: z.optional(
    z.nullable(
      z.array(
        z.looseObject({
          delta: z.optional(z.nullable(choiceContent)),
          finish_reason: text,
        }),
      ),
    ),
  ),
  usage,
});
const completionSchema = z.looseObject({
  choices: z.array(
    z.looseObject({
      message: choiceContent,
      finish_reason: text,
    }),
  ),
  usage,
});

/** `POST /v1/chat/completions`, the chat entry every upstream provider of the gateway offers. */
export function streamCompletions(http: HttpClient, request: ChatRequest): ChatStream {
  const body = completionsBody(request);
  return runChat(http, request, { url: http.endpoints.chatCompletions, body, streamDecoder, parseJson });
}

/**
 * The request body. The parts that stay the same through a conversation come first and the
 * messages last, tools in a stable order, so that every request starts with the bytes of the one
 * before it (what an upstream's prompt cache reuses, see promptCache.ts).
 */
export function completionsBody(request: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model };
  if (request.tools?.length) {
    body.tools = stableTools(request.tools).map(wireTool);
    if (request.toolMode === 'required') body.tool_choice = 'required';
  }
  body.stream = request.stream;
  if (request.stream) body.stream_options = { include_usage: true };
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.enableSearch) body.enable_search = true;
  Object.assign(body, completionsThinkingFields(request.thinking, request.stream));
  if (request.cache?.key) body.prompt_cache_key = promptCacheKey(request, request.cache.key.conversation);
  const messages = [
    ...(request.system ? [{ role: 'system', content: request.system }] : []),
    ...request.messages.flatMap(wireMessages),
  ];
  body.messages = request.cache?.breakpoints ? withMarkers(messages, request.cache.breakpoints.minTokens) : messages;
  return body;
}

/**
 * `cache_control` markers in Chat Completions' form, on a message's text parts (Qwen's explicit
 * cache; new-api carries them when it converts the request for Claude): the system message's and
 * the last message's, once the prefix up to each has passed the family's minimum. The last
 * message's marker moves on with every request; it marks the end of what the next request will
 * find cached. Every text content goes as an array of parts, marked or not, so that a message
 * keeps its bytes when its marker moves on.
 */
function withMarkers(messages: Array<Record<string, unknown>>, minTokens: number): Array<Record<string, unknown>> {
  const length = new PrefixLength(minTokens);
  const out = messages.map((m) =>
    typeof m.content === 'string' && m.content ? { ...m, content: [{ type: 'text', text: m.content }] } : m,
  );
  const mark = (at: number) => {
    const m = out[at];
    const parts = Array.isArray(m?.content) ? [...(m.content as Array<Record<string, unknown>>)] : [];
    const last = parts.at(-1);
    if (!m || !last) return;
    parts[parts.length - 1] = { ...last, cache_control: cacheMarker() };
    out[at] = { ...m, content: parts };
  };
  if (out[0]?.role === 'system' && length.add(out[0].content)) mark(0);
  for (let i = out[0]?.role === 'system' ? 1 : 0; i < out.length && !length.reached(); i++) length.add(out[i]);
  if (length.reached() && out.length > 1) mark(out.length - 1);
  return out;
}

/** A function tool in Chat Completions' nested form: `{type: "function", function: {name, description, parameters}}`. */
function wireTool(t: ChatTool): Record<string, unknown> {
  return {
    type: 'function',
    function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.inputSchema },
  };
}

/**
 * One conversation turn as Chat Completions messages: the tool results a user turn carries become
 * `role: "tool"` messages first (each answering its `tool_call_id`), then the user's own text, if
 * any. An assistant turn that made calls carries `tool_calls` (content null when it said nothing)
 * and, for thinking models, the `reasoning_content` it produced.
 */
function wireMessages(m: ChatMessage): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = (m.toolResults ?? []).map((r) => ({
    role: 'tool',
    tool_call_id: r.callId,
    content: r.content,
  }));
  const calls = callsOf(m);
  if (calls.length) {
    const message: Record<string, unknown> = {
      role: 'assistant',
      content: m.content || null,
      tool_calls: calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.input) },
      })),
    };
    const reasoning = echoedReasoning(m);
    if (reasoning) message.reasoning_content = reasoning;
    out.push(message);
  } else if (m.content || m.images?.length || !out.length) {
    out.push(wireMessage(m));
  }
  return out;
}

/**
 * A message with images becomes an array of content parts: the text first, then one `image_url`
 * part per image whose `url` is a `data:<media type>;base64,<bytes>` URL (OpenAI's Chat Completions `image_url` content part).
 */
function wireMessage(m: ChatMessage): { role: string; content: string | Array<Record<string, unknown>> } {
  if (!m.images?.length) return { role: m.role, content: m.content };
  const parts: Array<Record<string, unknown>> = m.content ? [{ type: 'text', text: m.content }] : [];
  for (const image of m.images)
    parts.push({ type: 'image_url', image_url: { url: `data:${image.mediaType};base64,${image.base64}` } });
  return { role: m.role, content: parts };
}

function citations(list: z.infer<typeof annotations>): ChatEvent[] {
  return (list ?? []).flatMap((a): ChatEvent[] => {
    const c = a.url_citation;
    return a.type === 'url_citation' && c?.url
      ? [{ type: 'citation', url: c.url, ...(c.title ? { title: c.title } : {}) }]
      : [];
  });
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Which call a streamed fragment belongs to. Its `index` when it has one; some OpenAI-compatible
 * upstreams leave it out, and then a fragment with an id not seen yet starts a new call while one
 * without an id (or with a known one) continues the call it names or the last one.
 */
function callIndex(
  calls: Map<number, PendingCall>,
  part: z.infer<typeof toolCallDelta>,
  last: number | undefined,
): number {
  if (part.index != null) return part.index;
  if (part.id) {
    let next = 0;
    for (const [index, call] of calls) {
      if (call.id === part.id) return index;
      next = Math.max(next, index + 1);
    }
    return next;
  }
  return last ?? 0;
}

/**
 * The shapes nearly every streamed chunk has (text, reasoning and tool-call deltas, a finish reason,
 * the usage), checked by hand: the schema below costs more than the rest of the decoding together
 * over a long answer, and as much as the rest of a short tool-call answer's handling. It accepts
 * only what `chunkSchema` accepts unchanged; any other chunk (annotations, anything unexpected) is
 * left to the schema, which also words the error.
 */
export function isPlainChunk(json: Record<string, unknown>): json is Chunk {
  if (json.usage != null && !isPlainUsage(json.usage)) return false;
  const choices = json.choices;
  if (choices == null) return true;
  if (!Array.isArray(choices)) return false;
  for (const choice of choices as unknown[]) {
    if (!isRecord(choice) || !isText(choice.finish_reason)) return false;
    const delta = choice.delta;
    if (delta == null) continue;
    if (!isRecord(delta) || !isText(delta.content) || !isText(delta.reasoning_content) || !isText(delta.reasoning))
      return false;
    if (delta.annotations != null) return false;
    const calls = delta.tool_calls;
    if (calls != null && !(Array.isArray(calls) && (calls as unknown[]).every(isPlainToolCall))) return false;
  }
  return true;
}

/** What `toolCallDelta` accepts. */
function isPlainToolCall(call: unknown): boolean {
  if (!isRecord(call) || !isNumberOrNull(call.index) || !isText(call.id)) return false;
  const f = call.function;
  return f == null || (isRecord(f) && isText(f.name) && isText(f.arguments));
}

/** What `usage` accepts, null and absent aside. */
function isPlainUsage(u: unknown): boolean {
  if (!isRecord(u) || !isNumber(u.prompt_tokens) || !isNumber(u.completion_tokens) || !isNumber(u.total_tokens))
    return false;
  const details = u.completion_tokens_details;
  if (details != null && !(isRecord(details) && isNumberOrNull(details.reasoning_tokens))) return false;
  const prompt = u.prompt_tokens_details;
  if (
    prompt != null &&
    !(isRecord(prompt) && isNumberOrNull(prompt.cached_tokens) && isNumberOrNull(prompt.cached_creation_tokens))
  )
    return false;
  return isNumberOrNull(u.prompt_cache_hit_tokens) && isNumberOrNull(u.cached_tokens);
}

type Chunk = z.infer<typeof chunkSchema>;

/** A streamed chunk read by the schema alone. */
export function schemaChunk(json: Record<string, unknown>): Chunk {
  return parseWith(chunkSchema, json, words('A streamed Chat Completions chunk'));
}

/** A streamed chunk, read by the hand check when it has the common shape, else by the schema. */
export function readChunk(json: Record<string, unknown>): Chunk {
  return isPlainChunk(json) ? json : schemaChunk(json);
}

/** Reads a streamed answer; `read` is replaceable so that tests can hold the fast path to the schema. */
export function streamDecoder(read: (json: Record<string, unknown>) => Chunk = readChunk): StreamDecoder {
  const calls = new Map<number, PendingCall>();
  let lastCall: number | undefined;
  let finish: string | undefined;
  return {
    message(message, out) {
      if (message.data === '[DONE]') {
        flushCalls(calls, out);
        out.push(done(finish ?? 'stop'));
        return true;
      }
      const json = parseEventJson(message);
      if (json.error) {
        out.push({ type: 'error', error: errorFromStreamPayload(json.error) });
        return true;
      }
      const chunk = read(json);
      // new-api sends a final usage chunk with `choices: []`, even when usage was not asked for.
      if (chunk.usage) out.push({ type: 'usage', usage: usageFrom(chunk.usage) });
      const choice = chunk.choices?.[0];
      if (!choice) return false;
      const delta = choice.delta;
      const reasoning = delta?.reasoning_content ?? delta?.reasoning;
      if (reasoning) out.push({ type: 'reasoningDelta', text: reasoning });
      if (delta?.content) out.push({ type: 'textDelta', text: delta.content });
      if (delta?.annotations) out.push(...citations(delta.annotations));
      for (const part of delta?.tool_calls ?? []) {
        const index = callIndex(calls, part, lastCall);
        lastCall = index;
        let call = calls.get(index);
        if (!call) {
          call = { id: '', name: '', arguments: '' };
          calls.set(index, call);
        }
        if (part.id) call.id = part.id;
        // The name normally comes once; some upstreams repeat it in every fragment.
        const name = part.function?.name;
        if (name && name !== call.name) call.name += name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
      return false;
    },
    end(out) {
      flushCalls(calls, out);
      // Some upstreams close without `[DONE]` after a proper finish_reason; only a missing finish is a cut.
      out.push(finish ? done(finish) : { type: 'error', error: endedEarly('its finish reason and [DONE]') });
    },
  };
}

/** The calls streamed so far, in index order; a call whose arguments are unreadable throws after the ones before it. */
function flushCalls(calls: Map<number, PendingCall>, out: ChatEvent[]): void {
  const pending = [...calls.entries()].sort((a, b) => a[0] - b[0]);
  calls.clear();
  for (const [index, call] of pending) out.push(toolCallEvent(call.id || `call_${index}`, call.name, call.arguments));
}

function parseJson(json: unknown): ChatEvent[] {
  const body = parseWith(completionSchema, json, words('The Chat Completions answer'));
  const choice = body.choices[0];
  const events: ChatEvent[] = [];
  const reasoning = choice?.message.reasoning_content ?? choice?.message.reasoning;
  if (reasoning) events.push({ type: 'reasoningDelta', text: reasoning });
  if (choice?.message.content) events.push({ type: 'textDelta', text: choice.message.content });
  events.push(...citations(choice?.message.annotations));
  for (const [i, call] of (choice?.message.tool_calls ?? []).entries()) {
    events.push(toolCallEvent(call.id ?? `call_${i}`, call.function?.name ?? '', call.function?.arguments));
  }
  if (body.usage) events.push({ type: 'usage', usage: usageFrom(body.usage) });
  events.push(done(choice?.finish_reason ?? 'stop'));
  return events;
}

type WireUsage = NonNullable<z.infer<typeof usage>>;

/** The usage; `prompt_tokens` counts the cached tokens too (OpenAI's and DeepSeek's usage alike). */
function usageFrom(u: WireUsage): Usage {
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? u.cached_tokens;
  const written = u.prompt_tokens_details?.cached_creation_tokens;
  return {
    inputTokens: u.prompt_tokens,
    outputTokens: u.completion_tokens,
    totalTokens: u.total_tokens,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? undefined,
    ...(cached ? { cachedInputTokens: cached } : {}),
    ...(written ? { cacheWriteTokens: written } : {}),
  };
}

function done(raw: string): ChatEvent {
  const map: Record<string, FinishReason> = {
    stop: 'stop',
    length: 'length',
    tool_calls: 'toolCalls',
    function_call: 'toolCalls',
    content_filter: 'contentFilter',
  };
  return { type: 'done', finishReason: map[raw] ?? 'other', raw };
}
