import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { removeRetrying, renameRetrying } from '../../atomicFile';
import { GatewayError } from '../../errors';
import { formatDuration } from '../../../shared/format';
import { Beat, monotonicNow, pidIsGone, watchTimer, type Schedule } from './lease';
import { words } from '../../../shared/words';

export interface FileLockOptions {
  /** A lock seen unchanged for this long belongs to a window that died or hangs; it is taken over. */
  staleMs?: number;
  /** Waiting longer than this for the lock is an error (another window is stuck). */
  timeoutMs?: number;
  /** A monotonic clock in milliseconds (default `performance.now`); tests step it. */
  clock?: () => number;
  /** How the heartbeat is timed (default: an unref'd interval); tests beat by hand. */
  schedule?: Schedule;
  /** Called inside `fence` before anything is checked: tests freeze a holder at the worst point. */
  beforeFence?: () => Promise<void> | void;
}

const DEFAULT_STALE_MS = 30_000;
/** A lock whose owner process is gone (same machine) is taken over after this long unchanged, not `staleMs`. */
const DEAD_OWNER_MS = 1_000;
const DEFAULT_TIMEOUT_MS = 60_000;

/** The code of the GatewayError thrown when a holder finds its lease was lost before it wrote. */
export const LEASE_LOST = 'leaseLost';

export const leaseLost = (): GatewayError =>
  new GatewayError(
    'timeout',
    words(
      'This window was paused longer than it may hold the chat history lock, so another window may have taken it over; this change was not saved. Try again.',
    ),
    { code: LEASE_LOST },
  );

/** The lock as this process holds it: its own file (kept open), and the heartbeat that keeps it. */
interface Holding {
  handle: fs.FileHandle;
  ino: bigint;
  dev: bigint;
  beat: Beat;
}

/**
 * A lock shared by every process on one folder (every VS Code window of a profile): a file created
 * with O_EXCL (`wx`), holding the owner's pid, host name and a random token, then a beat counter the
 * owner rewrites (through its own open handle, so only ever its own file) every sixth of `staleMs`.
 *
 * Staleness is judged by observation on a monotonic clock, never by comparing another process's
 * file time with this one's clock (clocks step after a resume, an NTP correction, a VM migration):
 * a waiter takes the lock over only once it has itself seen the file (identity, size, time and
 * content) unchanged for `staleMs`; a second suffices when the owner was a process of this machine
 * that no longer exists. A stale lock is moved aside with a rename (atomic: of two waiters, one wins)
 * and its content checked; one that changed meanwhile is given back with `link`.
 *
 * A lease is a promise with a deadline, and a process can be frozen past it (a laptop sleeping, a
 * debugger, swapping). So the holder fences every write (`fence`): it carries on only while its own
 * monotonic clock shows its last refresh was less than two thirds of `staleMs` ago, and the file at
 * the lock's name is still the one it created (device and inode). A holder that missed a refresh
 * deadline has lost the lease for good, writes nothing more, and says so (LEASE_LOST). The fence is
 * the last step before each write call; see Kleppmann, "How to do distributed locking" (2016), for
 * why a lease without such a check can be held twice.
 *
 * Within one process the holders also queue in memory, so one instance never contends with itself.
 * Waiters poll with a growing, jittered delay (2 ms up to 50 ms).
 */
export class FileLock {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly staleMs: number;
  private readonly timeoutMs: number;
  private readonly clock: () => number;
  private readonly schedule: Schedule;
  private holding: Holding | undefined;
  /** What this waiter last saw at the lock's name, and since when (monotonic) it has seen it unchanged. */
  private watching: { seen: string; since: number } | undefined;

  constructor(
    readonly file: string,
    private readonly options: FileLockOptions = {},
  ) {
    this.staleMs = options.staleMs ?? DEFAULT_STALE_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.clock = options.clock ?? monotonicNow;
    this.schedule = options.schedule ?? watchTimer;
  }

  /** Runs `work` while holding the lock; the lock is released however `work` ends. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(() => this.hold(work));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Throws LEASE_LOST unless this process still holds the lock it is running under: call it as the
   * last step before writing anything the lock guards.
   */
  async fence(): Promise<void> {
    const holding = this.holding;
    if (!holding) throw new Error('FileLock.fence is only for work running under the lock.');
    await this.options.beforeFence?.();
    const now = await fs.stat(this.file, { bigint: true }).catch(() => undefined);
    if (!holding.beat.alive() || !now || now.ino !== holding.ino || now.dev !== holding.dev) {
      holding.beat.lose();
      throw leaseLost();
    }
  }

  private async hold<T>(work: () => Promise<T>): Promise<T> {
    const holding = await this.acquire();
    this.holding = holding;
    try {
      return await work();
    } finally {
      this.holding = undefined;
      holding.beat.stop();
      await this.release(holding);
    }
  }

  private async acquire(): Promise<Holding> {
    const token = `${process.pid} ${os.hostname()} ${Date.now()} ${randomBytes(8).toString('hex')}\n`;
    const deadline = this.clock() + this.timeoutMs;
    let delay = 2;
    for (;;) {
      const attempt = this.clock();
      try {
        const handle = await fs.open(this.file, 'wx');
        this.watching = undefined;
        return await this.start(handle, token, attempt);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          // The folder was removed under us (a profile reset): make it again and retry.
          await fs.mkdir(path.dirname(this.file), { recursive: true });
          continue;
        }
        // Windows refuses to create a name whose file is being deleted (the holder's release) with EPERM: that is contention too.
        if (code !== 'EEXIST' && !(code === 'EPERM' && process.platform === 'win32')) throw err;
      }
      if (await this.takeOverIfStale()) continue;
      if (this.clock() > deadline) {
        throw new GatewayError(
          'timeout',
          words(
            'Another VS Code window has held the chat history lock for over {0}; the change was not saved. Try again, or reload the other windows.',
            formatDuration(this.timeoutMs),
          ),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay));
      delay = Math.min(50, delay * 2);
    }
  }

  /** Writes the owner's token into the new lock file and starts its heartbeat (counted from before the file was made). */
  private async start(handle: fs.FileHandle, token: string, attempt: number): Promise<Holding> {
    try {
      const beat = new Beat(handle, token, {
        clock: this.clock,
        schedule: this.schedule,
        everyMs: Math.max(20, Math.floor(this.staleMs / 6)),
        validMs: (this.staleMs * 2) / 3,
        since: attempt,
      });
      await beat.writeToken();
      const { ino, dev } = await handle.stat({ bigint: true });
      beat.start();
      return { handle, ino, dev, beat };
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fs.rm(this.file, { force: true }).catch(() => undefined);
      throw err;
    }
  }

  /** Moves a dead owner's lock aside; true when the caller should try again at once. */
  private async takeOverIfStale(): Promise<boolean> {
    const seen = await look(this.file);
    if (seen === undefined) {
      // Released between our attempt and the look: try again.
      this.watching = undefined;
      return true;
    }
    const now = this.clock();
    if (this.watching?.seen !== seen) {
      this.watching = { seen, since: now };
      return false;
    }
    const unchanged = now - this.watching.since;
    if (unchanged < Math.min(DEAD_OWNER_MS, this.staleMs)) return false;
    if (unchanged < this.staleMs && !ownerIsGone(seen)) return false;
    this.watching = undefined;
    await moveAsideIf(this.file, (aside) => aside === seen);
    return true;
  }

  /** Removes the lock if the file at its name is still this holder's (moved aside first, then checked). */
  private async release(holding: Holding): Promise<void> {
    try {
      const now = await fs.stat(this.file, { bigint: true }).catch(() => undefined);
      if (now?.ino === holding.ino && now.dev === holding.dev)
        await moveAsideIf(this.file, undefined, (stat) => stat.ino === holding.ino && stat.dev === holding.dev);
    } finally {
      await holding.handle.close().catch(() => undefined);
    }
  }
}

/**
 * Renames `file` aside and deletes it when what was moved is what the caller meant to remove (by
 * its look, or by its identity); anything else was another process's fresh file, given back with
 * `link` (which fails if a third process holds the name by now, and then that one owns it).
 */
async function moveAsideIf(
  file: string,
  byLook?: (seen: string | undefined) => boolean,
  byStat?: (stat: { ino: bigint; dev: bigint }) => boolean,
): Promise<void> {
  const aside = `${file}.stale-${randomBytes(6).toString('hex')}`;
  try {
    await renameRetrying(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const meant = byLook
    ? byLook(await look(aside))
    : byStat!(await fs.stat(aside, { bigint: true }).catch(() => ({ ino: -1n, dev: -1n })));
  if (!meant) await fs.link(aside, file).catch(() => undefined);
  await removeRetrying(aside);
}

/** What is at `file` as one string (identity, size, time and content), or undefined when nothing is. */
async function look(file: string): Promise<string | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Windows: a file being deleted cannot be opened; it is as good as gone.
    if (code === 'ENOENT' || (code === 'EPERM' && process.platform === 'win32')) return undefined;
    throw err;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const content = await handle.readFile('utf8');
    return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}\n${content}`;
  } finally {
    await handle.close();
  }
}

/** Whether the lock's owner (as `look` shows it) was a process on this machine that no longer exists. */
function ownerIsGone(seen: string): boolean {
  const [pid, host] = (seen.split('\n')[1] ?? '').split(' ');
  return host === os.hostname() && pid !== undefined && /^\d+$/.test(pid) && pidIsGone(Number(pid));
}
