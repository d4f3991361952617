import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { words } from '../shared/words';
import { linkNew, removeRetrying, syncDirectory, tempPath, writeFileAtomic } from './atomicFile';
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
 * The files the extension writes for the user (generated images and videos, saved results), as
 * opposed to its own storage (atomicFile.ts): the folder is judged and the file written is the one
 * checked (confinedWrite.ts), so a write never lands outside the folder the user approved, whatever
 * is swapped or planted meanwhile. Written atomically and durably all the same.
 */

/** Writes `data` at `file` (atomicFile.ts's writeFileAtomic) confined to `within`. */
export async function writeFileConfined(
  file: string,
  data: string | Uint8Array,
  opts: Confinement & { overwrite: boolean },
): Promise<void> {
  const folder = await checkFolder(path.dirname(file), opts);
  let temp: CheckedTemp | undefined;
  await writeFileAtomic(file, data, {
    overwrite: opts.overwrite,
    place: {
      dir: folder.dir,
      create: async (name) => (temp = await createChecked(folder, name)).handle,
      publish: (target, give) => {
        if (!temp) throw new Error('writeFileAtomic names a temporary file only after making it.');
        return publishChecked(folder, temp, target, give);
      },
    },
  });
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
