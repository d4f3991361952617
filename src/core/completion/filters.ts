import type { CompletionPrompt } from './prompt';

/**
 * What is kept of a model's completion: the part that repeats the text after the cursor is trimmed,
 * and a completion is dropped when nothing useful is left (only whitespace, a repeat of the line
 * above or of what follows the cursor, or brackets it closes that were never opened). Continue's
 * autocomplete post-processing drops the same kinds (continuedev/continue
 * core/autocomplete/postprocessing/index.ts).
 */

/** One line, or lines, as the request asked: a one-line request keeps its first line only. */
export function toRequestedSize(text: string, multiline: boolean): string {
  if (multiline) return text.replace(/\n+$/, '');
  const end = text.indexOf('\n');
  return end < 0 ? text : text.slice(0, end);
}

/**
 * `completion` without its end that the text after the cursor already has: the longest end of the
 * completion that is a start of the suffix (e.g. `)` when the cursor sits before `)`). For one line,
 * the rest of the cursor's line is what counts.
 */
export function trimOverlap(completion: string, after: string): string {
  const max = Math.min(completion.length, after.length);
  for (let k = max; k > 0; k--) {
    if (completion.endsWith(after.slice(0, k))) return completion.slice(0, completion.length - k);
  }
  return completion;
}

export type DropReason = 'empty' | 'repeatsSuffix' | 'repeatsLineAbove' | 'unbalanced';

/** The completion to show, or why none is. */
export function finalCompletion(
  raw: string,
  prompt: Pick<CompletionPrompt, 'multiline' | 'linePrefix' | 'lineSuffix' | 'suffix' | 'lineAbove' | 'prefix'>,
): { text: string } | { dropped: DropReason } {
  const sized = toRequestedSize(raw, prompt.multiline);
  const text = trimOverlap(sized, prompt.multiline ? prompt.suffix : prompt.lineSuffix);
  if (!text.trim()) return { dropped: 'empty' };
  const first = (text.split('\n')[0] ?? '').trim();
  const next = prompt.suffix
    .slice(prompt.lineSuffix.length)
    .split('\n')
    .find((l) => l.trim())
    ?.trim();
  const whole = `${prompt.linePrefix}${text}`.trim();
  if (next !== undefined && (first === next || whole === next)) return { dropped: 'repeatsSuffix' };
  const above = prompt.lineAbove?.trim();
  if (above && above.length > 3 && (first === above || whole === above)) return { dropped: 'repeatsLineAbove' };
  if (!bracketsFit(prompt.prefix, text, prompt.multiline ? '' : prompt.lineSuffix)) return { dropped: 'unbalanced' };
  return { text };
}

const CLOSER: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/**
 * Whether the completion's brackets fit: each one it closes is the innermost one open before it
 * (in the prefix or in itself), and for one line, what it opens is closed by the end of the line.
 * Brackets inside string literals of the completion are not counted.
 */
export function bracketsFit(prefix: string, completion: string, restOfLine: string): boolean {
  const open = openBrackets(prefix);
  const before = open.length;
  let quote: string | undefined;
  for (let i = 0; i < completion.length; i++) {
    const c = completion[i] as string;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') open.push(c);
    else if (c in CLOSER && open.pop() !== CLOSER[c]) return false;
  }
  if (restOfLine === '' || open.length <= before) return true;
  // A one-line completion mid-line: the rest of the line has to close what it opened.
  let needed = open.length - before;
  for (const c of restOfLine) {
    if (c in CLOSER) needed--;
    else if (c === '(' || c === '[' || c === '{') needed++;
  }
  return needed <= 0;
}

/** The brackets still open at the end of `text` (string literals skipped on a best-effort basis). */
function openBrackets(text: string): string[] {
  const open: string[] = [];
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote || (c === '\n' && quote !== '`')) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') open.push(c);
    else if (c in CLOSER && open[open.length - 1] === CLOSER[c]) open.pop();
  }
  return open;
}
