import { promises as fs, type BigIntStats } from 'node:fs';
import * as path from 'node:path';
import { FileLock } from '../chat/store/lock';
import { isGatewayError } from '../errors';

/**
 * Temporary files a write leaves when it is cut short (a crash, a window closed during a download),
 * in the names every version gave them: `.<name>.<12 hex>.tmp` (the first versions' atomic writer),
 * `.<name>.<12 hex>.part` (every version since), `.<name>.<task>-<12 hex>.part` (video downloads
 * since they name their task, atomicFile.ts). Versions before the last kept them forever: nothing
 * looked for them but the task that made them, and only after this version.
 */
const LEFTOVER = /^\..+\.(?:([A-Za-z0-9_-]{1,80})-)?[0-9a-f]{12}\.(?:part|tmp)$/;

/**
 * A leftover is removed only when its last change is this old: a file being written changes with
 * every chunk (a stalled download is ended by the body timeout within minutes), so a week unchanged
 * is no write of any window, of this version or an older one still open.
 */
export const LEFTOVER_KEEP_MS = 7 * 24 * 60 * 60 * 1000;

/** The task a leftover's name says it belongs to (a video download), when it names one. */
export function leftoverOwner(name: string): string | undefined | false {
  const m = LEFTOVER.exec(name);
  return m ? m[1] : false;
}

export interface LeftoverSweep {
  /** Folders to look in, and how many levels of sub-folders below each (links never followed). */
  folders: readonly { dir: string; depth: number }[];
  /** The video downloads' lock folder (downloadGuard.ts): a task's leftover is removed only under the task's lock. */
  guardDir: string;
  now?: () => number;
  keepMs?: number;
  /** For tests: runs after a file was judged and before it is removed (a writer resuming there). */
  beforeRemove?: (file: string) => Promise<void>;
}

/**
 * Removes the leftovers in the folders, once their last change is LEFTOVER_KEEP_MS old and they are
 * unchanged when removed; a video task's leftover only while this process holds the task's download
 * lock (no window downloads it then). One window sweeps at a time (a lock in `guardDir`; a window
 * that finds it taken skips). Returns the files removed; a folder that cannot be read is skipped.
 */
export async function sweepLeftovers(opts: LeftoverSweep): Promise<string[]> {
  const removed: string[] = [];
  const sweep = new FileLock(path.join(opts.guardDir, '.sweep.lock'), { timeoutMs: 0 });
  await underLock(sweep, async () => {
    for (const { dir, depth } of opts.folders) await sweepFolder(dir, depth, opts, removed);
  });
  return removed;
}

async function sweepFolder(dir: string, depth: number, opts: LeftoverSweep, removed: string[]): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    // Dirent types come from lstat: a link is neither a folder to enter nor a file to remove.
    if (entry.isDirectory()) {
      if (depth > 0) await sweepFolder(file, depth - 1, opts, removed);
      continue;
    }
    const owner = entry.isFile() ? leftoverOwner(entry.name) : false;
    if (owner === false) continue;
    const seen = await fs.lstat(file, { bigint: true }).catch(() => undefined);
    const now = (opts.now ?? Date.now)();
    if (!seen?.isFile() || now - Number(seen.mtimeMs) < (opts.keepMs ?? LEFTOVER_KEEP_MS)) continue;
    const remove = async (): Promise<void> => {
      await opts.beforeRemove?.(file);
      if (await removeIfUnchanged(file, seen)) removed.push(file);
    };
    if (owner === undefined) await remove();
    else await underLock(new FileLock(path.join(opts.guardDir, `${owner}.lock`), { timeoutMs: 0 }), remove);
  }
}

/** Runs `work` under `lock` if it is free now; does nothing when another window holds it. */
async function underLock(lock: FileLock, work: () => Promise<void>): Promise<void> {
  let inside = false;
  try {
    await lock.run(async () => {
      inside = true;
      await work();
    });
  } catch (err) {
    if (inside || !isGatewayError(err, 'timeout')) throw err;
  }
}

/** Removes `file` only if it is still the file seen, with the same size and time (nobody wrote to it since). */
async function removeIfUnchanged(file: string, seen: BigIntStats): Promise<boolean> {
  const now = await fs.lstat(file, { bigint: true }).catch(() => undefined);
  if (
    !now?.isFile() ||
    now.ino !== seen.ino ||
    now.dev !== seen.dev ||
    now.size !== seen.size ||
    now.mtimeNs !== seen.mtimeNs
  )
    return false;
  // Windows refuses to remove a file some process has open: then it is not a leftover yet.
  return fs.rm(file, { force: true }).then(
    () => true,
    () => false,
  );
}
