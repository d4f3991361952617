/**
 * Incremental rendering of one markdown text (an answer or its reasoning).
 *
 * The text is split into top-level blocks (blockSplitter.ts). A finished block is rendered once into
 * its own element and never touched again; each update re-renders only the tail block. While the
 * tail is an unclosed code fence, its code is shown as plain text and only the new characters are
 * appended, so even one huge code block streams at a flat cost; it is highlighted once it closes.
 */
import { BlockSplitter } from './blockSplitter';
import { fenceLanguage } from './highlight';
import { codeBlock, renderMarkdownBlocks, type RenderOptions } from './markdown';
import { h } from '../shared/dom';

interface StreamingCode {
  /** Where the fence's code starts in the source. */
  bodyStart: number;
  /** How many characters of the code are shown. */
  shown: number;
  code: HTMLElement;
  /** The block-level piece of the code that new text goes into, and its number of lines. */
  piece: HTMLElement;
  pieceLines: number;
}

/**
 * Streaming code is shown in block-level pieces of this many lines: each is its own inline layout,
 * so appending text re-lays out one piece, not the whole (possibly huge) code block.
 */
const LINES_PER_PIECE = 64;

/**
 * Finished blocks are grouped into chunks of this many; a chunk outside the viewport skips style,
 * layout and paint (`content-visibility: auto` in chat.css). Grouping keeps the browser's per-frame
 * visibility check proportional to the number of chunks, not of blocks.
 */
const BLOCKS_PER_CHUNK = 24;

export class MarkdownView {
  readonly el: HTMLElement;
  private source = '';
  private splitter = new BlockSplitter();
  /** Elements of the finished blocks, in order. */
  private blocks: HTMLElement[] = [];
  private chunk: HTMLElement | undefined;
  private tail: HTMLElement | undefined;
  /** The source last rendered into `tail` through markdown-it (undefined: plain streaming code). */
  private tailSource: string | undefined;
  private streamingCode: StreamingCode | undefined;

  constructor(
    private options: RenderOptions,
    className = 'md',
  ) {
    this.el = h('div', { className });
  }

  /** Shows `text`. `streaming`: more text may follow (an open fence may then be shown as plain code). */
  update(text: string, streaming: boolean): void {
    if (!text.startsWith(this.source)) this.reset();
    this.source = text;
    this.splitter.feed(text);

    const ends = this.splitter.ends;
    // Blocks finished since the last update (all of them when a finished answer is first shown) are
    // rendered together.
    const sources: string[] = [];
    for (let index = this.blocks.length; index < ends.length; index++)
      sources.push(text.slice(index === 0 ? 0 : (ends[index - 1] as number), ends[index] as number));
    const tailStart = this.splitter.tailStart;
    const tailText = text.slice(tailStart);
    const fence = streaming ? this.splitter.openFenceBody() : undefined;
    // The tail, when it is rendered through markdown-it, goes with them.
    const tailRendered = tailText.trim() !== '' && !fence && (sources.length > 0 || tailText !== this.tailSource);
    const rendered = renderMarkdownBlocks(tailRendered ? [...sources, tailText] : sources, this.options);
    const tailNodes = tailRendered ? rendered.pop() : undefined;
    for (const nodes of rendered) {
      // The old tail becomes the first finished block: it keeps its element, rendered one last time.
      const el = this.tail ?? h('div', { className: 'md-block' });
      this.tail = undefined;
      this.tailSource = undefined;
      this.streamingCode = undefined;
      el.replaceChildren(nodes);
      if (!this.chunk || this.blocks.length % BLOCKS_PER_CHUNK === 0) {
        this.chunk = h('div', { className: 'md-chunk' });
        this.el.insertBefore(this.chunk, el.parentNode === this.el ? el : null);
      }
      this.chunk.append(el);
      this.blocks.push(el);
    }

    if (tailText.trim() === '') {
      this.tail?.remove();
      this.tail = undefined;
      this.tailSource = undefined;
      this.streamingCode = undefined;
      return;
    }
    if (!this.tail) {
      this.tail = h('div', { className: 'md-block' });
      this.el.append(this.tail);
    }
    if (fence) {
      this.showStreamingCode(text, fence.bodyStart, fence.info);
    } else if (tailNodes) {
      this.streamingCode = undefined;
      this.tailSource = tailText;
      this.tail.replaceChildren(tailNodes);
    }
  }

  /** Forgets everything rendered (the text was replaced, or rendering options changed). */
  reset(options: RenderOptions = this.options): void {
    this.options = options;
    this.source = '';
    this.splitter = new BlockSplitter();
    this.blocks = [];
    this.chunk = undefined;
    this.tail = undefined;
    this.tailSource = undefined;
    this.streamingCode = undefined;
    this.el.replaceChildren();
  }

  private showStreamingCode(text: string, bodyStart: number, info: string): void {
    const tail = this.tail as HTMLElement;
    let streaming = this.streamingCode;
    if (!streaming || streaming.bodyStart !== bodyStart) {
      const piece = h('span', { className: 'code-piece' });
      const code = h('code', { className: 'hljs' }, piece);
      const pre = h('pre', {}, code);
      tail.replaceChildren(codeBlock(fenceLanguage(info), pre));
      streaming = { bodyStart, shown: 0, code, piece, pieceLines: 0 };
      this.streamingCode = streaming;
      this.tailSource = undefined;
    }
    let body = text.length > bodyStart ? text.slice(bodyStart + streaming.shown) : '';
    streaming.shown += body.length;
    while (body) {
      if (streaming.pieceLines >= LINES_PER_PIECE) {
        streaming.piece = h('span', { className: 'code-piece' });
        streaming.pieceLines = 0;
        streaming.code.append(streaming.piece);
      }
      // Take text up to the newline that fills the current piece (or all of it).
      let end = 0;
      while (streaming.pieceLines < LINES_PER_PIECE) {
        const newline = body.indexOf('\n', end);
        if (newline < 0) {
          end = body.length;
          break;
        }
        end = newline + 1;
        streaming.pieceLines++;
      }
      streaming.piece.append(body.slice(0, end));
      body = body.slice(end);
    }
  }
}
