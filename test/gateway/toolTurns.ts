import { contentText } from './routes/echo';
import type { ModelSpec } from './types';
import { isRecord } from './values';

/**
 * Function tools on the three chat routes: which tools a request offers and whether it must call
 * one, and the tool round trip in its messages, checked the way the real upstreams check it.
 * Messages quoted here are the upstreams' own (OpenAI's, Anthropic's, Moonshot's), relayed as they
 * came; the route wraps them in its protocol's error body.
 */

export interface OfferedTool {
  name: string;
  /** The JSON Schema the request gave (`parameters` / `input_schema`); `{}` when absent. */
  schema: Record<string, unknown>;
}

/** `none`: no call; `auto`: when the prompt asks; `required`: always (a named tool, or the one asked for). */
export type ToolChoice = { mode: 'none' | 'auto' | 'required'; name?: string };

export interface ToolTurns {
  tools: OfferedTool[];
  choice: ToolChoice;
  /** The results that answer the last assistant turn's calls, when the conversation ends with them. */
  results: string[];
  /** How many calls earlier assistant turns made (Kimi numbers its call ids across the conversation). */
  priorCalls: number;
  /** Assistant turns with tool calls since the last user message that is not only tool results (an agent loop's rounds). */
  roundsSincePrompt: number;
}

/** A request the upstream refuses: the message, and the `param` OpenAI names. */
export interface ToolTurnError {
  message: string;
  param: string;
}

export type ToolTurnCheck = { ok: true; turns: ToolTurns } | { ok: false; error: ToolTurnError };

/** Kimi-type thinking models refuse a tool-call turn sent back without its reasoning. */
export function requiresReasoningEcho(model: ModelSpec): boolean {
  return model.owned_by === 'moonshot' && /thinking/i.test(model.id);
}

function schemaOf(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function choiceOf(
  raw: unknown,
  requiredWords: unknown[],
  named: (r: Record<string, unknown>) => string | undefined,
): ToolChoice {
  if (raw === 'none' || (isRecord(raw) && raw.type === 'none')) return { mode: 'none' };
  if (requiredWords.some((w) => w === raw || (isRecord(raw) && raw.type === w))) return { mode: 'required' };
  const name = isRecord(raw) ? named(raw) : undefined;
  return name ? { mode: 'required', name } : { mode: 'auto' };
}

const OPENAI_TOOL_RESULT_ORPHAN =
  "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";

function missingResults(ids: Iterable<string>): string {
  return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...ids].join(', ')}`;
}

/** Chat Completions: `tools[].function`, `tool_choice`, assistant `tool_calls` and `role: "tool"` answers. */
export function chatToolTurns(body: Record<string, unknown>, messages: unknown[], model: ModelSpec): ToolTurnCheck {
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t): OfferedTool[] => {
    const f = isRecord(t) && isRecord(t.function) ? t.function : undefined;
    return f && typeof f.name === 'string' ? [{ name: f.name, schema: schemaOf(f.parameters) }] : [];
  });
  const choice = choiceOf(body.tool_choice, ['required'], (r) =>
    isRecord(r.function) && typeof r.function.name === 'string' ? r.function.name : undefined,
  );
  let pending: Set<string> | undefined;
  let pendingAt = 0;
  let results: string[] = [];
  let priorCalls = 0;
  let rounds = 0;
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m)) continue;
    if (m.role === 'user') rounds = 0;
    if (m.role === 'tool') {
      const id = typeof m.tool_call_id === 'string' ? m.tool_call_id : '';
      if (!pending?.has(id))
        return { ok: false, error: { message: OPENAI_TOOL_RESULT_ORPHAN, param: `messages.[${i}].role` } };
      pending.delete(id);
      results.push(contentText(m.content));
      continue;
    }
    if (pending?.size)
      return { ok: false, error: { message: missingResults(pending), param: `messages.[${pendingAt}].role` } };
    pending = undefined;
    results = [];
    const calls = m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls : [];
    if (calls.length) {
      if (requiresReasoningEcho(model) && !(typeof m.reasoning_content === 'string' && m.reasoning_content)) {
        return {
          ok: false,
          error: {
            message: `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${i}`,
            param: '',
          },
        };
      }
      pending = new Set(calls.map((c) => (isRecord(c) && typeof c.id === 'string' ? c.id : '')));
      pendingAt = i;
      priorCalls += calls.length;
      rounds += 1;
    }
  }
  if (pending?.size)
    return { ok: false, error: { message: missingResults(pending), param: `messages.[${pendingAt}].role` } };
  const last: unknown = messages[messages.length - 1];
  return {
    ok: true,
    turns: {
      tools,
      choice,
      results: isRecord(last) && last.role === 'tool' ? results : [],
      priorCalls,
      roundsSincePrompt: rounds,
    },
  };
}

/** Responses: flat `function` tools, `function_call` items and the `function_call_output` items answering them. */
export function responsesToolTurns(body: Record<string, unknown>, input: unknown): ToolTurnCheck {
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t): OfferedTool[] =>
    isRecord(t) && t.type === 'function' && typeof t.name === 'string'
      ? [{ name: t.name, schema: schemaOf(t.parameters) }]
      : [],
  );
  const choice = choiceOf(body.tool_choice, ['required'], (r) =>
    r.type === 'function' && typeof r.name === 'string' ? r.name : undefined,
  );
  const items = Array.isArray(input) ? input : [];
  const calls = new Set<string>();
  const answered = new Set<string>();
  let results: string[] = [];
  let rounds = 0;
  let previousType: unknown;
  for (const item of items) {
    if (!isRecord(item)) continue;
    const callId = typeof item.call_id === 'string' ? item.call_id : '';
    if (item.role === 'user') rounds = 0;
    // Calls side by side are one round; a call after anything else starts the next.
    if (item.type === 'function_call' && previousType !== 'function_call') rounds += 1;
    previousType = item.type;
    if (item.type === 'function_call') {
      calls.add(callId);
      results = [];
    } else if (item.type === 'function_call_output') {
      if (!calls.has(callId))
        return {
          ok: false,
          error: { message: `No tool call found for function call output with call_id ${callId}.`, param: 'input' },
        };
      answered.add(callId);
      results.push(typeof item.output === 'string' ? item.output : contentText(item.output));
    } else {
      results = [];
    }
  }
  for (const id of calls)
    if (!answered.has(id))
      return { ok: false, error: { message: `No tool output found for function call ${id}.`, param: 'input' } };
  const last: unknown = items[items.length - 1];
  return {
    ok: true,
    turns: {
      tools,
      choice,
      results: isRecord(last) && last.type === 'function_call_output' ? results : [],
      priorCalls: calls.size,
      roundsSincePrompt: rounds,
    },
  };
}

/** Messages: `tools[].input_schema`, `tool_use` blocks and the `tool_result` blocks of the next user turn. */
export function messagesToolTurns(
  body: Record<string, unknown>,
  messages: unknown[],
  model: ModelSpec,
  thinking: boolean,
): ToolTurnCheck {
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t): OfferedTool[] =>
    isRecord(t) && typeof t.name === 'string' && (t.type === undefined || t.type === 'custom')
      ? [{ name: t.name, schema: schemaOf(t.input_schema) }]
      : [],
  );
  const choice = choiceOf(body.tool_choice, ['any'], (r) =>
    r.type === 'tool' && typeof r.name === 'string' ? r.name : undefined,
  );
  const blocksOf = (m: unknown): Array<Record<string, unknown>> =>
    isRecord(m) && Array.isArray(m.content) ? m.content.filter(isRecord) : [];
  let results: string[] = [];
  let priorCalls = 0;
  let rounds = 0;
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m)) continue;
    const uses =
      m.role === 'assistant'
        ? blocksOf(m)
            .filter((b) => b.type === 'tool_use')
            .map((b) => String(b.id))
        : [];
    priorCalls += uses.length;
    if (uses.length) rounds += 1;
    if (m.role === 'user' && (typeof m.content === 'string' || blocksOf(m).some((b) => b.type !== 'tool_result')))
      rounds = 0;
    if (uses.length) {
      const next: unknown = messages[i + 1];
      const answered = new Set(
        isRecord(next) && next.role === 'user'
          ? blocksOf(next)
              .filter((b) => b.type === 'tool_result')
              .map((b) => String(b.tool_use_id))
          : [],
      );
      const missing = uses.filter((id) => !answered.has(id));
      if (missing.length && i + 1 < messages.length) {
        return {
          ok: false,
          error: {
            message: `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
            param: '',
          },
        };
      }
    }
    if (m.role !== 'user') continue;
    const previous: unknown = messages[i - 1];
    const calls = new Set(
      isRecord(previous) && previous.role === 'assistant'
        ? blocksOf(previous)
            .filter((b) => b.type === 'tool_use')
            .map((b) => String(b.id))
        : [],
    );
    results = [];
    for (const [j, b] of blocksOf(m).entries()) {
      if (b.type !== 'tool_result') continue;
      const id = String(b.tool_use_id);
      if (!calls.has(id)) {
        return {
          ok: false,
          error: {
            message: `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
            param: '',
          },
        };
      }
      results.push((b.is_error === true ? 'error: ' : '') + contentText(b.content));
    }
  }
  const last: unknown = messages[messages.length - 1];
  // Results end the conversation unless the user's turn goes on with a question after them.
  const lastBlocks = blocksOf(last);
  const endsWithResults =
    isRecord(last) &&
    last.role === 'user' &&
    lastBlocks.some((b) => b.type === 'tool_result') &&
    lastBlocks.at(-1)?.type === 'tool_result';
  // Claude with thinking on: the turn whose calls are being answered must send its thinking back first.
  const callingAt = messages.length - 2;
  const first = blocksOf(messages[callingAt])[0];
  if (
    thinking &&
    model.owned_by === 'claude' &&
    endsWithResults &&
    first &&
    first.type !== 'thinking' &&
    first.type !== 'redacted_thinking'
  ) {
    return {
      ok: false,
      error: {
        message:
          `messages.${callingAt}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block ` +
          '(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. ' +
          'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking',
        param: '',
      },
    };
  }
  return {
    ok: true,
    turns: { tools, choice, results: endsWithResults ? results : [], priorCalls, roundsSincePrompt: rounds },
  };
}
