/**
 * The text around the cursor that a completion request shows the model, within a token budget.
 * Only the lines near the cursor are read (through `DocumentLines`), never the whole file, so a
 * 2,000-line file costs what a 20-line one does. Lines are joined with `\n` whatever the file uses
 * (a CRLF file's `\r` never reaches the prompt); the completion is turned back into the file's line
 * ending when it is inserted (`toEol`).
 */

/** A document as lines without their line ending (VS Code's `TextDocument.lineAt(i).text`). */
export interface DocumentLines {
  lineCount: number;
  lineAt(line: number): string;
}

/** The lines of a text, whichever line endings it uses (for tests and for files read from disk). */
export function linesOf(text: string): DocumentLines {
  const lines = text.split(/\r\n|\r|\n/);
  return { lineCount: lines.length, lineAt: (i) => lines[i] ?? '' };
}

/**
 * A rough token count: about four ASCII characters per token, one per other character (a CJK
 * character is usually one token or more). Rough on purpose: it only keeps a request within its
 * budget, and counts a little high rather than low. A surrogate pair counts as one character.
 */
export function tokenEstimate(text: string): number {
  let units = 0;
  for (let i = 0; i < text.length; i++) units += unitCost(text.charCodeAt(i));
  return Math.ceil(units / 4);
}

/** The cost of one UTF-16 code unit in quarter tokens: a surrogate half is half a character. */
function unitCost(code: number): number {
  if (code < 0x80) return 1;
  return code >= 0xd800 && code <= 0xdfff ? 2 : 4;
}

/** The longest end of `text` within `tokens`, never starting inside a surrogate pair. */
export function keepEnd(text: string, tokens: number): string {
  let units = 0;
  let i = text.length;
  while (i > 0 && units + unitCost(text.charCodeAt(i - 1)) <= tokens * 4) units += unitCost(text.charCodeAt(--i));
  if (i < text.length && isLowSurrogate(text.charCodeAt(i))) i++;
  return text.slice(i);
}

/** The longest start of `text` within `tokens`, never ending inside a surrogate pair. */
export function keepStart(text: string, tokens: number): string {
  let units = 0;
  let i = 0;
  while (i < text.length && units + unitCost(text.charCodeAt(i)) <= tokens * 4) units += unitCost(text.charCodeAt(i++));
  if (i > 0 && i < text.length && isHighSurrogate(text.charCodeAt(i - 1))) i--;
  return text.slice(0, i);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export interface CursorWindow {
  /** The text before the cursor that fits (whole lines above the cursor's line, then its start). */
  prefix: string;
  /** The text after the cursor that fits (the rest of its line, then whole lines below). */
  suffix: string;
  /** The cursor's line up to the cursor, and after it, uncut. */
  linePrefix: string;
  lineSuffix: string;
  /** The nearest line above with text in it, if any within the window. */
  lineAbove?: string;
}

/**
 * The window around (`line`, `character`): up to `prefixTokens` before and `suffixTokens` after.
 * Whole lines are taken outward from the cursor until the next would not fit; a cursor line longer
 * than the budget is cut (on its far side) at a character boundary.
 */
export function cursorWindow(
  doc: DocumentLines,
  line: number,
  character: number,
  budget: { prefixTokens: number; suffixTokens: number },
): CursorWindow {
  const text = doc.lineAt(line);
  const linePrefix = text.slice(0, character);
  const lineSuffix = text.slice(character);
  const before = [keepEnd(linePrefix, budget.prefixTokens)];
  let used = tokenEstimate(before[0] as string);
  let lineAbove: string | undefined;
  // A cursor line cut short has no room for the lines above it.
  const wholeLine = before[0] === linePrefix;
  for (let i = line - 1; i >= 0 && wholeLine; i--) {
    const l = doc.lineAt(i);
    const cost = tokenEstimate(l) + 1;
    if (used + cost > budget.prefixTokens) break;
    used += cost;
    before.unshift(l);
    if (lineAbove === undefined && l.trim()) lineAbove = l;
  }
  const after = [keepStart(lineSuffix, budget.suffixTokens)];
  used = tokenEstimate(after[0] as string);
  if (after[0] === lineSuffix) {
    for (let i = line + 1; i < doc.lineCount; i++) {
      const l = doc.lineAt(i);
      const cost = tokenEstimate(l) + 1;
      if (used + cost > budget.suffixTokens) break;
      used += cost;
      after.push(l);
    }
  }
  return {
    prefix: before.join('\n'),
    suffix: after.join('\n'),
    linePrefix,
    lineSuffix,
    ...(lineAbove !== undefined ? { lineAbove } : {}),
  };
}

/** `text` (lines joined with `\n`) with the line ending `eol`. */
export function toEol(text: string, eol: '\n' | '\r\n'): string {
  return eol === '\n' ? text : text.replace(/\r?\n/g, eol);
}
