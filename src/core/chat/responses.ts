import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { errorFromStreamPayload } from '../errorBody';
import type { HttpClient } from '../http';
import { isNumber, isNumberOrNull, isRecord, isText, parseWith } from '../validate';
import type { ChatEvent, ChatRequest, Usage } from './events';
import type { ResponsesExtras } from './responsesRequest';
import { responsesBody } from './responsesRequest';
import { toolCallEvent } from './tools';
import { endedEarly, parseEventJson, runChat, type ChatStream, type StreamDecoder } from './transport';

const str = z.optional(z.nullable(z.string()));
const usageSchema = z.optional(
  z.nullable(
    z.looseObject({
      input_tokens: z.optional(z.number()),
      output_tokens: z.optional(z.number()),
      total_tokens: z.optional(z.number()),
      output_tokens_details: z.optional(
        z.nullable(z.looseObject({ reasoning_tokens: z.optional(z.nullable(z.number())) })),
      ),
      input_tokens_details: z.optional(
        z.nullable(z.looseObject({ cached_tokens: z.optional(z.nullable(z.number())) })),
      ),
    }),
  ),
);
const annotation = z.looseObject({ type: z.string(), url: str, title: str });
/** A `web_search_call`'s action: `search` (queries, sources), `open_page` (url) or `find_in_page`. */
const searchAction = z.optional(
  z.nullable(
    z.looseObject({
      type: str,
      query: str,
      queries: z.optional(z.nullable(z.array(z.string()))),
      url: str,
      sources: z.optional(z.nullable(z.array(z.looseObject({ type: str, url: str })))),
    }),
  ),
);
const outputItem = z.looseObject({
  type: z.string(),
  id: str,
  action: searchAction,
  call_id: str,
  name: str,
  arguments: str,
  result: str,
  revised_prompt: str,
  output_format: str,
  content: z.optional(
    z.nullable(
      z.array(z.looseObject({ type: z.string(), text: str, annotations: z.optional(z.nullable(z.array(annotation))) })),
    ),
  ),
  summary: z.optional(z.nullable(z.array(z.looseObject({ text: str })))),
});
const responseSchema = z.looseObject({
  status: str,
  output: z.optional(z.nullable(z.array(outputItem))),
  usage: usageSchema,
  error: z.optional(z.nullable(z.looseObject({ code: str, message: str }))),
  incomplete_details: z.optional(z.nullable(z.looseObject({ reason: str }))),
});
const eventSchema = z.looseObject({
  type: z.string(),
  item_id: str,
  arguments: str,
  delta: z.optional(z.unknown()),
  item: z.optional(outputItem),
  response: z.optional(responseSchema),
  annotation: z.optional(annotation),
  partial_image_b64: str,
  partial_image_index: z.optional(z.number()),
  output_format: str,
});

/**
 * `POST /v1/responses`. The image-generation tool rides along in `extras.tools`; the web-search
 * switch adds the `web_search` tool (once, next to any other tools).
 */
export function streamResponses(http: HttpClient, request: ChatRequest, extras: ResponsesExtras = {}): ChatStream {
  const body = responsesBody(request, extras);
  return runChat(http, request, { url: http.endpoints.responses, body, streamDecoder, parseJson });
}

/** A function call between its `output_item.added` and its `output_item.done`. */
interface OpenCall {
  callId: string;
  name: string;
  arguments: string;
}

/**
 * The shapes nearly every streamed event has (a text, reasoning or argument delta, an output item
 * of a message, a reasoning or a function call, the response with its status and usage), checked
 * by hand: the schema costs more than the rest of the decoding together over a long answer, and
 * as much as the rest of a short tool-call answer's handling. It accepts only what `eventSchema`
 * accepts unchanged; an event with an annotation or a web search's action (a few per answer), or
 * anything unexpected, is left to the schema, which also words the error.
 */
export function isPlainEvent(json: Record<string, unknown>): json is StreamEvent {
  return (
    typeof json.type === 'string' &&
    (json.item === undefined || isPlainItem(json.item)) &&
    (json.response === undefined || isPlainResponse(json.response)) &&
    json.annotation === undefined &&
    isText(json.item_id) &&
    isText(json.arguments) &&
    isText(json.partial_image_b64) &&
    isText(json.output_format) &&
    (json.partial_image_index === undefined || typeof json.partial_image_index === 'number')
  );
}

/** What `outputItem` accepts, without a search action and with no annotations in its content. */
function isPlainItem(item: unknown): boolean {
  if (!isRecord(item) || typeof item.type !== 'string' || item.action != null) return false;
  if (!isText(item.id) || !isText(item.call_id) || !isText(item.name) || !isText(item.arguments)) return false;
  if (!isText(item.result) || !isText(item.revised_prompt) || !isText(item.output_format)) return false;
  const { content, summary } = item;
  if (content != null && !(Array.isArray(content) && (content as unknown[]).every(isPlainContent))) return false;
  return (
    summary == null ||
    (Array.isArray(summary) && (summary as unknown[]).every((part) => isRecord(part) && isText(part.text)))
  );
}

function isPlainContent(part: unknown): boolean {
  if (!isRecord(part) || typeof part.type !== 'string' || !isText(part.text)) return false;
  const annotations = part.annotations;
  return annotations == null || (Array.isArray(annotations) && annotations.length === 0);
}

/** What `responseSchema` accepts, its output items as `isPlainItem` does. */
function isPlainResponse(r: unknown): boolean {
  if (!isRecord(r) || !isText(r.status)) return false;
  const { output, usage, error } = r;
  if (output != null && !(Array.isArray(output) && (output as unknown[]).every(isPlainItem))) return false;
  if (usage != null) {
    if (
      !isRecord(usage) ||
      !isNumber(usage.input_tokens) ||
      !isNumber(usage.output_tokens) ||
      !isNumber(usage.total_tokens)
    )
      return false;
    const details = usage.output_tokens_details;
    if (details != null && !(isRecord(details) && isNumberOrNull(details.reasoning_tokens))) return false;
    const input = usage.input_tokens_details;
    if (input != null && !(isRecord(input) && isNumberOrNull(input.cached_tokens))) return false;
  }
  if (error != null && !(isRecord(error) && isText(error.code) && isText(error.message))) return false;
  const incomplete = r.incomplete_details;
  return incomplete == null || (isRecord(incomplete) && isText(incomplete.reason));
}

type StreamEvent = z.infer<typeof eventSchema>;

/** A streamed event read by the schema alone. */
export function schemaEvent(json: Record<string, unknown>): StreamEvent {
  return parseWith(eventSchema, json, `A streamed Responses event (${String(json.type)})`);
}

/** A streamed event, read by the hand check when it has the common shape, else by the schema. */
export function readEvent(json: Record<string, unknown>): StreamEvent {
  return isPlainEvent(json) ? json : schemaEvent(json);
}

/** Reads a streamed answer; `read` is replaceable so that tests can hold the fast path to the schema. */
export function streamDecoder(read: (json: Record<string, unknown>) => StreamEvent = readEvent): StreamDecoder {
  let partials = 0;
  const calls = new AnswerCalls();
  return {
    message(message, out) {
      if (message.data === '[DONE]') {
        out.push({ type: 'error', error: endedEarly('response.completed') });
        return true;
      }
      const json = parseEventJson(message);
      // The error event comes flat ({code,message}) or nested ({error:{...}}); both are read.
      if (message.event === 'error' || json.type === 'error') {
        out.push({ type: 'error', error: errorFromStreamPayload(json.error ?? json) });
        return true;
      }
      const e = read(json);
      switch (e.type) {
        case 'response.output_text.delta':
        case 'response.refusal.delta':
          if (typeof e.delta === 'string' && e.delta) out.push({ type: 'textDelta', text: e.delta });
          break;
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          if (typeof e.delta === 'string' && e.delta) out.push({ type: 'reasoningDelta', text: e.delta });
          break;
        case 'response.output_text.annotation.added':
          if (e.annotation) out.push(...urlCitations([e.annotation]));
          break;
        case 'response.image_generation_call.partial_image':
          if (e.partial_image_b64)
            out.push({
              type: 'image',
              base64: e.partial_image_b64,
              partial: true,
              index: e.partial_image_index ?? partials++,
              ...(e.output_format ? { format: e.output_format } : {}),
            });
          break;
        case 'response.completed':
        case 'response.incomplete':
          calls.finish(e.response, out);
          return true;
        case 'response.failed':
          out.push({
            type: 'error',
            error: errorFromStreamPayload(
              e.response?.error ?? { message: l10n.t('The response failed without a reason.') },
            ),
          });
          return true;
        default:
          calls.read(e, out);
          break;
      }
      return false;
    },
    end(out) {
      out.push({ type: 'error', error: endedEarly('response.completed') });
    },
  };
}

/**
 * The output items of one streamed answer: function calls between their `output_item.added` and
 * `output_item.done`, and what each finished item adds up to. Calls are normally reported whole by
 * `output_item.done`; what their added / arguments events said is kept only so that a server that
 * skips that event still gets its calls read.
 */
class AnswerCalls {
  private readonly open = new Map<string, OpenCall>();
  /** The ids of the calls reported. */
  private readonly saw = new Set<string>();

  /** An item's or a call's event (any other event is ignored). */
  read(e: StreamEvent, out: ChatEvent[]): void {
    switch (e.type) {
      case 'response.output_item.added':
        if (e.item?.type === 'function_call' && e.item.id)
          this.open.set(e.item.id, {
            callId: e.item.call_id ?? e.item.id,
            name: e.item.name ?? '',
            arguments: e.item.arguments ?? '',
          });
        break;
      case 'response.function_call_arguments.delta': {
        const call = e.item_id ? this.open.get(e.item_id) : undefined;
        if (call && typeof e.delta === 'string') call.arguments += e.delta;
        break;
      }
      case 'response.function_call_arguments.done': {
        const call = e.item_id ? this.open.get(e.item_id) : undefined;
        if (call && typeof e.arguments === 'string') call.arguments = e.arguments;
        break;
      }
      case 'response.output_item.done':
        if (e.item?.id) this.open.delete(e.item.id);
        if (e.item) {
          // Annotations normally arrive as events of their own; a server that only puts them in
          // the finished item is read too (duplicates are merged by URL later).
          for (const event of itemEvents(e.item, true)) {
            if (event.type === 'toolCall') this.saw.add(event.id);
            out.push(event);
          }
        }
        break;
      default:
        break;
    }
  }

  /** The end of the answer: the calls never closed, the usage and the finish. */
  finish(response: z.infer<typeof responseSchema> | undefined, out: ChatEvent[]): void {
    // One by one: a call that cannot be read fails after the ones before it.
    for (const event of this.unfinished(response)) out.push(event);
    for (const event of finish(response, this.saw)) out.push(event);
  }

  /**
   * Calls the stream never closed with `output_item.done`: as the final response lists them (with
   * what their streamed events said when it lists less), then any it does not list, as streamed.
   */
  private *unfinished(response: z.infer<typeof responseSchema> | undefined): Generator<ChatEvent> {
    const pending: Array<[string, string, string | null | undefined]> = [];
    for (const item of response?.output ?? []) {
      if (item.type !== 'function_call') continue;
      const streamed = item.id ? this.open.get(item.id) : undefined;
      pending.push([
        item.call_id ?? streamed?.callId ?? item.id ?? 'call',
        item.name || streamed?.name || '',
        item.arguments || streamed?.arguments,
      ]);
    }
    for (const call of this.open.values()) pending.push([call.callId, call.name, call.arguments]);
    this.open.clear();
    for (const [id, name, args] of pending) {
      if (this.saw.has(id)) continue;
      this.saw.add(id);
      yield toolCallEvent(id, name, args);
    }
  }
}

/** Events for a finished output item; text and reasoning were streamed already when `streamed`. */
function itemEvents(item: z.infer<typeof outputItem>, streamed: boolean): ChatEvent[] {
  const events: ChatEvent[] = [];
  if (item.type === 'function_call') {
    events.push(toolCallEvent(item.call_id ?? item.id ?? 'call', item.name ?? '', item.arguments));
  } else if (item.type === 'web_search_call') {
    const action = item.action;
    const queries = action?.queries?.length ? action.queries : action?.query ? [action.query] : [];
    const sources = (action?.sources ?? []).flatMap((s) => (s.url ? [s.url] : []));
    events.push({ type: 'webSearch', queries, sources });
  } else if (streamed && item.type === 'message') {
    for (const part of item.content ?? []) events.push(...urlCitations(part.annotations));
  } else if (item.type === 'image_generation_call' && item.result) {
    events.push({
      type: 'image',
      base64: item.result,
      partial: false,
      index: 0,
      ...(item.output_format ? { format: item.output_format } : {}),
      ...(item.revised_prompt ? { revisedPrompt: item.revised_prompt } : {}),
    });
  } else if (!streamed && item.type === 'reasoning') {
    const text = (item.summary ?? []).map((s) => s.text ?? '').join('');
    if (text) events.push({ type: 'reasoningDelta', text });
  } else if (!streamed && item.type === 'message') {
    for (const part of item.content ?? []) {
      if (part.text) events.push({ type: 'textDelta', text: part.text });
      events.push(...urlCitations(part.annotations));
    }
  }
  return events;
}

function urlCitations(list: Array<z.infer<typeof annotation>> | null | undefined): ChatEvent[] {
  return (list ?? []).flatMap((a): ChatEvent[] =>
    a.type === 'url_citation' && a.url
      ? [{ type: 'citation', url: a.url, ...(a.title ? { title: a.title } : {}) }]
      : [],
  );
}

function* finish(response: z.infer<typeof responseSchema> | undefined, sawCall: Set<string>): Generator<ChatEvent> {
  if (response?.usage) yield { type: 'usage', usage: usageFrom(response.usage) };
  const reason = response?.incomplete_details?.reason;
  if (response?.status === 'incomplete') {
    yield {
      type: 'done',
      finishReason: reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'contentFilter' : 'other',
      raw: reason ?? 'incomplete',
    };
    return;
  }
  yield { type: 'done', finishReason: sawCall.size ? 'toolCalls' : 'stop', raw: response?.status ?? 'completed' };
}

function parseJson(json: unknown): ChatEvent[] {
  const response = parseWith(responseSchema, json, l10n.t('The Responses answer'));
  if (response.status === 'failed')
    return [
      {
        type: 'error',
        error: errorFromStreamPayload(response.error ?? { message: l10n.t('The response failed without a reason.') }),
      },
    ];
  const events = (response.output ?? []).flatMap((item) => itemEvents(item, false));
  const calls = new Set(events.flatMap((e) => (e.type === 'toolCall' ? [e.id] : [])));
  return [...events, ...finish(response, calls)];
}

function usageFrom(u: NonNullable<z.infer<typeof usageSchema>>): Usage {
  return {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    totalTokens: u.total_tokens,
    reasoningTokens: u.output_tokens_details?.reasoning_tokens ?? undefined,
    // `input_tokens` counts the cached ones too. A usage says only the tokens it has: none cached, none said.
    ...(u.input_tokens_details?.cached_tokens ? { cachedInputTokens: u.input_tokens_details.cached_tokens } : {}),
  };
}
