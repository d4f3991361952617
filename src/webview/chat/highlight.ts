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
 * block the page for a noticeable moment, once, when such a block completes.
 */
export const MAX_HIGHLIGHT_CHARS = 20_000;

/** Highlighted HTML (hljs spans, text escaped) for a known language, or undefined. */
export function highlightCode(code: string, language: string): string | undefined {
  if (!language || code.length > MAX_HIGHLIGHT_CHARS || !hljs.getLanguage(language)) return undefined;
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return undefined;
  }
}
