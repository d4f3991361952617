import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { errorFromStreamPayload } from '../errorBody';
import type { HttpClient } from '../http';
import { isRecord, isText, parseWith } from '../validate';
import type { ChatEvent, ChatMessage, ChatRequest, ChatTool, FinishReason, Usage } from './events';
import { messagesThinking } from './thinking';
import { cacheMarker, PrefixLength } from './promptCache';
import { callsOf, echoedReasoning, parsedToolCallEvent, stableTools, toolCallEvent } from './tools';
import { endedEarly, parseEventJson, runChat, type ChatStream, type StreamDecoder } from './transport';

export const ANTHROPIC_VERSION = '2023-06-01';
const DEFAULT_MAX_TOKENS = 4096;

const str = z.optional(z.nullable(z.string()));
const usageSchema = z.optional(
  z.nullable(
    z.looseObject({
      input_tokens: z.optional(z.nullable(z.number())),
      output_tokens: z.optional(z.nullable(z.number())),
      cache_read_input_tokens: z.optional(z.nullable(z.number())),
      cache_creation_input_tokens: z.optional(z.nullable(z.number())),
    }),
  ),
);
const citation = z.looseObject({ type: str, url: str, title: str });
const block = z.looseObject({
  type: z.string(),
  text: str,
  thinking: str,
  signature: str,
  id: str,
  name: str,
  input: z.optional(z.unknown()),
  citations: z.optional(z.nullable(z.array(citation))),
});
const eventSchema = z.looseObject({
  type: z.optional(z.string()),
  index: z.optional(z.number()),
  content_block: z.optional(block),
  delta: z.optional(
    z.looseObject({
      type: z.optional(z.string()),
      text: str,
      thinking: str,
      signature: str,
      partial_json: str,
      stop_reason: str,
      // citations_delta: a web search result location (url, title) or a document location.
      citation: z.optional(z.nullable(citation)),
    }),
  ),
  message: z.optional(z.looseObject({ usage: usageSchema })),
  usage: usageSchema,
});
const messageSchema = z.looseObject({ content: z.array(block), stop_reason: str, usage: usageSchema });

/** `POST /v1/messages` with `Authorization: Bearer` (added by the client) and `anthropic-version`. */
export function streamMessages(http: HttpClient, request: ChatRequest): ChatStream {
  return runChat(http, request, {
    url: http.endpoints.messages,
    body: messagesBody(request),
    headers: { 'anthropic-version': ANTHROPIC_VERSION },
    streamDecoder,
    parseJson,
  });
}

/**
 * The request body. The parts that stay the same through a conversation come first and the
 * messages last, tools in a stable order, so that every request starts with the bytes of the one
 * before it; with `request.cache`, breakpoints mark the tools, the system text and the last turn
 * (`withBreakpoints`).
 */
export function messagesBody(request: ChatRequest): Record<string, unknown> {
  // Anthropic refuses thinking with a forced tool choice, so a `required` call goes without it.
  const forced = Boolean(request.tools?.length) && request.toolMode === 'required';
  const thinking = messagesThinking(
    forced ? undefined : request.thinking,
    request.maxTokens ?? DEFAULT_MAX_TOKENS,
    request.modelMaxOutput,
  );
  const body: Record<string, unknown> = { model: request.model };
  if (request.tools?.length) {
    body.tools = stableTools(request.tools).map(wireTool);
    if (request.toolMode === 'required') body.tool_choice = { type: 'any' };
  }
  if (request.system) body.system = request.system;
  body.max_tokens = thinking.maxTokens;
  if (thinking.thinking) body.thinking = thinking.thinking;
  // With thinking on, Anthropic takes no temperature but 1; the caller's is left out rather than refused.
  else if (request.temperature !== undefined) body.temperature = request.temperature;
  body.stream = request.stream;
  body.messages = alternating(request.messages.map(wireMessage));
  if (request.cache?.breakpoints) withBreakpoints(body, request.cache.breakpoints.minTokens);
  return body;
}

/**
 * Anthropic's breakpoints, in the order its cache reads a request (tools, system, messages), each
 * once the prefix up to it has passed the model's minimum: the last tool (the definitions change
 * least), the system text, and the last turn's last block, which moves on with every request and
 * marks what the next one finds cached (each breakpoint looks back for the longest cached prefix).
 * Three of the four allowed. Turns' text goes as blocks throughout, so a turn's bytes stay the same
 * when its marker moves on.
 */
function withBreakpoints(body: Record<string, unknown>, minTokens: number): void {
  const length = new PrefixLength(minTokens);
  const tools = body.tools as Array<Record<string, unknown>> | undefined;
  if (tools?.length && length.add(tools)) tools[tools.length - 1] = { ...tools.at(-1), cache_control: cacheMarker() };
  if (typeof body.system === 'string' && length.add(body.system))
    body.system = [{ type: 'text', text: body.system, cache_control: cacheMarker() }];
  // Every turn's text goes as blocks, marked or not, so that a turn keeps its bytes when its marker moves on.
  const messages = (body.messages as WireMessage[]).map((m) =>
    typeof m.content === 'string' && m.content ? { role: m.role, content: asBlocks(m.content) } : m,
  );
  body.messages = messages;
  for (let i = 0; i < messages.length && !length.reached(); i++) length.add(messages[i]?.content);
  const last = messages.at(-1);
  if (!length.reached() || !last) return;
  const blocks = asBlocks(last.content);
  const end = blocks.at(-1);
  if (!end) return;
  messages[messages.length - 1] = {
    role: last.role,
    content: [...blocks.slice(0, -1), { ...end, cache_control: cacheMarker() }],
  };
}

type WireMessage = ReturnType<typeof wireMessage>;

/**
 * The Messages protocol wants turns that start with the user and alternate between user and
 * assistant. A history window can start with an answer (its question fell outside the window) and
 * a failed answer leaves two questions in a row: the leading answers are left out and runs of one
 * role are joined into one turn.
 */
function alternating(messages: WireMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const m of messages) {
    if (out.length === 0 && m.role !== 'user') continue;
    const last = out[out.length - 1];
    if (last && last.role === m.role) {
      out[out.length - 1] = { role: m.role, content: [...asBlocks(last.content), ...asBlocks(m.content)] };
    } else {
      out.push(m);
    }
  }
  return out;
}

function asBlocks(content: WireMessage['content']): Array<Record<string, unknown>> {
  return typeof content === 'string' ? (content ? [{ type: 'text', text: content }] : []) : content;
}

function wireTool(t: ChatTool): Record<string, unknown> {
  return { name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.inputSchema };
}

/**
 * A message with images becomes content blocks: one `image` block per image with a base64 source
 * and its `media_type` (Anthropic's Messages API image block), then the text. Images go first, as Anthropic advises.
 * Tool results go before everything else (Anthropic requires `tool_result` blocks to open the user
 * turn that answers the calls), with `is_error` when the tool failed. An assistant turn that made
 * calls sends its signed thinking block first (required with tool use when thinking is on; one
 * without a signature would be refused, so it is left out), then its text, then its `tool_use` blocks.
 */
function wireMessage(m: ChatMessage): { role: string; content: string | Array<Record<string, unknown>> } {
  const calls = callsOf(m);
  if (!m.images?.length && !m.toolResults?.length && !calls.length) return { role: m.role, content: m.content };
  const blocks: Array<Record<string, unknown>> = (m.toolResults ?? []).map((r) => ({
    type: 'tool_result',
    tool_use_id: r.callId,
    content: r.content,
    ...(r.isError ? { is_error: true } : {}),
  }));
  const thinking = echoedReasoning(m);
  if (thinking && m.reasoning?.signature) blocks.push({ type: 'thinking', thinking, signature: m.reasoning.signature });
  for (const image of m.images ?? [])
    blocks.push({ type: 'image', source: { type: 'base64', media_type: image.mediaType, data: image.base64 } });
  if (m.content) blocks.push({ type: 'text', text: m.content });
  for (const c of calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
  return { role: m.role, content: blocks };
}

interface OpenTool {
  id: string;
  name: string;
  json: string;
}

/**
 * The shapes nearly every streamed event has (a text, thinking, signature or argument delta, a
 * block's stop, `message_stop`), checked by hand: the schema costs more than the rest of the
 * decoding together over a long answer. It accepts only what `eventSchema` accepts unchanged; any
 * other event (a block's start, `message_start` / `message_delta` with usage, citations, anything
 * unexpected) is left to the schema, which also words the error.
 */
export function isPlainEvent(json: Record<string, unknown>): json is StreamEvent {
  if (json.content_block !== undefined || json.message !== undefined || json.usage != null) return false;
  if (json.type !== undefined && typeof json.type !== 'string') return false;
  if (json.index !== undefined && typeof json.index !== 'number') return false;
  const d = json.delta;
  if (d === undefined) return true;
  return (
    isRecord(d) &&
    (d.type === undefined || typeof d.type === 'string') &&
    isText(d.text) &&
    isText(d.thinking) &&
    isText(d.signature) &&
    isText(d.partial_json) &&
    isText(d.stop_reason) &&
    d.citation == null
  );
}

type StreamEvent = z.infer<typeof eventSchema>;

/** A streamed event read by the schema alone; `name` is its event name, for the error. */
export function schemaEvent(json: Record<string, unknown>, name: string): StreamEvent {
  return parseWith(eventSchema, json, `A streamed Messages event (${name})`);
}

/** A streamed event, read by the hand check when it has a common shape, else by the schema. */
export function readEvent(json: Record<string, unknown>, name: string): StreamEvent {
  return isPlainEvent(json) ? json : schemaEvent(json, name);
}

/** Reads a streamed answer; `read` is replaceable so that tests can hold the fast path to the schema. */
export function streamDecoder(
  read: (json: Record<string, unknown>, name: string) => StreamEvent = readEvent,
): StreamDecoder {
  const tools = new Map<number, OpenTool>();
  const usage: WireUsage = {};
  let stop: string | undefined;
  return {
    message(message, out) {
      const json = parseEventJson(message);
      // Anthropic clients dispatch on the `event:` name; the JSON `type` is the fallback.
      const name = message.event ?? (typeof json.type === 'string' ? json.type : '');
      if (name === 'ping') return false;
      if (name === 'error') {
        out.push({ type: 'error', error: errorFromStreamPayload(json.error ?? json) });
        return true;
      }
      const e = read(json, name);
      switch (name) {
        case 'message_start':
          if (e.message?.usage) Object.assign(usage, known(e.message.usage));
          break;
        case 'content_block_start':
          if (e.content_block?.type === 'tool_use')
            tools.set(e.index ?? 0, { id: e.content_block.id ?? '', name: e.content_block.name ?? '', json: '' });
          else if (e.content_block?.type === 'text' && e.content_block.text)
            out.push({ type: 'textDelta', text: e.content_block.text });
          break;
        case 'content_block_delta': {
          const d = e.delta;
          if (d?.type === 'text_delta' && d.text) out.push({ type: 'textDelta', text: d.text });
          else if (d?.type === 'thinking_delta' && d.thinking) out.push({ type: 'reasoningDelta', text: d.thinking });
          else if (d?.type === 'signature_delta' && d.signature)
            out.push({ type: 'reasoningSignature', signature: d.signature });
          else if (d?.type === 'citations_delta' && d.citation) out.push(...webCitations([d.citation]));
          else if (d?.type === 'input_json_delta' && d.partial_json) {
            const tool = tools.get(e.index ?? 0);
            if (tool) tool.json += d.partial_json;
          }
          break;
        }
        case 'content_block_stop': {
          const tool = tools.get(e.index ?? 0);
          if (tool) {
            tools.delete(e.index ?? 0);
            out.push(toolCallEvent(tool.id, tool.name, tool.json));
          }
          break;
        }
        case 'message_delta':
          if (e.delta?.stop_reason) stop = e.delta.stop_reason;
          // The counts are cumulative: the last value is the total.
          if (e.usage) Object.assign(usage, known(e.usage));
          break;
        case 'message_stop':
          out.push({ type: 'usage', usage: usageFrom(usage) }, done(stop ?? 'end_turn'));
          return true;
        default:
          break;
      }
      return false;
    },
    end(out) {
      out.push({ type: 'error', error: endedEarly('message_stop') });
    },
  };
}

function parseJson(json: unknown): ChatEvent[] {
  const m = parseWith(messageSchema, json, l10n.t('The Messages answer'));
  const events: ChatEvent[] = [];
  for (const b of m.content) {
    if (b.type === 'thinking') {
      if (b.thinking) events.push({ type: 'reasoningDelta', text: b.thinking });
      if (b.signature) events.push({ type: 'reasoningSignature', signature: b.signature });
    } else if (b.type === 'text' && b.text) {
      events.push({ type: 'textDelta', text: b.text });
      events.push(...webCitations(b.citations));
    } else if (b.type === 'tool_use') events.push(parsedToolCallEvent(b.id ?? '', b.name ?? '', b.input));
  }
  if (m.usage) events.push({ type: 'usage', usage: usageFrom(m.usage) });
  events.push(done(m.stop_reason ?? 'end_turn'));
  return events;
}

/** Web search result locations (url, title) among a text block's citations; document citations have no URL. */
function webCitations(list: Array<z.infer<typeof citation>> | null | undefined): ChatEvent[] {
  return (list ?? []).flatMap((c): ChatEvent[] =>
    c.type === 'web_search_result_location' && c.url
      ? [{ type: 'citation', url: c.url, ...(c.title ? { title: c.title } : {}) }]
      : [],
  );
}

type WireUsage = NonNullable<z.infer<typeof usageSchema>>;

/** The counts a usage gives (a `message_delta` may give some of them only, or null). */
function known(u: WireUsage): WireUsage {
  return Object.fromEntries(Object.entries(u).filter(([, v]) => typeof v === 'number')) as WireUsage;
}

/**
 * Anthropic's `input_tokens` leaves out the tokens read from and written to the cache; the usage
 * counts every input token, as the other protocols do, and says which came from the cache.
 */
function usageFrom(u: WireUsage): Usage {
  const read = u.cache_read_input_tokens ?? undefined;
  const written = u.cache_creation_input_tokens ?? undefined;
  const input = u.input_tokens == null ? undefined : u.input_tokens + (read ?? 0) + (written ?? 0);
  const output = u.output_tokens ?? undefined;
  return {
    ...(input !== undefined ? { inputTokens: input } : {}),
    ...(output !== undefined ? { outputTokens: output } : {}),
    ...(input !== undefined && output !== undefined ? { totalTokens: input + output } : {}),
    ...(read ? { cachedInputTokens: read } : {}),
    ...(written ? { cacheWriteTokens: written } : {}),
  };
}

function done(raw: string): ChatEvent {
  const map: Record<string, FinishReason> = {
    end_turn: 'stop',
    stop_sequence: 'stop',
    max_tokens: 'length',
    tool_use: 'toolCalls',
    refusal: 'contentFilter',
  };
  return { type: 'done', finishReason: map[raw] ?? 'other', raw };
}
