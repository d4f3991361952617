/**
 * The chat page asks its highlighting worker only about the languages in HIGHLIGHT_LANGUAGES (it
 * cannot ask highlight.js itself, which lives in the worker): that list must be exactly the names
 * and aliases the worker registers.
 */
import assert from 'node:assert/strict';
import { hljs } from '../../src/webview/chat/highlightGrammars';
import { HIGHLIGHT_LANGUAGES } from '../../src/webview/chat/highlightProtocol';

describe('Chat highlighting languages', () => {
  it('the page knows exactly the names and aliases the worker registers', () => {
    const registered = new Set<string>();
    for (const name of hljs.listLanguages()) {
      registered.add(name);
      for (const alias of hljs.getLanguage(name)?.aliases ?? []) registered.add(alias.toLowerCase());
    }
    assert.deepEqual(
      [...registered].filter((name) => !HIGHLIGHT_LANGUAGES.has(name)),
      [],
      'registered, not listed',
    );
    // Aliases added with registerAliases are not listed by highlight.js: every listed name must resolve.
    assert.deepEqual(
      [...HIGHLIGHT_LANGUAGES].filter((name) => !hljs.getLanguage(name)),
      [],
      'listed, not registered',
    );
  });
});
