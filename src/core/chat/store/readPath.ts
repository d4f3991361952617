/**
 * The store's tolerant read path: a conversation's page of messages, and its metadata file as the
 * log says it should be. The log is the truth; a metadata file that is missing, damaged or behind
 * it is rebuilt, records this version cannot read are left out (and said once), an answer whose
 * window died is shown as cut, and a log that cannot be read at all is set aside, never deleted.
 * Reads take no lock (a log only grows, or is replaced whole by a rename); repairs take it.
 */
import { promises as fs } from 'node:fs';
import * as l10n from '@vscode/l10n';
import { syncDirectory } from '../../atomicFile';
import { isMissing, readMetaFile, setAside, type MetaFile } from './files';
import { DamagedLogError, type StoredMessage } from './log';
import { changedSince, type ScanResult } from './scan';
import type { ConversationMeta, StoreCore } from './core';

/** How many of the last messages `open` returns unless told otherwise. */
export const DEFAULT_PAGE = 50;

/**
 * An answer still marked as streaming is reported as cut (its window died) only when nothing was
 * written to it for this long: another window may be streaming it right now, and a live writer
 * checkpoints at least every few seconds (an empty checkpoint is a heartbeat while a model thinks).
 */
export const STREAMING_STALE_MS = 30_000;

/** A log is rewritten without its dead records when a read of over this many bytes was mostly dead. */
const COMPACT_MIN_BYTES = 1024 * 1024;

/** The end of a conversation, as a view opens it. */
export interface ConversationPage {
  meta: ConversationMeta;
  /** The last `limit` messages, oldest first. */
  messages: StoredMessage[];
  /** How many messages the conversation has in all. */
  total: number;
}

const interruptedText = (): string =>
  l10n.t('The answer was interrupted when VS Code reloaded or closed; the text received until then is kept.');

/**
 * The metadata and the last `limit` messages; undefined when the conversation is gone or was set
 * aside. `compact` says the read was mostly dead records (the caller may rewrite the log).
 */
export async function readPage(
  core: StoreCore,
  id: string,
  limit: number,
): Promise<{ page: ConversationPage; compact: boolean } | undefined> {
  const metaFile = await metaOrRepair(core, id);
  if (!metaFile) return undefined;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(core.logFile(id), 'r');
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  let scan: ScanResult;
  try {
    scan = await core.scan(handle, (await handle.stat()).size, { limit });
  } catch (err) {
    if (err instanceof DamagedLogError) {
      await core.exclusive(() => setAsideIfDamaged(core, id, err.message));
      return undefined;
    }
    throw err;
  } finally {
    await handle.close();
  }
  const isCut = await cutTest(core, id, scan);
  const messages: StoredMessage[] = [];
  for (let i = Math.max(0, scan.total - limit); i < scan.total; i++) {
    const slot = scan.slots.get(i);
    // A message this version cannot read is left out of the page (it stays in the file).
    if (!slot?.message) continue;
    messages.push(slot.message.status === 'streaming' && isCut(slot.lastAt) ? interrupted(slot.message) : slot.message);
  }
  if (scan.unread) reportUnread(core, id, metaFile.meta.title);
  const compact = scan.bytesRead >= COMPACT_MIN_BYTES && scan.liveBytes * 3 < scan.bytesRead;
  return { page: { meta: metaFile.meta, messages, total: scan.total }, compact };
}

/**
 * Whether an answer still marked as streaming, last written at `lastAt`, was cut: where claims are
 * known, as soon as no window holds the conversation's claim; otherwise after STREAMING_STALE_MS
 * without a write.
 */
async function cutTest(core: StoreCore, id: string, scan: ScanResult): Promise<(lastAt: number) => boolean> {
  const streaming = [...scan.slots.values()].some((slot) => slot.message?.status === 'streaming');
  if (streaming && core.claimState) {
    const state = await core.claimState(id).catch(() => undefined);
    if (state !== undefined) return () => state === 'free';
  }
  const now = Date.now();
  const stale = core.options.streamingStaleMs ?? STREAMING_STALE_MS;
  return (lastAt) => now - lastAt > stale;
}

/**
 * The metadata file, rebuilt from the log when it is missing or damaged or the log disagrees with
 * it (see metaOrRepairLocked); undefined when the conversation is gone.
 */
export async function metaOrRepair(core: StoreCore, id: string): Promise<MetaFile | undefined> {
  const file = core.metaFile(id);
  const found = await readMetaFile(file);
  if (found.ok && found.value.logSize !== undefined) {
    // Checked without the lock: a log only grows, or is replaced whole by a rename.
    const handle = await fs.open(core.logFile(id), 'r').catch((err: unknown) => {
      if (isMissing(err)) return undefined;
      throw err;
    });
    if (!handle) return undefined;
    try {
      if (!(await logChangedSince(core, handle, found.value))) return found.value;
    } finally {
      await handle.close();
    }
  }
  return core.exclusive(async () => {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(core.logFile(id), 'r+');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    try {
      return await metaOrRepairLocked(core, id, handle, await core.cutTornEnd(handle));
    } catch (err) {
      if (err instanceof DamagedLogError) {
        await setAsideIfDamaged(core, id, err.message);
        return undefined;
      }
      throw err;
    } finally {
      await handle.close();
    }
  });
}

/** Whether the log has changed what the metadata file holds since the file was written (see changedSince). */
async function logChangedSince(
  core: StoreCore,
  handle: fs.FileHandle,
  file: MetaFile,
  size?: number,
): Promise<boolean> {
  if (file.logSize === undefined) return true;
  const counter = { read: 0 };
  try {
    return await changedSince(handle, file.logSize, size ?? (await handle.stat()).size, counter);
  } finally {
    core.io.bytesRead += counter.read;
  }
}

/**
 * The metadata file as the log says it should be. The log is the truth: a file that is missing,
 * damaged, written without the log's size (by an older version), or behind the log (a crash
 * between the two writes, another version's write) is rebuilt from the log. With `verify` false
 * a readable file is taken as it is.
 */
export async function metaOrRepairLocked(
  core: StoreCore,
  id: string,
  handle: fs.FileHandle,
  size: number,
  verify = true,
): Promise<MetaFile | undefined> {
  const file = core.metaFile(id);
  const found = await readMetaFile(file);
  if (found.ok && (!verify || !(await logChangedSince(core, handle, found.value, size)))) return found.value;
  if (size === 0) {
    // Under the lock an empty log (once a torn write is cut off) can only be a create that
    // crashed before its first record was complete: nothing was ever stored in it.
    await core.fence();
    await fs.rm(core.logFile(id), { force: true });
    return undefined;
  }
  const scan = await core.scan(handle, size, { limit: 0, wantMeta: true });
  // Records but no metadata this version can read (a newer version's form): listed under a
  // plain title rather than set aside, since a newer window still reads it whole.
  const meta = scan.meta ?? { id, title: l10n.t('Chat'), createdAt: scan.lastAt, updatedAt: scan.lastAt };
  const rebuilt: MetaFile = {
    v: 1,
    meta: { ...meta, id, updatedAt: scan.updatedAt ?? meta.updatedAt },
    messageCount: scan.total,
    logSize: size,
  };
  if (found.damaged) {
    await core.fence();
    const aside = await setAside(file);
    core.report({
      kind: 'damaged',
      id,
      message: l10n.t(
        'The details of conversation "{0}" were damaged and were rebuilt from its messages; the damaged file was kept as {1}.',
        rebuilt.meta.title,
        aside,
      ),
      setAsideAs: aside,
    });
  }
  await core.writeMeta(rebuilt);
  return rebuilt;
}

/** Under the lock: reads the whole log again and, if it is still damaged, moves it aside and says so. */
export async function setAsideIfDamaged(core: StoreCore, id: string, reason: string): Promise<void> {
  const file = core.logFile(id);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    if (isMissing(err)) return;
    throw err;
  }
  try {
    await core.scan(handle, (await handle.stat()).size, { limit: Number.POSITIVE_INFINITY, wantMeta: true });
    // Read whole and fine now: it was replaced (compacted) while the first read ran.
    return;
  } catch (err) {
    if (!(err instanceof DamagedLogError)) throw err;
  } finally {
    await handle.close();
  }
  const title = (await readMetaFile(core.metaFile(id))).value?.meta.title;
  await core.fence();
  const aside = await setAside(file);
  await fs.rm(core.metaFile(id), { force: true });
  await syncDirectory(core.dir);
  core.summaries.delete(id);
  core.report({
    kind: 'damaged',
    id,
    message: title
      ? l10n.t(
          'The conversation "{0}" could not be read ({1}). It was set aside as {2} in the chat history folder and is no longer listed.',
          title,
          reason,
          aside,
        )
      : l10n.t(
          'The conversation {0} could not be read ({1}). It was set aside as {2} in the chat history folder and is no longer listed.',
          id,
          reason,
          aside,
        ),
    setAsideAs: aside,
  });
}

/** Says once per conversation (and store instance) that some of its records are not shown by this version. */
function reportUnread(core: StoreCore, id: string, title: string): void {
  if (core.unreadReported.has(id)) return;
  core.unreadReported.add(id);
  core.report({
    kind: 'damaged',
    id,
    message: l10n.t(
      'Parts of the conversation "{0}" were written by a newer version of the extension or are damaged, and are not shown. They are kept in its file, unchanged.',
      title,
    ),
  });
}

/** An answer still marked as streaming whose window died: keep its text, say so. */
function interrupted(m: StoredMessage): StoredMessage {
  return { ...m, status: 'cut', error: { kind: 'cancelled', message: interruptedText() } };
}
