import { cursorWindow, keepStart, tokenEstimate, type DocumentLines } from './window';

/**
 * What a completion request shows the model: a header naming the file and its language, snippets
 * of files the user recently edited or opened (as comments, the form Continue's autocomplete uses:
 * https://docs.continue.dev/features/autocomplete/context-selection), then the text before and
 * after the cursor. The whole never exceeds the budget (by `tokenEstimate`).
 */

/** A piece of another workspace file, newest first in the list given. */
export interface Snippet {
  /** The path relative to its workspace folder, with `/`. */
  path: string;
  text: string;
}

export interface PromptInput {
  doc: DocumentLines;
  line: number;
  character: number;
  /** The file's path relative to its workspace folder, with `/`. */
  path: string;
  /** VS Code's language id. */
  language: string;
  snippets: readonly Snippet[];
  /** The most tokens the prompt may have (header, snippets, prefix and suffix together). */
  budget: number;
}

export interface CompletionPrompt {
  /** The file header and the snippets, as comments of the file's language, ending in a newline (or empty). */
  header: string;
  prefix: string;
  suffix: string;
  linePrefix: string;
  lineSuffix: string;
  lineAbove?: string;
  /** Several lines are asked for (an empty line or the start of a block), else the rest of one. */
  multiline: boolean;
  language: string;
  path: string;
}

/** Shares of the budget: the suffix and the snippets each take at most this much; the prefix the rest. */
const SUFFIX_SHARE = 0.2;
const SNIPPET_SHARE = 0.25;
/** Lines of one snippet at most: its text around where the user was. */
const SNIPPET_LINES = 40;

export const DEFAULT_PROMPT_BUDGET = 1536;

export function buildPrompt(input: PromptInput): CompletionPrompt {
  const comment = lineComment(input.language);
  const fileHeader = comment ? `${comment} Path: ${input.path}\n${comment} Language: ${input.language}\n` : '';
  const suffixTokens = Math.floor(input.budget * SUFFIX_SHARE);
  const snippetText = comment
    ? snippetBlock(input.snippets, input.path, comment, Math.floor(input.budget * SNIPPET_SHARE))
    : '';
  const header = snippetText + fileHeader;
  // Each join between pieces may add a token in the estimate's rounding: one spare per piece.
  const prefixTokens = Math.max(0, input.budget - tokenEstimate(header) - suffixTokens - 3);
  const window = cursorWindow(input.doc, input.line, input.character, { prefixTokens, suffixTokens });
  return {
    header,
    ...window,
    multiline: wantsSeveralLines(window.linePrefix, window.lineSuffix),
    language: input.language,
    path: input.path,
  };
}

/**
 * Several lines at an empty line or where a block starts (the line ends in an opener), one line
 * mid-line or after text that does not open a block: what Continue's `shouldCompleteMultiline` and
 * Copilot do too.
 */
export function wantsSeveralLines(linePrefix: string, lineSuffix: string): boolean {
  if (lineSuffix.trim() && !/^[\s)\]}'"`;,]*$/.test(lineSuffix)) return false;
  const before = linePrefix.trimEnd();
  return before === '' || /([{([:]|=>|\b(then|do|else|begin))$/.test(before);
}

/** The snippets as comments, newest first, as many as fit; the current file's own never. */
function snippetBlock(snippets: readonly Snippet[], own: string, comment: string, tokens: number): string {
  let out = '';
  let used = 0;
  for (const s of snippets) {
    if (s.path === own || !s.text.trim()) continue;
    const lines = s.text.split(/\r\n|\r|\n/).slice(0, SNIPPET_LINES);
    let block = `${comment} From ${s.path}:\n${lines.map((l) => `${comment} ${l}`).join('\n')}\n`;
    let cost = tokenEstimate(block);
    if (used + cost > tokens) {
      // The start of the block that fits, cut at a line end, if it holds more than the title.
      const cut = keepStart(block, tokens - used);
      block = cut.slice(0, cut.lastIndexOf('\n') + 1);
      if (block.split('\n').length < 3) break;
      cost = tokenEstimate(block);
    }
    out += block;
    used += cost;
  }
  return out;
}

const COMMENTS: Array<[string, readonly string[]]> = [
  [
    '//',
    [
      'c',
      'cpp',
      'csharp',
      'dart',
      'go',
      'groovy',
      'java',
      'javascript',
      'javascriptreact',
      'typescript',
      'typescriptreact',
      'kotlin',
      'objective-c',
      'objective-cpp',
      'php',
      'rust',
      'scala',
      'swift',
      'zig',
      'jsonc',
      'vue',
      'svelte',
    ],
  ],
  [
    '#',
    [
      'python',
      'ruby',
      'perl',
      'r',
      'shellscript',
      'powershell',
      'yaml',
      'toml',
      'dockerfile',
      'makefile',
      'elixir',
      'julia',
      'nim',
      'coffeescript',
    ],
  ],
  ['--', ['sql', 'lua', 'haskell', 'elm']],
  [';', ['clojure', 'scheme', 'lisp', 'ini']],
  ['%', ['latex', 'tex', 'erlang', 'matlab']],
];

/** The language's line comment, or undefined for one without (Markdown, plain text, HTML, JSON). */
export function lineComment(language: string): string | undefined {
  return COMMENTS.find(([, ids]) => ids.includes(language))?.[0];
}
