import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { removeRetrying, renameRetrying } from '../../atomicFile';
import { GatewayError } from '../../errors';
import { formatDuration } from '../../../shared/format';

export interface FileLockOptions {
  /** A lock file not refreshed for this long belongs to a window that died; it is taken over. */
  staleMs?: number;
  /** Waiting longer than this for the lock is an error (another window is stuck). */
  timeoutMs?: number;
}

const DEFAULT_STALE_MS = 30_000;
/** A lock whose owner process is gone (same machine) is taken over after this long, not `staleMs`. */
const DEAD_OWNER_MS = 1_000;
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * A lock shared by every process on one folder (every VS Code window of a profile): a file created
 * with O_EXCL (`wx`), holding the owner's pid, host name and a random token. While held, its mtime
 * is refreshed every third of `staleMs`, so only a dead owner's lock grows stale; a lock whose owner
 * process no longer exists on this machine is stale after a second already (a crashed window does
 * not hold the others up for `staleMs`). A stale lock is moved aside with a rename (atomic: of two
 * waiters, one wins) and its content checked before it is dropped.
 * Within one process the holders also queue in memory, so one instance never contends with itself.
 *
 * Critical sections are meant to be short (a few small reads and one append); waiters poll with
 * a growing, jittered delay (2 ms up to 50 ms).
 */
export class FileLock {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly staleMs: number;
  private readonly timeoutMs: number;

  constructor(
    readonly file: string,
    options: FileLockOptions = {},
  ) {
    this.staleMs = options.staleMs ?? DEFAULT_STALE_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Runs `work` while holding the lock; the lock is released however `work` ends. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(() => this.hold(work));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async hold<T>(work: () => Promise<T>): Promise<T> {
    const token = await this.acquire();
    const heartbeat = setInterval(
      () => {
        const now = new Date();
        fs.utimes(this.file, now, now).catch(() => undefined);
      },
      Math.max(50, Math.floor(this.staleMs / 3)),
    );
    // The heartbeat must never keep a process (a test, a closing extension host) alive.
    heartbeat.unref();
    try {
      return await work();
    } finally {
      clearInterval(heartbeat);
      await this.release(token);
    }
  }

  private async acquire(): Promise<string> {
    const token = `${process.pid} ${os.hostname()} ${Date.now()} ${randomBytes(8).toString('hex')}`;
    const deadline = Date.now() + this.timeoutMs;
    let delay = 2;
    for (;;) {
      try {
        const handle = await fs.open(this.file, 'wx');
        try {
          await handle.writeFile(token);
        } finally {
          await handle.close();
        }
        return token;
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
      if (Date.now() > deadline) {
        throw new GatewayError(
          'timeout',
          l10n.t(
            'Another VS Code window has held the chat history lock for over {0}; the change was not saved. Try again, or reload the other windows.',
            formatDuration(this.timeoutMs),
          ),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay));
      delay = Math.min(50, delay * 2);
    }
  }

  /** Moves a dead owner's lock aside; true when the caller should try again at once. */
  private async takeOverIfStale(): Promise<boolean> {
    let seen: string;
    try {
      const stat = await fs.stat(this.file);
      const age = Date.now() - stat.mtimeMs;
      if (age < DEAD_OWNER_MS) return false;
      seen = await fs.readFile(this.file, 'utf8');
      if (age < this.staleMs && !ownerIsGone(seen)) return false;
    } catch (err) {
      // Released between our attempt and the look: try again.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
      throw err;
    }
    const aside = `${this.file}.stale-${randomBytes(6).toString('hex')}`;
    try {
      await renameRetrying(this.file, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
      throw err;
    }
    const taken = await fs.readFile(aside, 'utf8').catch(() => seen);
    if (taken !== seen) {
      // Another waiter took the stale lock over first and we moved ITS fresh lock: give it back.
      // `link` fails if a third process holds the name by now, and then that one owns it.
      await fs.link(aside, this.file).catch(() => undefined);
    }
    await removeRetrying(aside);
    return true;
  }

  private async release(token: string): Promise<void> {
    // Only our own lock is removed: if ours was taken over as stale (a blocked event loop), the
    // file now belongs to someone else.
    const current = await fs.readFile(this.file, 'utf8').catch(() => undefined);
    if (current === token) await removeRetrying(this.file);
  }
}

/** Whether the lock's owner was a process on this machine that no longer exists. */
function ownerIsGone(content: string): boolean {
  const [pid, host] = content.split(' ');
  if (host !== os.hostname() || !pid || !/^\d+$/.test(pid)) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
