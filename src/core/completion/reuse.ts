/**
 * Completions already shown, kept so that typing into one shows the rest of it without a new
 * request: VS Code's stable API calls the provider again on every keystroke and has no "forward
 * stability" (that flag is proposed API: vscode.proposed.inlineCompletionsAdditions.d.ts), so the
 * provider answers those calls from here, as llama.vscode and Continue do with their caches.
 *
 * An entry is found by the document and the offset where the completion started; it is still
 * valid when the text before that offset is unchanged (its last `ANCHOR` characters, compared) and
 * what was typed since is a start of the completion. Only those characters are read, so a lookup
 * costs the same in a long file.
 */

export interface ReuseEntry {
  document: string;
  offset: number;
  /** The text before `offset` when it was shown (its last ANCHOR characters). */
  anchor: string;
  /** The completion, in the document's line endings. */
  text: string;
}

const ANCHOR = 256;
const CAPACITY = 50;

/** Reads the document's text between two offsets (clamped to the document). */
export type ReadRange = (start: number, end: number) => string;

export class ReuseCache {
  private entries: ReuseEntry[] = [];

  /** Keeps a completion shown at `offset` of `document`. */
  remember(document: string, offset: number, text: string, read: ReadRange): void {
    if (!text) return;
    const entry = { document, offset, anchor: read(Math.max(0, offset - ANCHOR), offset), text };
    this.entries = [entry, ...this.entries.filter((e) => !(e.document === document && e.offset === offset))].slice(
      0,
      CAPACITY,
    );
  }

  /** The rest of a kept completion the user is typing into at `offset`, or undefined. */
  lookup(document: string, offset: number, read: ReadRange): string | undefined {
    for (const e of this.entries) {
      if (e.document !== document || offset < e.offset || offset - e.offset >= e.text.length) continue;
      const typed = read(e.offset, offset);
      if (!e.text.startsWith(typed)) continue;
      if (read(Math.max(0, e.offset - ANCHOR), e.offset) !== e.anchor) continue;
      return e.text.slice(typed.length);
    }
    return undefined;
  }

  /** Forgets the completions of a document (closed), or all. */
  forget(document?: string): void {
    this.entries = document === undefined ? [] : this.entries.filter((e) => e.document !== document);
  }
}
