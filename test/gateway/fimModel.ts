import type { ModelSpec } from './types';

/**
 * The double's stand-in for a code model filling in the middle. It completes deterministically so
 * that tests can predict the text: the last `[[fim:TEXT]]` marker before the cursor names what it
 * answers (`\n` in TEXT is a line break), else it answers `done(); // <model>`. Chat models asked to
 * fill a hole (`<FILL_HERE>`, completion through chat) answer the same text inside a Markdown fence,
 * as chat models do.
 */

export const FIM_TOKENS = { prefix: '<|fim_prefix|>', suffix: '<|fim_suffix|>', middle: '<|fim_middle|>' } as const;
export const HOLE = '<FILL_HERE>';

/** How the model's upstream takes a FIM request, or why it refuses one. */
export type FimForm = 'suffix' | 'tokens' | 'none';

/**
 * DeepSeek's channel takes `prompt` + `suffix` (its chat model, not the reasoner); Bailian's Qwen coder
 * models read FIM tokens in `prompt`; every other model has no FIM.
 */
export function fimForm(model: ModelSpec): FimForm {
  if (model.owned_by === 'deepseek' && !/r1|reasoner/i.test(model.id)) return 'suffix';
  if (model.owned_by === 'ali' && /coder/i.test(model.id)) return 'tokens';
  return 'none';
}

/**
 * The middle the double's model writes after `prefix`. Nothing once the prefix already ends with the
 * marker's text, as a model writes nothing more where its completion was just accepted (else the
 * editor asks again after Tab and is offered the same text a second time).
 */
export function middleFor(model: string, prefix: string): string {
  const markers = [...prefix.matchAll(/\[\[fim:(.*?)\]\]/g)];
  const last = markers[markers.length - 1]?.[1];
  if (last === undefined) return `done(); // ${model}`;
  const text = last.replace(/\\n/g, '\n');
  return prefix.trimEnd().endsWith(text.trimEnd()) && text.trim() ? '' : text;
}

/** A chat model's answer to a hole-filling request, or undefined when the prompt has no hole. */
export function holeAnswer(model: string, prompt: string): string | undefined {
  const at = prompt.indexOf(HOLE);
  if (at < 0) return undefined;
  return `\`\`\`\n${middleFor(model, prompt.slice(0, at))}\n\`\`\``;
}
