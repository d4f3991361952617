/**
 * What the store's lock (lock.ts) and the conversation claims (claims.ts) share as leases: a
 * monotonic clock, a timer that never keeps a process alive, and the heartbeat an owner writes into
 * its own file (through the handle it keeps open, so never into a file that replaced it) while its
 * own clock shows it has not missed a refresh. No `vscode` import.
 */
import { promises as fs } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** Calls `tick` every `everyMs` until the function it returns is called. */
export type Schedule = (tick: () => void, everyMs: number) => () => void;

/** Milliseconds on a clock that never steps (unlike `Date.now`, which NTP or a resume can move either way). */
export const monotonicNow = (): number => performance.now();

export const watchTimer: Schedule = (tick, everyMs) => {
  const timer = setInterval(tick, everyMs);
  // A heartbeat must never keep a process (a test, a closing extension host) alive.
  timer.unref();
  return () => clearInterval(timer);
};

/** Digits of the beat counter: fixed, so that a beat rewrites the same bytes in place. */
const COUNTER_DIGITS = 16;

export interface BeatOptions {
  clock: () => number;
  schedule: Schedule;
  everyMs: number;
  /** The lease is this owner's only while its last refresh began less than this long ago (its own clock). */
  validMs: number;
  /** When the lease began (on `clock`), before its file was made. */
  since: number;
}

/**
 * The heartbeat of one lease file, written as `before`, a counter, `after`. Every beat rewrites the
 * counter, so that others see the file change (its time alone would not do: file times have a
 * coarse grain on some file systems, and a stepped clock can set an old one). A beat that comes
 * later than `validMs` after the last one loses the lease for good: waiters may have taken it over.
 */
export class Beat {
  private count = 0;
  private last: number;
  private lost = false;
  private writing = false;
  private cancel: (() => void) | undefined;

  constructor(
    private readonly handle: fs.FileHandle,
    private readonly before: string,
    private readonly options: BeatOptions,
    private readonly after = '',
  ) {
    this.last = options.since;
  }

  /** The whole content of the file at this beat. */
  content(): string {
    return `${this.before}${String(this.count).padStart(COUNTER_DIGITS, '0')}${this.after}`;
  }

  /** Writes the whole content through the handle (for a file made empty). */
  async writeToken(): Promise<void> {
    await this.handle.writeFile(this.content());
  }

  start(): void {
    this.cancel ??= this.options.schedule(() => void this.tick(), this.options.everyMs);
  }

  /** Whether the lease is still this owner's by its own clock; once not, never again. */
  alive(): boolean {
    if (!this.lost && this.options.clock() - this.last >= this.options.validMs) this.lose();
    return !this.lost;
  }

  lose(): void {
    this.lost = true;
    this.stop();
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  /** One beat: the counter rewritten in place, or the lease lost when this beat comes too late. */
  async tick(): Promise<void> {
    if (this.writing || !this.alive()) return;
    const started = this.options.clock();
    this.writing = true;
    this.count++;
    try {
      const digits = String(this.count).padStart(COUNTER_DIGITS, '0');
      await this.handle.write(digits, Buffer.byteLength(this.before), 'utf8');
      // Counted from before the write: a waiter sees the change only after it landed.
      this.last = started;
    } catch {
      // Not refreshed: the next beat tries again, and the deadline tells when it is too late.
    } finally {
      this.writing = false;
    }
  }
}

/** Whether process `pid` no longer exists (on this machine). */
export function pidIsGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
