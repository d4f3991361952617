import type { ChatMessage, ChatRequest, ChatTool } from './events';
import { promptCacheKey } from './promptCache';
import { responsesReasoning } from './thinking';
import { callsOf, stableTools } from './tools';

/** The body of a Responses request: the input items of a conversation, its tools and settings. */

export interface ResponsesExtras {
  /** Built-in tools such as `{type: 'image_generation', action: 'generate', model}`. */
  tools?: unknown[];
  toolChoice?: unknown;
}

/** The built-in search tool; its parameters are the tool's own, not ordinary chat's `enable_search`. */
export const WEB_SEARCH_TOOL = { type: 'web_search' } as const;
const SEARCH_TOOL_TYPES = new Set([
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
]);

/**
 * The request body. The parts that stay the same through a conversation come first and the input
 * last, tools in a stable order, so that every request starts with the bytes of the one before it
 * (what an upstream's prompt cache reuses, see promptCache.ts).
 */
export function responsesBody(request: ChatRequest, extras: ResponsesExtras = {}): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model };
  const tools = [...(extras.tools ?? []), ...stableTools(request.tools ?? []).map(wireTool)];
  if (request.enableSearch && !tools.some((t) => SEARCH_TOOL_TYPES.has(String((t as { type?: unknown } | null)?.type))))
    tools.push({ ...WEB_SEARCH_TOOL });
  if (tools.length) body.tools = tools;
  if (extras.toolChoice !== undefined) body.tool_choice = extras.toolChoice;
  else if (request.tools?.length && request.toolMode === 'required') body.tool_choice = 'required';
  if (request.system) body.instructions = request.system;
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  const reasoning = responsesReasoning(request.thinking);
  if (reasoning) body.reasoning = reasoning;
  if (request.cache?.key) body.prompt_cache_key = promptCacheKey(request, request.cache.key.conversation);
  body.stream = request.stream;
  body.input = request.messages.flatMap(wireInput);
  return body;
}

/**
 * A function tool in Responses' flat form `{type: "function", name, description, parameters, strict}`. `strict` is false on purpose: the
 * Responses API treats an absent `strict` as true, which only schemas written for it pass (every
 * property required, `additionalProperties: false`), and the tools callers hand us are not.
 */
function wireTool(t: ChatTool): Record<string, unknown> {
  return {
    type: 'function',
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    parameters: t.inputSchema,
    strict: false,
  };
}

/**
 * One conversation turn as input items. Tool results become `function_call_output` items (by
 * `call_id`) ahead of the user's own message; an assistant turn's calls are echoed as
 * `function_call` items after its text. Its reasoning is not sent back: a Responses reasoning item
 * can only be returned with the id (and encrypted content) the server issued for it, which a
 * stateless request does not keep, and function calls are accepted without it.
 */
function wireInput(m: ChatMessage): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = (m.toolResults ?? []).map((r) => ({
    type: 'function_call_output',
    call_id: r.callId,
    output: r.content,
  }));
  const calls = callsOf(m);
  if (m.content || m.images?.length || (!items.length && !calls.length)) items.push(wireMessage(m));
  for (const c of calls)
    items.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.input) });
  return items;
}

/**
 * One input message: `input_text` (or `output_text` for the assistant's turns), then one
 * `input_image` per image with a data URL in `image_url` and `detail: auto`.
 */
function wireMessage(m: ChatMessage): { role: string; content: Array<Record<string, unknown>> } {
  const content: Array<Record<string, unknown>> = [];
  if (m.content || !m.images?.length)
    content.push({ type: m.role === 'assistant' ? 'output_text' : 'input_text', text: m.content });
  for (const image of m.images ?? [])
    content.push({ type: 'input_image', image_url: `data:${image.mediaType};base64,${image.base64}`, detail: 'auto' });
  return { role: m.role, content };
}
