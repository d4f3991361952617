import { randomBytes } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { words } from '../shared/words';
import {
  checkFolder,
  createChecked,
  publishChecked,
  type CheckedFolder,
  type CheckedTemp,
  type Confinement,
} from './confinedWrite';
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
  opts: Confinement & {
    overwrite: boolean;
    durable?: boolean;
    /** Called just before the file gets its name (a lock holder's fence: see store/lock.ts); throwing leaves the name alone. */
    beforeRename?: () => Promise<void>;
  },
): Promise<void> {
  // `durable: false` is for files that can be rebuilt from others (a cache): atomic, not fsync'd.
  const durable = opts.durable ?? true;
  // An output write (`within` given) is confined (confinedWrite.ts); the extension's own storage is not the user's to swap.
  const folder = opts.within === undefined ? undefined : await checkFolder(path.dirname(file), opts);
  const dir = folder?.dir ?? path.dirname(file);
  const target = path.join(dir, path.basename(file));
  const tmp = tempPath(dir, path.basename(file));
  const temp = folder ? await createChecked(folder, path.basename(tmp)) : undefined;
  const handle = temp?.handle ?? (await fs.open(tmp, 'wx'));
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
    if (!(await (folder && temp ? publishChecked(folder, temp, target, give) : give()))) {
      throw new GatewayError('badRequest', words('{0} already exists; it was not overwritten.', path.basename(file)), {
        code: 'EEXIST',
      });
    }
  } finally {
    await removeRetrying(tmp);
  }
  if (durable) await syncDirectory(dir);
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
function tempPath(dir: string, base: string, owner?: string): string {
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
async function linkNew(tmp: string, target: string): Promise<boolean> {
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

const MAX_NAME_ATTEMPTS = 1000;

/** `base.ext`, else `base_2.ext`, `base_3.ext`…: the first free one, in the checked folder. */
async function publishUnique(folder: CheckedFolder, temp: CheckedTemp, base: string, ext: string): Promise<string> {
  for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt++) {
    const target = path.join(folder.dir, attempt === 1 ? `${base}.${ext}` : `${base}_${attempt}.${ext}`);
    if (await publishChecked(folder, temp, target, () => linkNew(temp.file, target))) {
      await syncDirectory(folder.dir);
      return target;
    }
  }
  throw new GatewayError('badRequest', words('No free file name for {0} in {1}.', `${base}.${ext}`, folder.dir));
}

/** A folder the user chose for output cannot be written: say so and name the setting. */
async function writeFailure(err: unknown, dir: string): Promise<never> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOSPC') {
    throw new GatewayError(
      'badRequest',
      words(
        'Could not write to {0} ({1}). Choose another output folder ("modelGateway.outputFolder").',
        dir,
        code ?? '',
      ),
      { cause: err },
    );
  }
  throw err;
}

/** Writes bytes under a new name in `dir` (created if missing): `base.ext` or the next free `base_N.ext`. */
export async function writeFileUnique(
  dir: string,
  base: string,
  ext: string,
  data: Uint8Array,
  confine: Confinement = {},
): Promise<string> {
  return streamToFileUnique(dir, base, ext, [data], confine);
}

/** Chunks to write; each is left alone until it is on disk. */
export type ChunkSource = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

export interface StreamOptions extends Confinement {
  /** Checks the complete file, read through the handle it was written with; throwing discards it. */
  verify?: (file: fs.FileHandle) => Promise<void>;
  onBytes?: (total: number) => void;
  /** Names the temporary file after the work it belongs to (see tempPath). */
  owner?: string;
}

/**
 * Streams chunks to a temporary file in `dir`, runs `verify` on the complete file, and only then
 * gives it its unique final name. A failure anywhere (the stream, the check) leaves no file behind.
 * The file is fsync'd once, at the end, before it gets its name. The folder is judged and the file
 * written is the one checked (confinedWrite.ts): it never lands outside `within` (by default the
 * folder itself as it was when the write began), whatever is swapped or planted meanwhile.
 */
export async function streamToFileUnique(
  dir: string,
  base: string,
  ext: string,
  chunks: ChunkSource,
  opts: StreamOptions = {},
): Promise<string> {
  const folder = await checkFolder(dir, opts).catch((err: unknown) => writeFailure(err, dir));
  const temp = await createChecked(folder, path.basename(tempPath(folder.dir, base, opts.owner))).catch(
    (err: unknown) => writeFailure(err, dir),
  );
  try {
    try {
      await writeChunks(temp.handle, chunks, opts.onBytes).catch((err: unknown) => writeFailure(err, dir));
      await temp.handle.sync();
      await opts.verify?.(temp.handle);
    } finally {
      await temp.handle.close();
    }
    return await publishUnique(folder, temp, base, ext);
  } finally {
    await removeRetrying(temp.file);
  }
}

/**
 * Bytes that may wait in memory for the disk before the source is read on (backpressure). Above the
 * few socket reads that arrive while one write is in flight, so a disk keeping up never stalls the
 * network.
 */
const WRITE_QUEUE_BYTES = 1024 * 1024;

/**
 * Every this many bytes written, the file's data is flushed to the disk in the background while
 * more arrives, so that the fsync before the rename waits only for the last part instead of for the
 * whole file (for a 100 MB video on an SSD: ~100 ms spent after the last byte arrived).
 */
const BACKGROUND_SYNC_BYTES = 16 * 1024 * 1024;

/**
 * Writes the chunks in order, without waiting for each write: while one write is in flight, the
 * chunks that arrive queue up and go to the disk together in one `writev` (no copy). Reading stops
 * while WRITE_QUEUE_BYTES are queued, until the disk has caught up.
 */
async function writeChunks(
  handle: fs.FileHandle,
  chunks: ChunkSource,
  onBytes?: (total: number) => void,
): Promise<void> {
  let queue: Uint8Array[] = [];
  let queued = 0;
  let total = 0;
  let writing = false;
  let failure: { error: unknown } | undefined;
  let unsynced = 0;
  let syncing: Promise<void> | undefined;
  // Empties the queue, batch by batch; never rejects (a failure is kept for the reading loop).
  const pump = async (): Promise<void> => {
    writing = true;
    try {
      while (queue.length && !failure) {
        const batch = queue;
        const bytes = queued;
        queue = [];
        queued = 0;
        await writeAll(handle, batch, bytes);
        unsynced += bytes;
        if (unsynced >= BACKGROUND_SYNC_BYTES && !syncing) {
          unsynced = 0;
          syncing = handle.datasync().then(
            () => (syncing = undefined),
            (error: unknown) => {
              failure ??= { error };
              syncing = undefined;
            },
          );
        }
      }
    } catch (error) {
      failure = { error };
    } finally {
      writing = false;
    }
  };
  let pumping = Promise.resolve();
  try {
    for await (const chunk of chunks) {
      if (failure) break;
      if (chunk.length === 0) continue;
      queue.push(chunk);
      queued += chunk.length;
      total += chunk.length;
      onBytes?.(total);
      if (!writing) pumping = pump();
      else if (queued >= WRITE_QUEUE_BYTES) await pumping;
    }
  } finally {
    // Also when the source failed: the handle is closed only after the last write has settled.
    await pumping;
    await syncing;
  }
  if (failure) throw failure.error;
}

/** One `writev` of the batch, and the rest if the system wrote only part of it. */
async function writeAll(handle: fs.FileHandle, batch: Uint8Array[], bytes: number): Promise<void> {
  const { bytesWritten } = await handle.writev(batch);
  if (bytesWritten === bytes) return;
  let rest = Buffer.concat(batch).subarray(bytesWritten);
  while (rest.length) {
    const written = (await handle.write(rest)).bytesWritten;
    if (written === 0) throw Object.assign(new Error('the disk accepted no more bytes'), { code: 'ENOSPC' });
    rest = rest.subarray(written);
  }
}
