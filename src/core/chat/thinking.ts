import type { ChatProtocol, ModelInfo } from '../models/types';
import { thinkingChoiceSchema, type ThinkingChoiceView } from '../../shared/protocol';

/**
 * Thinking (reasoning) controls: which models can think, and how each upstream wants to be told.
 * Pure; the sidebar chat and VS Code's own chat both ask here, and the protocol modules turn the
 * resulting `ThinkingRequest` into their own body fields.
 *
 * The gateway relays each model to its upstream provider, and each provider has its own switch:
 *
 * | Family (upstream)            | Protocol         | Off                             | On / depth                                              |
 * |------------------------------|------------------|---------------------------------|---------------------------------------------------------|
 * | OpenAI reasoning (o1, o3, o4, gpt-5…) | Responses | `reasoning.effort: "none"` (gpt-5.1 and newer only) | `reasoning: {effort, summary: "auto"}`     |
 * |                              | Chat Completions | `reasoning_effort: "none"` (same models) | `reasoning_effort: low/medium/high`            |
 * | Anthropic Claude (3.7, 4.x)  | Messages         | no `thinking` field (the default)| `thinking: {type: "enabled", budget_tokens}`, 1024 ≤ budget < max_tokens |
 * | Zhipu GLM (4.5 and newer)    | Chat Completions | `thinking: {type: "disabled"}`  | `thinking: {type: "enabled"}` (the default)             |
 * | Alibaba Bailian (Qwen3 hybrid; GLM hosted there) | Chat Completions | `enable_thinking: false`        | `enable_thinking: true` (streamed calls only) + `thinking_budget` |
 * | Thinking-only models (kimi-k2-thinking, deepseek-r1 / reasoner, QwQ, `*-thinking-2507`) | any | cannot be switched off | always thinks |
 *
 * Sources: OpenAI's reasoning guide (platform.openai.com/docs/guides/reasoning), Anthropic's
 * extended-thinking guide (docs.claude.com/en/docs/build-with-claude/extended-thinking), Zhipu's
 * chat API reference (docs.bigmodel.cn), Alibaba Model Studio's "Deep thinking" page
 * (alibabacloud.com/help/en/model-studio/deep-thinking: "The thinking mode only supports
 * incremental output", and a non-streamed call with `enable_thinking: true` is refused).
 *
 * A model whose family is not in this table, or a family over a protocol the table has no row for
 * (Claude over Chat Completions, converted by the gateway), gets no control: a guessed parameter
 * is either ignored or refused upstream.
 */

/** How deep the model should think; `off` turns thinking off where the upstream can. */
export type ThinkingLevel = Exclude<ThinkingChoiceView, 'auto'>;
/** What the user picks: `auto` sends nothing and leaves the model's own default. */
export type ThinkingChoice = ThinkingChoiceView;
export const THINKING_CHOICES: readonly ThinkingChoice[] = thinkingChoiceSchema.options;

/** The request field a family is switched with (see the table above). */
export type ThinkingWire = 'openaiEffort' | 'anthropicBudget' | 'glmThinking' | 'qwenEnable';
export type ThinkingFamily = 'openai' | 'anthropic' | 'zhipu' | 'bailian';

/** What a model offers over one protocol. */
export interface ThinkingControl {
  /** `switch`: off / on only; `levels`: also low / medium / high; `always`: thinks, no switch. */
  kind: 'switch' | 'levels' | 'always';
  family?: ThinkingFamily;
  wire?: ThinkingWire;
  /** Whether `off` can be honoured: OpenAI's o-series and gpt-5 always reason a little (their lowest effort is not "none"). */
  canTurnOff: boolean;
}

/** A decided thinking instruction, as the protocol modules read it. */
export interface ThinkingRequest {
  wire: ThinkingWire;
  level: ThinkingLevel;
}

/** Token budgets for the depth levels (Anthropic `budget_tokens`, Bailian `thinking_budget`); Anthropic's minimum is 1024. */
export const THINKING_BUDGETS = { low: 2048, medium: 8192, high: 24576 } as const;
export const ANTHROPIC_MIN_BUDGET = 1024;

interface FamilyRule {
  family: ThinkingFamily;
  /** The gateway's `owned_by` (its channel type) for this upstream. */
  owner: RegExp;
  /** Model ids of this upstream, used when the gateway does not say who owns the model. */
  idFamily: RegExp;
  /** Models of the family that can think when the catalog does not say. */
  thinks: RegExp;
  kind: 'switch' | 'levels';
  /** The protocols the family's switch is known on, with its wire form. */
  wires: Partial<Record<ChatProtocol, ThinkingWire>>;
  /** Models that accept "off" (the default is true for every family but OpenAI). */
  canTurnOff?: RegExp;
  /** The upstream serves other makers' models too, each switched its own way (Bailian hosts GLM, Kimi, DeepSeek). */
  hostsOthers?: boolean;
}

/** The families, by upstream. */
const FAMILIES: readonly FamilyRule[] = [
  {
    family: 'openai',
    owner: /^(openai|azure)/i,
    idFamily: /^(gpt-|o\d)/i,
    // o1 / o3 / o4-mini and the gpt-5 line think; the `-chat` variants of gpt-5 do not.
    thinks:
      /^(o[134](-mini|-pro)?(-\d{4}-\d{2}-\d{2})?$|gpt-5(\.\d+)?(-(mini|nano|pro|codex(-mini)?))?(-\d{4}-\d{2}-\d{2})?$)/i,
    kind: 'levels',
    wires: { responses: 'openaiEffort', chatCompletions: 'openaiEffort' },
    // Effort `none` exists from gpt-5.1 on; gpt-5 and the o-series always reason at least a little.
    canTurnOff: /^gpt-5\.\d/i,
  },
  {
    family: 'anthropic',
    owner: /^(claude|anthropic|aws|vertex)/i,
    idFamily: /claude/i,
    thinks: /claude-(3-7-sonnet|(sonnet|opus|haiku)-4|4)/i,
    kind: 'levels',
    wires: { messages: 'anthropicBudget' },
  },
  {
    family: 'zhipu',
    owner: /^(zhipu|glm|bigmodel)/i,
    idFamily: /^glm-/i,
    thinks: /^glm-(4\.[5-9]|[5-9])/i,
    kind: 'switch',
    wires: { chatCompletions: 'glmThinking' },
  },
  {
    family: 'bailian',
    owner: /^(ali|alibaba|dashscope|bailian|aliyun)/i,
    idFamily: /^(qwen|qwq)/i,
    // Qwen3 hybrid models and the commercial qwen-plus / turbo / flash lines (`-instruct` variants do
    // not think), and GLM hosted on Bailian, which switches it with `enable_thinking` there too.
    thinks: /^(qwen3-(?!.*instruct)|qwen-(plus|turbo|flash)(-latest)?$|glm-(4\.[5-9]|[5-9]))/i,
    kind: 'levels',
    wires: { chatCompletions: 'qwenEnable' },
    hostsOthers: true,
  },
];

/** Models that always think and have no switch (checked before the families). */
const ALWAYS_THINKS = /(^|[-_/])r1($|[-_])|deepseek-reasoner|qwq|kimi-k2-thinking|-thinking($|-\d)/i;

/** The family of a model's upstream: the gateway's `owned_by` first, then the model id. */
export function thinkingFamily(model: Pick<ModelInfo, 'id' | 'ownedBy'>): ThinkingFamily | undefined {
  const byOwner = model.ownedBy ? FAMILIES.find((f) => f.owner.test(model.ownedBy ?? '')) : undefined;
  if (byOwner) return byOwner.family;
  if (model.ownedBy) return undefined;
  return FAMILIES.find((f) => f.idFamily.test(model.id))?.family;
}

/**
 * What a model offers over `protocol`, or undefined for no control. The catalog's `reasoning`
 * flag decides whether the model thinks when the catalog says so (false: never a control); the
 * id table decides otherwise. The family (from the upstream) decides the wire form.
 */
export function thinkingControl(model: ModelInfo, protocol: ChatProtocol): ThinkingControl | undefined {
  if (model.catalog?.reasoning === false) return undefined;
  if (ALWAYS_THINKS.test(model.id)) return { kind: 'always', canTurnOff: false };
  const family = thinkingFamily(model);
  const rule = FAMILIES.find((f) => f.family === family);
  if (!rule) return undefined;
  // A gateway that files another maker's model under this upstream (a GLM listed as `openai`, say)
  // relays it through a compatible channel whose switch is unknown: no control.
  const maker = FAMILIES.find((f) => f.idFamily.test(model.id));
  if (maker && maker !== rule && !rule.hostsOthers) return undefined;
  const thinks = model.catalog?.reasoning === true || rule.thinks.test(model.id);
  const wire = rule.wires[protocol];
  if (!thinks || !wire) return undefined;
  const efforts = model.catalog?.reasoningEfforts;
  const canTurnOff = rule.canTurnOff ? rule.canTurnOff.test(model.id) || efforts?.includes('none') === true : true;
  return { kind: rule.kind, family: rule.family, wire, canTurnOff };
}

/** The choices a control offers, in menu order (`auto` first). */
export function thinkingChoices(control: ThinkingControl | undefined): ThinkingChoice[] {
  if (!control || control.kind === 'always') return [];
  const out: ThinkingChoice[] = ['auto'];
  if (control.canTurnOff) out.push('off');
  out.push('on');
  if (control.kind === 'levels') out.push('low', 'medium', 'high');
  return out;
}

/**
 * What to send for a choice: nothing for `auto`, for a model without a control, and for `off`
 * where the upstream cannot be told off; a level on a switch-only family means on.
 */
export function thinkingRequest(
  control: ThinkingControl | undefined,
  choice: ThinkingChoice | undefined,
): ThinkingRequest | undefined {
  if (!control?.wire || !choice || choice === 'auto') return undefined;
  if (choice === 'off' && !control.canTurnOff) return undefined;
  const level: ThinkingLevel = control.kind === 'switch' && choice !== 'off' ? 'on' : choice;
  return { wire: control.wire, level };
}

/** Bailian refuses `enable_thinking: true` on a non-streamed call, so such a request is streamed. */
export function thinkingNeedsStream(thinking: ThinkingRequest | undefined): boolean {
  return thinking?.wire === 'qwenEnable' && thinking.level !== 'off';
}

/** Chat Completions body fields for a thinking request (none when the wire is another protocol's). */
export function completionsThinkingFields(
  thinking: ThinkingRequest | undefined,
  stream: boolean,
): Record<string, unknown> {
  if (!thinking) return {};
  const on = thinking.level !== 'off';
  switch (thinking.wire) {
    case 'glmThinking':
      return { thinking: { type: on ? 'enabled' : 'disabled' } };
    case 'qwenEnable': {
      // Never true on a non-streamed call (Bailian answers 400); streamChat streams such calls anyway.
      if (!on || !stream) return { enable_thinking: false };
      const budget = budgetOf(thinking.level);
      return { enable_thinking: true, ...(budget ? { thinking_budget: budget } : {}) };
    }
    case 'openaiEffort':
      if (thinking.level === 'off') return { reasoning_effort: 'none' };
      return thinking.level === 'on' ? {} : { reasoning_effort: thinking.level };
    default:
      return {};
  }
}

/**
 * The Responses `reasoning` object: an effort when one is chosen, and `summary: "auto"` whenever
 * thinking is on, since without it the answer carries no readable reasoning.
 */
export function responsesReasoning(thinking: ThinkingRequest | undefined): Record<string, unknown> | undefined {
  if (thinking?.wire !== 'openaiEffort') return undefined;
  if (thinking.level === 'off') return { effort: 'none' };
  return thinking.level === 'on' ? { summary: 'auto' } : { effort: thinking.level, summary: 'auto' };
}

/**
 * Anthropic's `thinking` and the `max_tokens` that goes with it. The budget counts toward
 * `max_tokens` and must stay below it, so the answer's own room (`maxTokens`) is kept and the
 * budget added on top, up to the model's output limit when known; when the limit leaves no room
 * for the 1024-token minimum, thinking is not turned on.
 */
export function messagesThinking(
  thinking: ThinkingRequest | undefined,
  maxTokens: number,
  modelMaxOutput?: number,
): { thinking?: Record<string, unknown>; maxTokens: number } {
  if (thinking?.wire !== 'anthropicBudget' || thinking.level === 'off') return { maxTokens };
  const wanted = budgetOf(thinking.level) ?? THINKING_BUDGETS.medium;
  const ceiling = modelMaxOutput && modelMaxOutput > 0 ? modelMaxOutput : Number.POSITIVE_INFINITY;
  const total = Math.min(maxTokens + wanted, ceiling);
  // At least half of what is left goes to the answer when the ceiling cuts in.
  const budget = Math.min(wanted, total - Math.max(1, Math.min(maxTokens, Math.floor(total / 2))));
  if (budget < ANTHROPIC_MIN_BUDGET) return { maxTokens };
  return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: total };
}

/** The budget of a depth level; plain `on` leaves Bailian's budget to the model (Anthropic needs one: medium). */
function budgetOf(level: ThinkingLevel): number | undefined {
  return level === 'low' || level === 'medium' || level === 'high' ? THINKING_BUDGETS[level] : undefined;
}

export function isThinkingChoice(value: unknown): value is ThinkingChoice {
  return typeof value === 'string' && (THINKING_CHOICES as readonly string[]).includes(value);
}
