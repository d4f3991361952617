/**
 * Splits streaming markdown into top-level blocks so that finished blocks are rendered once and only
 * the last (tail) block is re-rendered as text arrives.
 *
 * Rules (fence-aware, looking only at complete lines):
 * - a blank line outside a code fence, followed by a line that starts in column 0 with a non-space
 *   character, ends the block before that line. An indented line after a blank line continues the
 *   block (a list item's second paragraph, an indented code block), so it is not split;
 * - a fence (``` or ~~~, indented at most three spaces) keeps the block open until its closing fence,
 *   whatever blank lines it contains;
 * - a block that *starts* with a fence ends right after the closing fence (nothing can continue a
 *   fenced code block), so a long code block is committed as soon as it is complete.
 *
 * Known limit: reference-style link definitions (`[x]: https://…`) only apply inside their own block.
 *
 * The splitter is incremental: `feed` only scans the lines added since the last call, so its cost per
 * delta does not grow with the length of the message.
 */

interface OpenFence {
  char: string;
  length: number;
  /** The fence is the first content of its block (see `openFenceBody`). */
  atBlockStart: boolean;
  /** Offset just after the opening fence line. */
  bodyStart: number;
  info: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const BLANK = /^[ \t]*$/;

export class BlockSplitter {
  /** End offsets of the finished blocks; block i spans [ends[i-1] ?? 0, ends[i]). Only grows. */
  readonly ends: number[] = [];
  /** Start of the first line not scanned yet (lines are scanned once they end with "\n"). */
  private scanned = 0;
  private fence: OpenFence | undefined;
  /** The current block has a non-blank line. */
  private hasContent = false;
  /** A blank line (outside a fence) followed the current block's content. */
  private blankAfterContent = false;

  /** Start offset of the current (unfinished) block. */
  get tailStart(): number {
    return this.ends.length > 0 ? (this.ends[this.ends.length - 1] as number) : 0;
  }

  /**
   * When the current block is an unclosed fence that starts the block: where its code begins and its
   * info string. The renderer then shows the code as plain text and only appends to it.
   */
  openFenceBody(): { bodyStart: number; info: string } | undefined {
    const fence = this.fence;
    return fence?.atBlockStart ? { bodyStart: fence.bodyStart, info: fence.info } : undefined;
  }

  /** Scans the complete lines of `text` not scanned yet. `text` must extend the text of earlier calls. */
  feed(text: string): void {
    let pos = this.scanned;
    for (;;) {
      const newline = text.indexOf('\n', pos);
      if (newline < 0) break;
      this.scanLine(text, pos, newline);
      pos = newline + 1;
    }
    this.scanned = pos;
  }

  private scanLine(text: string, start: number, newline: number): void {
    let line = text.slice(start, newline);
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const next = newline + 1;

    const fence = this.fence;
    if (fence) {
      const close = FENCE_CLOSE.exec(line);
      const marker = close?.[1];
      if (marker && marker[0] === fence.char && marker.length >= fence.length) {
        this.fence = undefined;
        if (fence.atBlockStart) this.commit(next);
      }
      return;
    }

    if (BLANK.test(line)) {
      if (this.hasContent) this.blankAfterContent = true;
      return;
    }
    if (this.blankAfterContent && line[0] !== ' ' && line[0] !== '\t') this.commit(start);

    const open = FENCE_OPEN.exec(line);
    const marker = open?.[1];
    const info = open?.[2] ?? '';
    // A backtick fence's info string may not contain backticks (that is inline code).
    if (marker && !(marker[0] === '`' && info.includes('`'))) {
      this.fence = {
        char: marker[0] as string,
        length: marker.length,
        atBlockStart: !this.hasContent,
        bodyStart: next,
        info: info.trim(),
      };
    }
    this.hasContent = true;
  }

  private commit(end: number): void {
    if (end > this.tailStart) this.ends.push(end);
    this.hasContent = false;
    this.blankAfterContent = false;
  }
}

/** All blocks of a complete text (the last one included), for tests and one-shot rendering. */
export function splitBlocks(text: string): string[] {
  const splitter = new BlockSplitter();
  splitter.feed(text);
  const blocks: string[] = [];
  let start = 0;
  for (const end of splitter.ends) {
    blocks.push(text.slice(start, end));
    start = end;
  }
  if (start < text.length) blocks.push(text.slice(start));
  return blocks;
}
