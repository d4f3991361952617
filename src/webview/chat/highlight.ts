/**
 * highlight.js core with a handful of languages registered (the `common` build is ~8x larger).
 * JavaScript is highlighted with the TypeScript grammar (a superset), which saves its own 6 KB.
 * Unknown languages are not auto-detected: they render as plain, escaped text.
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

hljs.registerLanguage('typescript', typescript);
hljs.registerAliases(['javascript', 'js', 'jsx', 'mjs', 'cjs', 'node'], { languageName: 'typescript' });
hljs.registerLanguage('python', python);
hljs.registerLanguage('json', json);
hljs.registerLanguage('bash', bash);
hljs.registerAliases(['shell', 'console', 'shellsession'], { languageName: 'bash' });
hljs.registerLanguage('css', css);
hljs.registerLanguage('xml', xml);
hljs.registerLanguage('markdown', markdown);
hljs.registerLanguage('go', go);
hljs.registerLanguage('rust', rust);
hljs.registerLanguage('java', java);
hljs.registerLanguage('yaml', yaml);
hljs.registerLanguage('diff', diff);

/** The language name of a fence's info string ("ts {1,3}" → "ts"), lower-cased; "" when none. */
export function fenceLanguage(info: string): string {
  return (info.trim().split(/\s+/, 1)[0] ?? '').toLowerCase();
}

/**
 * Longer code is shown plain: highlighting (and sanitising the thousands of spans it makes) would
 * keep the page busy for a noticeable while, even in pieces.
 */
export const MAX_HIGHLIGHT_CHARS = 20_000;

/**
 * Code up to this long, in a language already used on the page, is highlighted as it is rendered
 * (well under a millisecond). Anything else is shown plain and highlighted afterwards in tasks of
 * their own (highlightLater): the first use of a language compiles its grammar (tens of
 * milliseconds on a slow machine), and a long block takes as long again per few thousand characters.
 */
const HIGHLIGHT_NOW_CHARS = 2_000;
/** A deferred block is highlighted in pieces of about this many characters, ending at a line end. */
const PIECE_CHARS = 2_000;
/** One task of deferred highlighting stops after this long (at least one piece), so frames keep coming. */
const TASK_BUDGET_MS = 8;

type Grammar = NonNullable<ReturnType<typeof hljs.getLanguage>>;
/** Grammars that were compiled (used once): highlighting with them now costs only the code's length. */
const compiled = new WeakSet<Grammar>();

function grammarFor(code: string, language: string): Grammar | undefined {
  if (!language || code.length > MAX_HIGHLIGHT_CHARS) return undefined;
  return hljs.getLanguage(language);
}

/** Highlighted HTML (hljs spans, text escaped) when that is cheap now; undefined: show it plain (see highlightLater). */
export function highlightCode(code: string, language: string): string | undefined {
  const grammar = grammarFor(code, language);
  if (!grammar || !compiled.has(grammar) || code.length > HIGHLIGHT_NOW_CHARS) return undefined;
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return undefined;
  }
}

/** Whether a plain code block in `language` gets highlighted later (highlightCode declined only for the cost). */
export function highlightsLater(code: string, language: string): boolean {
  const grammar = grammarFor(code, language);
  return grammar !== undefined && (!compiled.has(grammar) || code.length > HIGHLIGHT_NOW_CHARS);
}

/**
 * Compiles the grammars while the page is idle, one per idle period, so that the first code block
 * of a language does not pay for it in the middle of a stream. (A grammar compiles as a whole: the
 * TypeScript one is the largest single piece of work here.)
 */
export function warmGrammars(): void {
  const names = ['typescript', 'python', 'json', 'bash', 'xml', 'css', 'yaml', 'java', 'go', 'rust', 'markdown', 'diff'];
  const next = (): void => {
    const name = names.shift();
    if (name === undefined) return;
    const grammar = hljs.getLanguage(name);
    if (grammar && !compiled.has(grammar)) {
      try {
        hljs.highlight('', { language: name, ignoreIllegals: true });
        compiled.add(grammar);
      } catch {
        // A grammar that fails to compile fails again where it is used, and shows plain there.
      }
    }
    whenIdle(next);
  };
  whenIdle(next);
}

function whenIdle(fn: () => void): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(fn, { timeout: 2000 });
  else setTimeout(fn, 50);
}

interface Job {
  element: HTMLElement;
  code: string;
  language: string;
  /** Where the code not yet highlighted starts, and the text node that shows it. */
  done: number;
  rest?: Text;
}

const queue: Job[] = [];
let scheduled = false;

/**
 * Highlights a code element that shows `code` as plain text, piece by piece in tasks of their own
 * (setTimeout: they run between frames and never starve). Highlighted HTML goes through the
 * sanitiser like all rendered markdown. A piece ends at a line end where the grammar is back at its
 * top level, so highlighting pieces gives the same spans as highlighting the whole; an element that
 * left the page (re-rendered) or whose text changed is dropped.
 */
export function highlightLater(element: HTMLElement, code: string, language: string, sanitize: (html: string) => DocumentFragment): void {
  queue.push({ element, code, language, done: 0 });
  if (!scheduled) {
    scheduled = true;
    setTimeout(() => runJobs(sanitize));
  }
}

function runJobs(sanitize: (html: string) => DocumentFragment): void {
  scheduled = false;
  const started = performance.now();
  let pieces = 0;
  while (queue.length && (pieces === 0 || performance.now() - started < TASK_BUDGET_MS)) {
    const job = queue[0] as Job;
    if (!job.element.isConnected || (job.rest === undefined && job.element.textContent !== job.code) || !highlightPiece(job, sanitize)) queue.shift();
    pieces++;
  }
  if (queue.length) {
    scheduled = true;
    setTimeout(() => runJobs(sanitize));
  }
}

/** Highlights the next piece of a job; false when the job is finished (or failed: the rest stays plain). */
function highlightPiece(job: Job, sanitize: (html: string) => DocumentFragment): boolean {
  const grammar = hljs.getLanguage(job.language);
  if (!grammar) return false;
  if (!job.rest) {
    job.rest = document.createTextNode(job.code);
    job.element.replaceChildren(job.rest);
  }
  let end = job.done;
  let result: ReturnType<typeof hljs.highlight> | undefined;
  try {
    // Grow the piece until it ends at the grammar's top level (not inside a comment or string).
    do {
      const newline = job.code.indexOf('\n', Math.min(job.code.length, end + PIECE_CHARS));
      end = newline < 0 ? job.code.length : newline + 1;
      result = hljs.highlight(job.code.slice(job.done, end), { language: job.language, ignoreIllegals: true });
      compiled.add(grammar);
    } while (end < job.code.length && result._top !== grammar);
  } catch {
    return false;
  }
  job.rest.before(sanitize(result.value));
  job.done = end;
  job.rest.data = job.code.slice(end);
  return end < job.code.length;
}
