/**
 * The store's maintenance: rewriting a log whose dead records dominate (compaction) and removing
 * images no conversation refers to. Both are optional work: when they cannot be done safely (a
 * record this version did not read, a store changing faster than it can be read) they do nothing.
 */
import { promises as fs } from 'node:fs';
import { writeFileAtomic } from '../../atomicFile';
import { IMAGE_PRUNE_GRACE_MS, type ImageStore } from '../images';
import type { StoreCore } from './core';
import { isMissing } from './files';
import { DamagedLogError, encodeRecord, type LogRecord } from './log';
import { PRUNE_LOCKED_READ_MAX, PRUNE_ROUNDS, readImageRefs, type SeenFile } from './prune';

/** Rewrites a log whose dead records dominate, atomically, under the lock. */
export async function compact(core: StoreCore, id: string): Promise<void> {
  await core.exclusive(async () => {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(core.logFile(id), 'r+');
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    try {
      const size = await core.cutTornEnd(handle);
      const scan = await core.scan(handle, size, { limit: Number.POSITIVE_INFINITY, wantMeta: true, exact: true });
      // A record this version did not read whole would be lost (or changed) by the rewrite: the log stays as it is.
      if (scan.unread) return;
      // The log's own metadata (the file caches it); a log without any is left as it is.
      if (!scan.meta) return;
      const meta = { ...scan.meta, updatedAt: scan.updatedAt ?? scan.meta.updatedAt };
      const records: LogRecord[] = [{ k: 'm', at: meta.updatedAt, meta }];
      for (let i = 0; i < scan.total; i++) {
        const slot = scan.slots.get(i);
        if (slot?.message) records.push({ k: 'a', at: slot.lastAt, i: records.length - 1, m: slot.message });
      }
      const text = records.map(encodeRecord).join('');
      await writeFileAtomic(core.logFile(id), text, { overwrite: true, beforeRename: () => core.fence() });
      core.io.bytesWritten += Buffer.byteLength(text);
      await core.writeMeta({ v: 1, meta, messageCount: records.length - 1, logSize: Buffer.byteLength(text) });
    } catch (err) {
      if (!(err instanceof DamagedLogError)) throw err;
    } finally {
      await handle.close();
    }
  });
}

/**
 * Removes stored images that no conversation on disk refers to and that no window attached
 * within the grace period (IMAGE_PRUNE_GRACE_MS): a message being written in another window is
 * in no conversation yet. Returns how many files were removed.
 *
 * Every file of the store is read WITHOUT the lock (other windows keep writing meanwhile); the
 * lock is taken only for the last step, which reads what changed since (a log's new tail, a
 * file replaced or new) and then removes what is still unreferenced. Logs only grow or are
 * replaced whole, so a log's bytes read before stay as they were. If too much changed to read
 * it quickly under the lock, the lock is let go and the changes are read outside it first. A
 * file that cannot be read means nothing is removed this time.
 */
export async function pruneImages(core: StoreCore, images: ImageStore): Promise<number> {
  await core.ready();
  const seen = new Map<string, SeenFile>();
  const used = new Set<string>();
  const report = core.report.bind(core);
  for (let round = 0; round < PRUNE_ROUNDS; round++) {
    if ((await readImageRefs(core.dir, seen, used, Number.POSITIVE_INFINITY, report)) === 'failed') return 0;
    const removed = await core.exclusive(async () => {
      const read = await readImageRefs(core.dir, seen, used, PRUNE_LOCKED_READ_MAX, report);
      if (read === 'failed') return 0;
      if (read === 'tooMuch') return undefined;
      await core.fence();
      return images.prune(used, core.options.imageGraceMs ?? IMAGE_PRUNE_GRACE_MS);
    });
    if (removed !== undefined) return removed;
  }
  // The store kept changing faster than it could be read: nothing is removed this time.
  return 0;
}
