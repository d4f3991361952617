import type { RequestContext } from './requestContext';
import type { Ending } from './chatScenarios';

/** new-api's SetEventStreamHeaders (wire-formats §1.4). */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/** `data: <json>` only: Chat Completions. */
export function dataFrame(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** `event: <type>` + `data: <json>`: Responses and Messages. */
export function eventFrame(event: string, value: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(value)}\n\n`;
}

/** One frame of a scripted stream; `content` is the reasoning, text or argument piece it carries. */
export interface Step {
  frame: string;
  content?: string;
}

/** How many content chunks a stall, cut or mid-stream error lets through first. */
export const CHUNKS_BEFORE_FAULT = 3;

/** Where a fault ending cuts a stream of `contentSteps` content chunks: always keeps one back. */
export function faultPoint(contentSteps: number): number {
  return Math.max(1, Math.min(CHUNKS_BEFORE_FAULT, contentSteps - 1));
}

/**
 * Writes an SSE body piecewise and notices when the client goes away (or the double stops),
 * so that scripted pauses end at once and nothing is written to a closed socket.
 */
export class SseWriter {
  private closed = false;
  private wakers = new Set<() => void>();
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(private readonly http: RequestContext) {
    http.res.on('close', () => {
      this.closed = true;
      for (const wake of this.wakers) wake();
      this.wakers.clear();
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  open(): void {
    this.http.writeHead(200, SSE_HEADERS);
  }

  async write(text: string | Buffer): Promise<void> {
    if (this.closed) return;
    const res = this.http.res;
    this.lastWrite = new Promise((resolve) => res.write(text, () => resolve()));
    if (res.writableNeedDrain) {
      await this.until((done) => {
        res.once('drain', done);
        return () => res.off('drain', done);
      });
    }
  }

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return this.until((done) => {
      const timer = setTimeout(done, ms);
      return () => clearTimeout(timer);
    });
  }

  end(): void {
    if (!this.closed) this.http.res.end();
  }

  /** Closes the connection once what was written has left, without ending the HTTP body. */
  async cut(): Promise<void> {
    await Promise.race([this.lastWrite, this.until(() => undefined)]);
    this.http.res.destroy();
  }

  /** Resolves when `start`'s callback fires or the connection closes, whichever is first. */
  private until(start: (done: () => void) => (() => void) | void): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      let cleanup: (() => void) | void = undefined;
      const done = () => {
        this.wakers.delete(done);
        if (cleanup) cleanup();
        resolve();
      };
      this.wakers.add(done);
      cleanup = start(done);
    });
  }
}

export interface PlayOptions {
  ending: Ending;
  slowMs: number;
  /** A keep-alive frame to put before every other content chunk, when [[ping]] asked for it. */
  pingFrame?: string;
  /** The in-band error (and any tail) that ends a `midstreamError` stream after `emittedSteps` steps carrying `emitted`. */
  errorFrames: (emittedSteps: number, emitted: string) => string[];
}

export interface PlayResult {
  /** Concatenated content of the chunks that were sent. */
  emitted: string;
  /** The whole script was sent and the body ended. */
  completed: boolean;
}

/**
 * Sends a scripted stream. `stall`, `cut`, `cutClean` and `midstreamError` stop it after a few
 * content chunks; the other endings are written into the script by the protocol itself.
 */
export async function playStream(writer: SseWriter, steps: Step[], opts: PlayOptions): Promise<PlayResult> {
  writer.open();
  const contentSteps = steps.filter((s) => s.content !== undefined).length;
  const faulty =
    opts.ending === 'stall' || opts.ending === 'cut' || opts.ending === 'cutClean' || opts.ending === 'midstreamError';
  const stopAfter = faulty ? faultPoint(contentSteps) : Infinity;
  let seen = 0;
  let emitted = '';
  for (const [i, step] of steps.entries()) {
    if (i > 0) await writer.sleep(opts.slowMs);
    if (writer.isClosed) return { emitted, completed: false };
    if (opts.pingFrame && step.content !== undefined && seen % 2 === 0) await writer.write(opts.pingFrame);
    await writer.write(step.frame);
    if (step.content === undefined) continue;
    emitted += step.content;
    seen++;
    if (seen < stopAfter) continue;
    switch (opts.ending) {
      case 'stall':
        return { emitted, completed: false }; // the body stays open until the client or stop() closes it
      case 'cut':
        await writer.cut();
        return { emitted, completed: false };
      case 'cutClean':
        writer.end();
        return { emitted, completed: false };
      default:
        for (const frame of opts.errorFrames(i + 1, emitted)) await writer.write(frame);
        writer.end();
        return { emitted, completed: false };
    }
  }
  writer.end();
  return { emitted, completed: !writer.isClosed };
}
