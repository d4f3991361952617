import { GatewayError } from '../errors';
import { parseJsonText } from '../validate';
import type { ChatEvent, ChatMessage, ChatTool, ChatToolCall } from './events';
import { words } from '../../shared/words';

/**
 * What the three chat adapters share about function calls: turning a finished call's argument
 * text into the one `toolCall` event, and the reasoning rule for the turns sent back.
 */

/**
 * The event for one finished call. Parameterless calls arrive as `""` (or no arguments at all)
 * from OpenAI-compatible upstreams and mean `{}`. Arguments that are not a JSON object are the
 * model's or the upstream's fault and become a `protocol` error naming the tool, which ends the
 * answer after what it already said.
 */
export function toolCallEvent(id: string, name: string, argumentText: string | null | undefined): ChatEvent {
  requireName(id, name);
  const text = argumentText ?? '';
  if (text.trim() === '') return { type: 'toolCall', id, name, input: {}, arguments: text };
  // The label is worded only when it is needed, as for streamed events (transport.ts, parseEventJson).
  const what = () => words('The arguments the model sent for the tool "{0}"', name);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Parses again to word the error (it throws).
    value = parseJsonText(text, what());
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('protocol', words('{0} were not a JSON object: "{1}".', what(), text.slice(0, 120)));
  }
  return { type: 'toolCall', id, name, input: value as Record<string, unknown>, arguments: text };
}

/** The event for a call whose arguments already arrived parsed (a Messages `tool_use` block's `input`). */
export function parsedToolCallEvent(id: string, name: string, input: unknown): ChatEvent {
  requireName(id, name);
  if (input === undefined || input === null) return { type: 'toolCall', id, name, input: {}, arguments: '{}' };
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new GatewayError(
      'protocol',
      words('The arguments the model sent for the tool "{0}" were not a JSON object.', name),
    );
  }
  return { type: 'toolCall', id, name, input: input as Record<string, unknown>, arguments: JSON.stringify(input) };
}

/** A call without a tool name cannot be run or answered: a clear error rather than a call to nothing. */
function requireName(id: string, name: string): void {
  if (!name)
    throw new GatewayError(
      'protocol',
      id
        ? words('The model sent a tool call ({0}) that names no tool.', id)
        : words('The model sent a tool call (without an id) that names no tool.'),
    );
}

/** The calls an assistant turn made, when it made any. */
export function callsOf(m: ChatMessage): ChatToolCall[] {
  return m.role === 'assistant' ? (m.toolCalls ?? []) : [];
}

/**
 * The reasoning to send back with an assistant turn: only a turn that made tool calls carries it.
 * Kimi-type and DeepSeek-type thinking models reject such a turn without it ("thinking is enabled
 * but reasoning_content is missing in assistant tool call message"); other turns need nothing,
 * and older reasoner models even refused `reasoning_content` in the messages they were sent.
 */
export function echoedReasoning(m: ChatMessage): string | undefined {
  return callsOf(m).length && m.reasoning?.text ? m.reasoning.text : undefined;
}

/**
 * The tools in one order whatever order the caller listed them in (by name): the tool definitions
 * open every request, and an upstream's prompt cache reuses only a prefix that is byte-identical.
 */
export function stableTools(tools: readonly ChatTool[]): ChatTool[] {
  return [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
