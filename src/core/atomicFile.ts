import { randomBytes } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { words } from '../shared/words';
import { GatewayError } from './errors';

/**
 * Every file the extension writes goes through here: a temporary file in the target folder, fsync'd,
 * then given its name, then the folder fsync'd. A crash never leaves half a file, and where a name
 * must be new, an existing file is never replaced, not even by a concurrent writer in another window.
 */

/**
 * Writes through a temporary file in the same folder so a crash never leaves half a file.
 * Without `overwrite`, the final step is a hard link, which fails if the name exists: an existing
 * file is never replaced, even by a race with another writer.
 *
 * Durable as well as atomic: the temporary file is fsync'd before it gets its name (otherwise a
 * power cut after the rename can leave an empty file under the new name on ext4/XFS with delayed
 * allocation), and the folder is fsync'd after, so the new name itself survives a crash.
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  opts: {
    overwrite: boolean;
    durable?: boolean;
    /** Called just before the file gets its name (a lock holder's fence: see store/lock.ts); throwing leaves the name alone. */
    beforeRename?: () => Promise<void>;
    /** Where and how the temporary file is made and named, when not plainly by path (outputFiles.ts). */
    place?: TempPlace;
  },
): Promise<void> {
  // `durable: false` is for files that can be rebuilt from others (a cache): atomic, not fsync'd.
  const durable = opts.durable ?? true;
  const dir = opts.place?.dir ?? path.dirname(file);
  const target = path.join(dir, path.basename(file));
  const tmp = tempPath(dir, path.basename(file));
  const handle = opts.place ? await opts.place.create(path.basename(tmp)) : await fs.open(tmp, 'wx');
  try {
    await handle.writeFile(data);
    if (durable) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await opts.beforeRename?.();
    const give = async (): Promise<boolean> => {
      if (!opts.overwrite) return linkNew(tmp, target);
      await renameRetrying(tmp, target);
      return true;
    };
    if (!(await (opts.place ? opts.place.publish(target, give) : give()))) {
      throw new GatewayError('badRequest', words('{0} already exists; it was not overwritten.', path.basename(file)), {
        code: 'EEXIST',
      });
    }
  } finally {
    await removeRetrying(tmp);
  }
  if (durable) await syncDirectory(dir);
}

/**
 * A folder whose temporary files are made and named through checks of its own (an output folder the
 * user approved: outputFiles.ts), instead of plainly by path as the extension's own storage is.
 */
export interface TempPlace {
  /** The folder as checked: the temporary file and the final name are made in it. */
  dir: string;
  /** Makes the temporary file `name` in `dir`, new, and opens it for writing. */
  create(name: string): Promise<fs.FileHandle>;
  /** Runs `give` (which names the temporary file) if the folder and file are still the ones checked; its result. */
  publish(target: string, give: () => Promise<boolean>): Promise<boolean>;
}

/** Codes Windows gives a rename while another process (another window, a virus scanner) has either file open. */
const TRANSIENT_RENAME_CODES = new Set(['EPERM', 'EBUSY', 'EACCES']);
/** How long a rename is retried there, as graceful-fs does (it allows a minute; a save that waits longer is better told). */
const RENAME_RETRY_MS = 5_000;

export interface RenameOptions {
  /** For tests: the rename to try, the platform whose rules apply, and the wait between tries. */
  rename?: (from: string, to: string) => Promise<void>;
  platform?: NodeJS.Platform;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * `fs.rename`, retried on Windows while it fails with EPERM, EBUSY or EACCES: there a rename onto a
 * file that another window is reading fails until that read ends. The wait grows by 10 ms per try up
 * to 100 ms, for at most RENAME_RETRY_MS in all (graceful-fs's scheme). Elsewhere those codes mean
 * what they say and are thrown at once.
 */
export async function renameRetrying(from: string, to: string, opts: RenameOptions = {}): Promise<void> {
  const rename = opts.rename ?? fs.rename;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const retries = (opts.platform ?? process.platform) === 'win32';
  const start = Date.now();
  for (let backoff = 0; ;) {
    try {
      await rename(from, to);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (!retries || !TRANSIENT_RENAME_CODES.has(code) || Date.now() - start >= RENAME_RETRY_MS) throw err;
    }
    backoff = Math.min(100, backoff + 10);
    await sleep(backoff);
  }
}

/** Removes a file if it is there; Node's own retries cover a file another process still has open on Windows. */
export function removeRetrying(file: string): Promise<void> {
  return fs.rm(file, { force: true, maxRetries: 5, retryDelay: 20 });
}

/**
 * Makes a folder's entries (names created, renamed or removed in it) durable. Windows cannot open
 * a folder for fsync, and some file systems refuse it; there the rename is as durable as the
 * platform allows, so such refusals are not errors.
 */
export async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EPERM' && code !== 'EISDIR' && code !== 'ENOTSUP' && code !== 'EBADF') throw err;
  } finally {
    await handle?.close();
  }
}

/**
 * `.<base>.<random>.part`, or `.<base>.<owner>-<random>.part` for a temporary file that belongs to
 * a known piece of work (a video task): after a crash, the owner finds its own leftovers by name
 * (partFilesOf) and never someone else's.
 */
export function tempPath(dir: string, base: string, owner?: string): string {
  return path.join(dir, `.${base}.${owner ? `${owner}-` : ''}${randomBytes(6).toString('hex')}.part`);
}

/** The temporary files `owner` left in `dir` for `base` (a crash ended its write before the rename). */
export async function partFilesOf(dir: string, base: string, owner: string): Promise<string[]> {
  const prefix = `.${base}.${owner}-`;
  const names = await fs.readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  return names
    .filter(
      (n) =>
        n.startsWith(prefix) && n.endsWith('.part') && /^[0-9a-f]{12}$/.test(n.slice(prefix.length, -'.part'.length)),
    )
    .map((n) => path.join(dir, n));
}

/**
 * Gives a finished temporary file a name that must not exist yet: a hard link, which fails when the
 * name exists. Where the file system has no hard links, an exclusive copy does the same.
 * Returns false when the name is taken.
 */
export async function linkNew(tmp: string, target: string): Promise<boolean> {
  try {
    await fs.link(tmp, target);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'ENOSYS')
      throw err;
  }
  try {
    await fs.copyFile(tmp, target, fsConstants.COPYFILE_EXCL);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}
