import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { writeFileAtomic } from '../atomicFile';
import { FileLock } from '../chat/store/lock';
import { isGatewayError } from '../errors';

/** How a guarded download ended. */
export type GuardedDownload =
  /** This window downloaded it: the saved file. */
  | { kind: 'downloaded'; file: string }
  /** Another window (or an earlier session) downloaded it already: the file it saved. */
  | { kind: 'done'; file: string }
  /** Another window is downloading it right now. */
  | { kind: 'elsewhere' };

/** Makes sure a video task's result is downloaded once, whatever the number of windows restoring the task. */
export interface DownloadGuard {
  run(localId: string, download: () => Promise<string>): Promise<GuardedDownload>;
}

const doneSchema = z.object({ file: z.string(), at: z.number() });

/**
 * A record of a finished download is kept this long: a task is restored in its "downloading" step
 * only until its result link expires (the providers keep results for a day or so), after which the
 * record can decide nothing.
 */
export const DONE_KEEP_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * One lock file per task in the global storage (the chat store's cross-process lock: heartbeat,
 * a dead owner's lock taken over), held for the whole download, and a record of the saved file
 * once it is done. A window that restores a task in its "downloading" step (every window of the
 * workspace keeps its own copy of the task list) downloads only if it gets the lock and no record
 * says the file was saved; while it holds the lock no other window's download of that task runs,
 * so whatever temporary file of the task is found then was left by a crash.
 */
export class VideoDownloadGuard implements DownloadGuard {
  /**
   * One lock per task for the life of the guard: a lock is judged stale by what its instance saw
   * unchanged over time (store/lock.ts), so the instance must outlive one look.
   */
  private readonly locks = new Map<string, FileLock>();
  private pruned = false;

  constructor(
    private readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  async run(localId: string, download: () => Promise<string>): Promise<GuardedDownload> {
    const name = fileNameOf(localId);
    if (!this.pruned) {
      this.pruned = true;
      await this.prune().catch(() => undefined);
    }
    // No waiting: a download holds its lock for minutes; the caller looks again later instead.
    let lock = this.locks.get(name);
    if (!lock) this.locks.set(name, (lock = new FileLock(path.join(this.dir, `${name}.lock`), { timeoutMs: 0 })));
    const held = lock;
    let inside = false;
    try {
      return await held.run(async () => {
        inside = true;
        const done = await this.done(name);
        if (done) return { kind: 'done', file: done } as const;
        const file = await download();
        await writeFileAtomic(path.join(this.dir, `${name}.done`), JSON.stringify({ file, at: this.now() }), {
          overwrite: true,
          beforeRename: () => held.fence(),
        });
        return { kind: 'downloaded', file } as const;
      });
    } catch (err) {
      if (!inside && isGatewayError(err, 'timeout')) return { kind: 'elsewhere' };
      throw err;
    }
  }

  /** Removes the records of downloads finished longer than DONE_KEEP_MS ago (and unreadable ones as old); returns how many. */
  async prune(): Promise<number> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    let removed = 0;
    for (const entry of names) {
      if (!entry.endsWith('.done')) continue;
      const file = path.join(this.dir, entry);
      const text = await fs.readFile(file, 'utf8').catch(() => undefined);
      if (text === undefined) continue;
      let at: number | undefined;
      try {
        const parsed = z.safeParse(doneSchema, JSON.parse(text));
        if (parsed.success) at = parsed.data.at;
      } catch {
        // Not a record this version wrote whole: judged by the file's own age below.
      }
      at ??= (await fs.stat(file).catch(() => undefined))?.mtimeMs ?? this.now();
      if (this.now() - at <= DONE_KEEP_MS) continue;
      await fs.rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  /** The file a finished download saved, while it is still there (a deleted one is fetched again). */
  private async done(name: string): Promise<string | undefined> {
    const text = await fs.readFile(path.join(this.dir, `${name}.done`), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parsed = z.safeParse(doneSchema, raw);
    if (!parsed.success) return undefined;
    const exists = await fs.stat(parsed.data.file).then(
      () => true,
      () => false,
    );
    return exists ? parsed.data.file : undefined;
  }
}

/** A task id as a file name: ids are UUIDs; anything else is hex-encoded rather than trusted as a name. */
function fileNameOf(localId: string): string {
  return /^[A-Za-z0-9_-]{1,80}$/.test(localId) ? localId : `x${Buffer.from(localId).toString('hex').slice(0, 160)}`;
}
