import type { ModelSpec } from './types';
import { isRecord } from './values';

/**
 * How each upstream behind the gateway reads a request's thinking parameters, and the 400 it
 * answers for the wrong form (relayed by new-api as it came). Written from the providers' own
 * documentation and the errors users report, independently of the client's table:
 *
 * - Alibaba Bailian (owned_by `ali`): `enable_thinking` switches hybrid Qwen3 models; `true` on a
 *   non-streamed call is refused ("parameter.enable_thinking must be set to false for non-streaming
 *   calls", invalid_parameter_error); `thinking_budget` caps the reasoning. Other fields are ignored.
 * - Zhipu (owned_by `zhipu*`): GLM-4.5 and newer think unless `thinking: {type: "disabled"}`;
 *   `enable_thinking` is not a Zhipu parameter and changes nothing.
 * - OpenAI: `reasoning_effort` (Chat Completions) / `reasoning.effort` (Responses) only on reasoning
 *   models, with the values each model takes; the reasoning itself is visible only as a Responses
 *   summary (`reasoning.summary`), never on Chat Completions.
 * - Anthropic (Messages): `thinking: {type: "enabled", budget_tokens}` with 1024 ≤ budget < max_tokens,
 *   no temperature but 1 and no forced tool choice alongside it.
 */

export type ThinkingCheck =
  { ok: true; thinking: boolean } | { ok: false; message: string; code: string; param: string };

/** What an OpenAI reasoning model takes as effort; undefined for a model that takes none. */
function openAiEfforts(model: ModelSpec): string[] | undefined {
  if (model.reasoning !== true) return undefined;
  // gpt-5.1 and newer start at "none"; gpt-5 at "minimal"; the o-series at "low".
  if (/^gpt-5\.\d/.test(model.id)) return ['none', 'low', 'medium', 'high'];
  if (/^gpt-5/.test(model.id)) return ['minimal', 'low', 'medium', 'high'];
  return ['low', 'medium', 'high'];
}

function listValues(values: string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted.at(-1) ?? ''}`;
}

/** OpenAI's answer for an effort the model does not take (`param` is the field's dotted name). */
function checkEffort(model: ModelSpec, effort: unknown, param: string): ThinkingCheck | undefined {
  if (effort === undefined || effort === null) return undefined;
  const efforts = openAiEfforts(model);
  if (!efforts)
    return {
      ok: false,
      message: `Unsupported parameter: '${param}' is not supported with this model.`,
      code: 'unsupported_parameter',
      param,
    };
  if (typeof effort !== 'string' || !efforts.includes(effort)) {
    return {
      ok: false,
      message: `Unsupported value: '${param}' does not support '${String(effort)}' with this model. Supported values are: ${listValues(efforts)}.`,
      code: 'unsupported_value',
      param,
    };
  }
  return undefined;
}

export function completionsThinking(body: Record<string, unknown>, model: ModelSpec, stream: boolean): ThinkingCheck {
  const owner = model.owned_by;
  if (owner === 'ali') {
    if (body.enable_thinking === true && !stream) {
      return {
        ok: false,
        message: 'parameter.enable_thinking must be set to false for non-streaming calls',
        code: 'invalid_parameter_error',
        param: '',
      };
    }
    return { ok: true, thinking: body.enable_thinking === true };
  }
  if (owner.startsWith('zhipu')) {
    const type = isRecord(body.thinking) ? body.thinking.type : undefined;
    return { ok: true, thinking: model.reasoning === true && type !== 'disabled' };
  }
  if (owner === 'openai') {
    const refused = checkEffort(model, body.reasoning_effort, 'reasoning_effort');
    return refused ?? { ok: true, thinking: false };
  }
  // Other upstreams: either switch asks for thinking (new-api forwards both fields).
  return {
    ok: true,
    thinking: body.enable_thinking === true || (isRecord(body.thinking) && body.thinking.type === 'enabled'),
  };
}

export function responsesThinking(body: Record<string, unknown>, model: ModelSpec): ThinkingCheck {
  const reasoning = isRecord(body.reasoning) ? body.reasoning : {};
  if (model.owned_by === 'openai') {
    const refused = checkEffort(model, reasoning.effort, 'reasoning.effort');
    if (refused) return refused;
  }
  const summary = reasoning.summary;
  const asked = summary === 'auto' || summary === 'concise' || summary === 'detailed';
  return { ok: true, thinking: asked && reasoning.effort !== 'none' };
}

/** Anthropic's checks of `thinking` against the rest of the body; undefined when they pass. */
export function messagesThinkingError(body: Record<string, unknown>): string | undefined {
  const thinking = body.thinking;
  if (thinking === undefined) return undefined;
  if (!isRecord(thinking) || !['enabled', 'disabled', 'adaptive'].includes(String(thinking.type))) {
    return "thinking: Input tag does not match any of the expected tags: 'disabled', 'enabled', 'adaptive'";
  }
  if (thinking.type !== 'enabled') return undefined;
  const budget = thinking.budget_tokens;
  if (budget === undefined) return 'thinking.enabled.budget_tokens: Field required';
  if (typeof budget !== 'number' || !Number.isInteger(budget))
    return 'thinking.enabled.budget_tokens: Input should be a valid integer';
  if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (typeof body.max_tokens === 'number' && budget >= body.max_tokens) {
    return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  if (body.temperature !== undefined && body.temperature !== 1) {
    return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  }
  const choice = isRecord(body.tool_choice) ? body.tool_choice.type : undefined;
  if (choice === 'any' || choice === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
  return undefined;
}
