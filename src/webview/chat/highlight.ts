/**
 * Code highlighting, done by a Web Worker (highlightWorker.ts) so that neither compiling a grammar
 * (one synchronous step of tens of milliseconds, TypeScript's the largest) nor highlighting a long
 * block ever runs on the page's main thread. Code is rendered plain and highlighted when the
 * worker's answer comes (usually within a frame); the answer is kept, so rendering the same code
 * again (the streaming tail re-rendered, a re-render for new options) highlights it at once.
 *
 * VS Code webviews run workers only from blob: or data: URLs, not from the extension's files
 * (https://code.visualstudio.com/api/extension-guides/webview#using-web-workers): the worker's
 * bundle is part of this script as text (esbuild.js, `?worker` imports) and started from a blob:
 * URL, which the page's CSP allows with `worker-src blob:` (webviewShell.ts). Without a worker
 * (none could be started) code stays plain: readable, only not coloured.
 *
 * Unknown languages are not auto-detected: they render as plain, escaped text.
 */
import workerSource from './highlightWorker?worker';
import {
  HIGHLIGHT_LANGUAGES,
  type HighlightAnswer,
  type HighlightRequest,
  type WarmLocaleRequest,
} from './highlightProtocol';

/** The language name of a fence's info string ("ts {1,3}" → "ts"), lower-cased; "" when none. */
export function fenceLanguage(info: string): string {
  return (info.trim().split(/\s+/, 1)[0] ?? '').toLowerCase();
}

/**
 * Longer code is shown plain: inserting the thousands of spans its highlighting makes (and
 * sanitising them) would keep the page busy for a noticeable while, even in pieces.
 */
export const MAX_HIGHLIGHT_CHARS = 20_000;

/** One task of inserting highlighted pieces stops after this long (at least one piece), so frames keep coming. */
const TASK_BUDGET_MS = 8;

/** Highlighted code kept for rendering it again: up to this many characters of HTML in all. */
const KEPT_CHARS = 2_000_000;

/**
 * Code up to this long that was highlighted before is highlighted again as it is rendered (its
 * HTML sanitised with the rest of the block: well under a millisecond); longer code is shown plain
 * and its kept pieces inserted in tasks of their own (highlightLater).
 */
const HIGHLIGHT_NOW_CHARS = 2_000;

type Sanitize = (html: string) => DocumentFragment;

/** The worker's answers by `language\ncode`, oldest first (a Map iterates in insertion order). */
const kept = new Map<string, HighlightAnswer['pieces']>();
let keptChars = 0;

/** Elements waiting for an answer, by request id. */
interface Pending {
  key: string;
  waiting: Array<{ element: HTMLElement; sanitize: Sanitize }>;
}
const pending = new Map<number, Pending>();
const pendingByKey = new Map<string, Pending>();
let nextId = 1;

let worker: Worker | undefined;
/** No worker could be started (or it failed): code stays plain. */
let noWorker = false;

function keyOf(code: string, language: string): string {
  return `${language}\n${code}`;
}

function wanted(code: string, language: string): boolean {
  return language !== '' && code.length <= MAX_HIGHLIGHT_CHARS && HIGHLIGHT_LANGUAGES.has(language);
}

/** Highlighted HTML (hljs spans, text escaped) of code highlighted before; undefined: show it plain (see highlightLater). */
export function highlightCode(code: string, language: string): string | undefined {
  if (!wanted(code, language) || code.length > HIGHLIGHT_NOW_CHARS) return undefined;
  const key = keyOf(code, language);
  const pieces = kept.get(key);
  if (pieces === undefined) return undefined;
  // Used again: it becomes the newest.
  kept.delete(key);
  kept.set(key, pieces);
  return pieces.map((p) => p.html).join('');
}

/** Whether a plain code block in `language` gets highlighted later (a language the worker knows). */
export function highlightsLater(code: string, language: string): boolean {
  return !noWorker && wanted(code, language);
}

/**
 * Starts the worker now, so that it has compiled its grammars (off the page's thread) before the
 * first code block, and has it load the display language's ICU data before the first usage line.
 */
export function warmWorker(): void {
  const warmLocale: WarmLocaleRequest = { warmLocale: document.documentElement.lang || 'en' };
  startWorker()?.postMessage(warmLocale);
}

function startWorker(): Worker | undefined {
  if (worker || noWorker) return worker;
  try {
    const url = URL.createObjectURL(new Blob([workerSource], { type: 'text/javascript' }));
    worker = new Worker(url, { name: 'highlight' });
    // The worker has read its script once it runs; the URL is not needed after that.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch {
    noWorker = true;
    return undefined;
  }
  worker.addEventListener('message', (event: MessageEvent<HighlightAnswer>) => answered(event.data));
  worker.addEventListener('error', () => {
    // A worker that failed to start (blocked, or broken) answers nothing: everything stays plain.
    noWorker = true;
    worker = undefined;
    pending.clear();
    pendingByKey.clear();
  });
  return worker;
}

/**
 * Highlights a code element that shows `code` as plain text once the worker has answered, piece by
 * piece in tasks of their own; an element that left the page (re-rendered) or whose text changed
 * is left alone. The pieces are built as nodes (spansOf), never parsed as HTML.
 */
export function highlightLater(element: HTMLElement, code: string, language: string, sanitize: Sanitize): void {
  const key = keyOf(code, language);
  const known = kept.get(key);
  if (known !== undefined) {
    queueJob({ element, code, sanitize, pieces: known, next: 0 });
    return;
  }
  const waiting = pendingByKey.get(key);
  if (waiting) {
    waiting.waiting.push({ element, sanitize });
    return;
  }
  const w = startWorker();
  if (!w) return;
  const id = nextId++;
  const entry: Pending = { key, waiting: [{ element, sanitize }] };
  pending.set(id, entry);
  pendingByKey.set(key, entry);
  const request: HighlightRequest = { id, code, language };
  w.postMessage(request);
}

function answered(answer: HighlightAnswer): void {
  const entry = pending.get(answer.id);
  if (!entry) return;
  pending.delete(answer.id);
  pendingByKey.delete(entry.key);
  if (!answer.pieces.length) return;
  const code = entry.key.slice(entry.key.indexOf('\n') + 1);
  keep(entry.key, answer.pieces);
  for (const { element, sanitize } of entry.waiting)
    queueJob({ element, code, sanitize, pieces: answer.pieces, next: 0 });
}

const htmlChars = (pieces: HighlightAnswer['pieces']): number => pieces.reduce((n, p) => n + p.html.length, 0);

function keep(key: string, pieces: HighlightAnswer['pieces']): void {
  const chars = htmlChars(pieces);
  if (chars > KEPT_CHARS / 4 || kept.has(key)) return;
  kept.set(key, pieces);
  keptChars += chars;
  for (const [oldKey, oldPieces] of kept) {
    if (keptChars <= KEPT_CHARS) break;
    kept.delete(oldKey);
    keptChars -= htmlChars(oldPieces);
  }
}

interface Job {
  element: HTMLElement;
  code: string;
  sanitize: Sanitize;
  pieces: HighlightAnswer['pieces'];
  /** The next piece to insert, and the text node that shows the code not highlighted yet. */
  next: number;
  rest?: Text;
}

const queue: Job[] = [];
let scheduled = false;

function queueJob(job: Job): void {
  queue.push(job);
  if (!scheduled) {
    scheduled = true;
    setTimeout(runJobs);
  }
}

/** Inserts highlighted pieces for up to TASK_BUDGET_MS (setTimeout: between frames, never starved). */
function runJobs(): void {
  scheduled = false;
  const started = performance.now();
  let pieces = 0;
  while (queue.length && (pieces === 0 || performance.now() - started < TASK_BUDGET_MS)) {
    const job = queue[0] as Job;
    if (
      !job.element.isConnected ||
      (job.rest === undefined && job.element.textContent !== job.code) ||
      !insertPiece(job)
    )
      queue.shift();
    pieces++;
  }
  if (queue.length) {
    scheduled = true;
    setTimeout(runJobs);
  }
}

/** Inserts the next piece of a job; false when the job is finished. */
function insertPiece(job: Job): boolean {
  const piece = job.pieces[job.next];
  if (!piece) return false;
  if (!job.rest) {
    job.rest = document.createTextNode(job.code);
    job.element.replaceChildren(job.rest);
  }
  job.rest.before(spansOf(piece.html) ?? job.sanitize(piece.html));
  job.rest.data = job.code.slice(piece.end);
  job.next++;
  if (job.next < job.pieces.length) return true;
  job.rest.remove();
  return false;
}

/** One token of highlight.js's HTML: a span with classes, its end, or escaped text. */
const TOKEN = /<span class="([\w\- ]+)">|<\/span>|[^<]+/y;
const ENTITY = /&(amp|lt|gt|quot|#x27);/g;
const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', '#x27': "'" };

/**
 * The nodes of highlight.js's output built directly: only <span class="…"> elements and text, the
 * five entities its escaping writes decoded. This is less work than the sanitiser (which parses a
 * whole document each time) and safe by construction: nothing is parsed as HTML. Undefined for
 * anything else, which then goes through the sanitiser.
 */
export function spansOf(html: string): DocumentFragment | undefined {
  const root = document.createDocumentFragment();
  const open: Array<DocumentFragment | HTMLSpanElement> = [root];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < html.length) {
    const match = TOKEN.exec(html);
    if (!match) return undefined;
    const parent = open[open.length - 1] as DocumentFragment | HTMLSpanElement;
    if (match[1] !== undefined) {
      const span = document.createElement('span');
      span.className = match[1];
      parent.append(span);
      open.push(span);
    } else if (match[0] === '</span>') {
      if (open.length < 2) return undefined;
      open.pop();
    } else {
      parent.append(match[0].replace(ENTITY, (_, name: string) => ENTITIES[name] ?? ''));
    }
  }
  return open.length === 1 ? root : undefined;
}
