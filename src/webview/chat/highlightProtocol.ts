/** What the page and its highlighting worker (highlightWorker.ts) say to each other. */
export interface HighlightRequest {
  id: number;
  code: string;
  /** A language name or alias the worker knows (HIGHLIGHT_LANGUAGES). */
  language: string;
}

/**
 * Sent once, first: the worker formats a number and a date in the page's display language. The
 * first use of Intl in a renderer loads ICU's locale data, 40–50 ms on a slow machine, and that
 * data is shared by the renderer's threads: done here, the page's first usage line does not wait.
 */
export interface WarmLocaleRequest {
  warmLocale: string;
}

export interface HighlightAnswer {
  id: number;
  /** Highlighted HTML in pieces, each up to `end` in the code; none: the code stays plain. */
  pieces: Array<{ html: string; end: number }>;
}

/** Every name and alias the worker registers, so the page asks only about languages it can highlight. */
export const HIGHLIGHT_LANGUAGES: ReadonlySet<string> = new Set([
  'typescript',
  'ts',
  'tsx',
  'mts',
  'cts',
  'javascript',
  'js',
  'jsx',
  'mjs',
  'cjs',
  'node',
  'python',
  'py',
  'gyp',
  'ipython',
  'json',
  'jsonc',
  'bash',
  'sh',
  'zsh',
  'shell',
  'console',
  'shellsession',
  'css',
  'xml',
  'html',
  'xhtml',
  'rss',
  'atom',
  'xjb',
  'xsd',
  'xsl',
  'plist',
  'wsf',
  'svg',
  'markdown',
  'md',
  'mkdown',
  'mkd',
  'go',
  'golang',
  'rust',
  'rs',
  'java',
  'jsp',
  'yaml',
  'yml',
  'diff',
  'patch',
]);
