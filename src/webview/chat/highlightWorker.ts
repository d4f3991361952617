/**
 * The chat page's highlighting worker (bundled as text into the page's script and started from a
 * blob: URL, see highlight.ts), with the languages of highlightGrammars.ts. Compiling a grammar is
 * one synchronous step of tens of milliseconds (TypeScript's the largest) and a long block takes as
 * long again per few thousand characters: here neither holds up the page's frames.
 *
 * Request: { id, code, language }. Answer: { id, pieces } — the highlighted HTML (hljs spans, text
 * escaped) in pieces that each end at a line end where the grammar is back at its top level, so the
 * page can insert them one by one and the result has the same spans as highlighting the whole;
 * `pieces` is empty when the language is unknown or highlighting failed (the code stays plain).
 */
import { hljs, GRAMMAR_NAMES } from './highlightGrammars';
import type { HighlightAnswer, HighlightRequest, WarmLocaleRequest } from './highlightProtocol';

/** A piece is at least about this many characters (ending at a line end), so the page inserts a few thousand spans at most at once. */
const PIECE_CHARS = 2_000;

function highlight(code: string, language: string): HighlightAnswer['pieces'] {
  const grammar = hljs.getLanguage(language);
  if (!grammar) return [];
  const pieces: HighlightAnswer['pieces'] = [];
  let done = 0;
  try {
    while (done < code.length) {
      let end = done;
      let result: ReturnType<typeof hljs.highlight>;
      // Grow the piece until it ends at the grammar's top level (not inside a comment or string).
      do {
        const newline = code.indexOf('\n', Math.min(code.length, end + PIECE_CHARS));
        end = newline < 0 ? code.length : newline + 1;
        result = hljs.highlight(code.slice(done, end), { language, ignoreIllegals: true });
      } while (end < code.length && result._top !== grammar);
      pieces.push({ html: result.value, end });
      done = end;
    }
  } catch {
    return [];
  }
  return pieces;
}

// Requests are answered in order; a grammar still to be compiled is compiled by its first request.
// Once the page is quiet, the rest are compiled too, one per task, so a request never waits long.
const warm = [...GRAMMAR_NAMES];
function warmNext(): void {
  const name = warm.shift();
  if (name === undefined) return;
  try {
    hljs.highlight('', { language: name, ignoreIllegals: true });
  } catch {
    // A grammar that fails to compile fails again where it is used, and its code stays plain.
  }
  setTimeout(warmNext);
}
setTimeout(warmNext);

/** Loads ICU's data for `tag` (see WarmLocaleRequest); what is formatted is thrown away. */
function warmLocale(tag: string): void {
  try {
    Intl.NumberFormat.supportedLocalesOf([tag]);
    new Intl.NumberFormat(tag, { maximumFractionDigits: 1 }).format(1234.5);
    new Date(0).toLocaleDateString(tag);
  } catch {
    // An unknown tag: the page falls back to English, which the attempt has loaded too.
  }
}

self.addEventListener('message', (event: MessageEvent<HighlightRequest | WarmLocaleRequest>) => {
  if ('warmLocale' in event.data) {
    warmLocale(event.data.warmLocale);
    return;
  }
  const { id, code, language } = event.data;
  const answer: HighlightAnswer = { id, pieces: highlight(code, language) };
  self.postMessage(answer);
});
