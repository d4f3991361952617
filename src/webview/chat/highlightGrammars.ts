/**
 * highlight.js core with a handful of languages registered (the `common` build is ~8x larger), for
 * the highlighting worker. JavaScript is highlighted with the TypeScript grammar (a superset), which
 * saves its own 6 KB. Unknown languages are not auto-detected: their code stays plain.
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

const GRAMMARS = { typescript, python, json, bash, css, xml, markdown, go, rust, java, yaml, diff };
for (const [name, grammar] of Object.entries(GRAMMARS)) hljs.registerLanguage(name, grammar);
/** The registered languages, most used first (the order the worker compiles them in). */
export const GRAMMAR_NAMES: readonly string[] = Object.keys(GRAMMARS);
hljs.registerAliases(['javascript', 'js', 'jsx', 'mjs', 'cjs', 'node'], { languageName: 'typescript' });
hljs.registerAliases(['shell', 'console', 'shellsession'], { languageName: 'bash' });

export { hljs };
