/*
 * Over the project's 450-line limit, knowingly: the write path (batched appends, checkpoints,
 * replacements), the tolerant read path (records this version cannot read, the log winning over
 * the metadata) and the maintenance (summaries, compaction, image pruning) all share this class's
 * cross-process lock, its stream offsets and its summary cache. Splitting them means moving that
 * shared state out first; the seams are those three.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { syncDirectory, writeFileAtomic } from '../atomicFile';
import { conversationSummarySchema, type ConversationSummary } from '../../shared/protocol';
import { ImageStore, IMAGE_PRUNE_GRACE_MS } from './images';
import { FileLock } from './store/lock';
import { GatewayError } from '../errors';
import { changedSince, checkRecord, DamagedLogError, encodeRecord, scanLog, type LogRecord, type Meta, type ScanOptions, type ScanResult, type StoredMessage } from './store/log';
import { checkId, CONVERSATION_ID, definedOnly, describe, isMissing, parseSummary, readMetaFile, setAside, STORE_LOCK, type MetaFile } from './store/files';
import { hasOldFormat, migrateOldFormat } from './store/migration';
import { PRUNE_LOCKED_READ_MAX, PRUNE_ROUNDS, readImageRefs, type SeenFile } from './store/prune';
import { ChangeWatcher, type StoreChange } from './store/watch';

export type { StoredMessage } from './store/log';
export type { StoreChange } from './store/watch';

/** What a conversation is apart from its messages. */
export type ConversationMeta = Meta;

/** A whole conversation: export, tests, and stores in the old format. */
export interface Conversation extends ConversationMeta {
  messages: StoredMessage[];
}

/** The end of a conversation, as a view opens it. */
export interface ConversationPage {
  meta: ConversationMeta;
  /** The last `limit` messages, oldest first. */
  messages: StoredMessage[];
  /** How many messages the conversation has in all. */
  total: number;
}

/** Something wrong on disk that the store worked around; the user should hear of it once. */
export interface StoreProblem {
  kind: 'damaged' | 'io';
  id?: string;
  message: string;
  /** The name a damaged file was given when it was set aside (kept in the same folder). */
  setAsideAs?: string;
}

export interface ConversationStoreOptions {
  onProblem?: (problem: StoreProblem) => void;
  /** How often the folder is looked at for other windows' changes without fs.watch (default 1 s; five times that as a safety net with it). */
  watchIntervalMs?: number;
  /** 'poll' looks at the folder only by polling (for file systems where fs.watch misses changes, and tests). */
  watch?: 'auto' | 'poll';
  /** See STREAMING_STALE_MS. */
  streamingStaleMs?: number;
  /** See IMAGE_PRUNE_GRACE_MS. */
  imageGraceMs?: number;
  /** How long a lock left by a window that stopped refreshing it is respected (default 30 s; see store/lock.ts). */
  lockStaleMs?: number;
  /** See FOLDER_SETTLE_MS (tests shorten it). */
  folderSettleMs?: number;
}

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

const interruptedText = (): string => l10n.t('The answer was interrupted when VS Code reloaded or closed; the text received until then is kept.');

const summaryCacheSchema = z.object({
  v: z.literal(1),
  /** The folder's stamp when every entry was checked against its file (see `settledFolder`). */
  folder: z.optional(z.string()),
  entries: z.array(z.object({ stamp: z.string(), summary: conversationSummarySchema })),
});

/**
 * The folder's stamp is trusted for listing (no file checked one by one) only when the folder last
 * changed at least this long before the check began: a change after it then gives the folder a
 * later time, whatever the file system's clock granularity.
 */
const FOLDER_SETTLE_MS = 2000;

const LIST_BATCH = 16;
/**
 * See loadSummaryCache; in a folder of its own, so that writing it leaves the conversations
 * folder's time alone (that time says whether any conversation changed, see `settledFolder`).
 */
const SUMMARY_CACHE = path.join('.index', 'summaries.json');

/**
 * Conversations in the extension's global storage, shared by every window of the profile (each
 * window is its own extension host process on the same folder). The files are the truth; nothing
 * is cached that is not checked against them.
 *
 * Per conversation: `<id>.log`, an append-only log of records (see store/log.ts), and
 * `<id>.meta.json`, a small file with the metadata and the message count, rewritten atomically on
 * every change so that `list` reads one small file per conversation. The log alone is enough to
 * rebuild the metadata file. Images live in `images/`, once each.
 *
 * Every write runs under one cross-process lock (`.lock`, see store/lock.ts) and opens the log
 * without O_CREAT, so a conversation deleted by any window stays deleted: later writes find no
 * log and write nothing. Reads take no lock: a log only grows (or is replaced whole by a rename),
 * and a torn last line is ignored.
 *
 * Appends are fsync'd; checkpoints of a streaming answer are not (losing the last second of a
 * stream to a power cut is acceptable, and the final `update` is fsync'd).
 *
 * Why this file is longer than the others (about 800 lines): every public operation is a locked
 * read-modify-write of a log and its metadata, and these sequences share the class's private state
 * (the lock, the summary cache, the checkpoint positions, the watcher, the problem reports);
 * splitting them apart would scatter one protocol over several files. What stands alone lives
 * beside it: the log format (store/log.ts), the lock (store/lock.ts), change watching
 * (store/watch.ts), file helpers (store/files.ts), the old format's migration
 * (store/migration.ts), what image pruning reads (store/prune.ts) and the export and view forms
 * (conversationForms.ts).
 */
export class ConversationStore {
  /** Images of the conversations, stored once each next to them (`images/<sha256>.<ext>`). */
  readonly images: ImageStore;
  /** Bytes this instance read from and wrote to conversation logs (for tests and the benchmark). */
  readonly io = { bytesRead: 0, bytesWritten: 0, metaChecks: 0 };
  private readonly lock: FileLock;
  private readonly listeners = new Set<(e: StoreChange) => void>();
  private readonly summaries = new Map<string, { stamp: string; summary: ConversationSummary }>();
  /** The folder's stamp when every summary was last checked against its file, if it was settled then. */
  private settledFolder: string | undefined;
  private watcher?: ChangeWatcher;
  /** Conversations whose unread records were reported (see reportUnread). */
  private readonly unreadReported = new Set<string>();
  /**
   * Per message being streamed (see streamKey): how long its text and reasoning are in the log and
   * the log's size after this instance's last write to it, or `gap` once a checkpoint failed.
   */
  private readonly streams = new Map<string, { text: number; reasoning: number; size: number } | 'gap'>();
  private readiness?: Promise<void>;
  private disposed = false;

  constructor(
    private readonly dir: string,
    private readonly options: ConversationStoreOptions = {},
  ) {
    this.lock = new FileLock(path.join(dir, STORE_LOCK), { staleMs: options.lockStaleMs });
    this.images = new ImageStore(path.join(dir, 'images'), (work) => this.exclusive(work));
  }

  /** Every conversation, newest first. */
  async list(): Promise<ConversationSummary[]> {
    await this.ready();
    const names = await fs.readdir(this.dir).catch((err: unknown) => {
      if (isMissing(err)) return [] as string[];
      throw err;
    });
    const ids = names.filter((n) => n.endsWith('.log')).map((n) => n.slice(0, -4)).filter((id) => CONVERSATION_ID.test(id));
    if (!this.summaries.size && ids.length) await this.loadSummaryCache();
    // Every window writes a metadata file by renaming a new one into the folder, and creates and
    // deletes logs in it: a folder unchanged since every summary was checked has unchanged
    // summaries, so a thousand conversations are listed without looking at a thousand files.
    const folder = await this.folderStamp();
    if (folder && folder.stamp === this.settledFolder && ids.length === this.summaries.size && ids.every((id) => this.summaries.has(id))) {
      return sortSummaries(ids.map((id) => (this.summaries.get(id) as { summary: ConversationSummary }).summary));
    }
    const out: ConversationSummary[] = [];
    let misses = 0;
    // A few metadata files at a time: a cold list of a thousand conversations is a thousand stats.
    for (let at = 0; at < ids.length; at += LIST_BATCH) {
      const batch = await Promise.all(ids.slice(at, at + LIST_BATCH).map((id) => this.summary(id)));
      for (const found of batch) {
        if (found?.read) misses++;
        if (found) out.push(found.summary);
      }
    }
    const present = new Set(ids);
    for (const id of this.summaries.keys()) if (!present.has(id)) this.summaries.delete(id);
    // Trusted next time only if nothing changed in the folder while the files were checked, and
    // its last change was long enough before that (see FOLDER_SETTLE_MS).
    const after = await this.folderStamp();
    const settled = folder !== undefined && after?.stamp === folder.stamp && folder.changedAt <= folder.checkedAt - (this.options.folderSettleMs ?? FOLDER_SETTLE_MS) && out.length === ids.length;
    const wasSettled = this.settledFolder;
    this.settledFolder = settled ? folder.stamp : undefined;
    if (misses || (settled && wasSettled !== folder.stamp)) await this.saveSummaryCache();
    return sortSummaries(out);
  }

  /** Creates and writes a new, empty conversation. */
  async create(meta: Partial<Omit<ConversationMeta, 'id' | 'createdAt' | 'updatedAt'>> = {}): Promise<ConversationMeta> {
    const now = Date.now();
    const created: ConversationMeta = { ...definedOnly(meta), title: meta.title ?? l10n.t('New chat'), id: randomUUID(), createdAt: now, updatedAt: now };
    // Checked before the log exists: a refused record leaves no empty conversation behind.
    const first = encodeChecked([{ k: 'm', at: now, meta: created }]);
    await this.exclusive(async () => {
      const handle = await fs.open(this.logFile(created.id), 'wx');
      let logSize: number;
      try {
        logSize = await this.write(handle, 0, first, true);
      } finally {
        await handle.close();
      }
      await this.writeMeta({ v: 1, meta: created, messageCount: 0, logSize });
    });
    return created;
  }

  /** The metadata and the last `limit` messages; undefined when the conversation is gone or was set aside. */
  async open(id: string, options: { limit?: number } = {}): Promise<ConversationPage | undefined> {
    await this.ready();
    const limit = Number.isNaN(options.limit) ? DEFAULT_PAGE : Math.max(0, options.limit ?? DEFAULT_PAGE);
    const metaFile = await this.metaOrRepair(id);
    if (!metaFile) return undefined;
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.logFile(id), 'r');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    let scan: ScanResult;
    try {
      scan = await this.scan(handle, (await handle.stat()).size, { limit });
    } catch (err) {
      if (err instanceof DamagedLogError) {
        await this.exclusive(() => this.setAsideIfDamaged(id, err.message));
        return undefined;
      }
      throw err;
    } finally {
      await handle.close();
    }
    const now = Date.now();
    const stale = this.options.streamingStaleMs ?? STREAMING_STALE_MS;
    const messages: StoredMessage[] = [];
    for (let i = Math.max(0, scan.total - limit); i < scan.total; i++) {
      const slot = scan.slots.get(i);
      // A message this version cannot read is left out of the page (it stays in the file).
      if (!slot?.message) continue;
      messages.push(slot.message.status === 'streaming' && now - slot.lastAt > stale ? interrupted(slot.message) : slot.message);
    }
    if (scan.unread) this.reportUnread(id, metaFile.meta.title);
    if (scan.bytesRead >= COMPACT_MIN_BYTES && scan.liveBytes * 3 < scan.bytesRead) {
      // Compaction only saves reading time later: if it fails (a full disk), the log stays as it was.
      await this.compact(id).catch((err: unknown) => this.report({ kind: 'io', id, message: l10n.t('A long conversation could not be compacted ({0}); it stays as it is.', describe(err)) }));
    }
    return { meta: metaFile.meta, messages, total: scan.total };
  }

  /** Every message (export, tests). */
  async load(id: string): Promise<Conversation | undefined> {
    const page = await this.open(id, { limit: Number.POSITIVE_INFINITY });
    return page && { ...page.meta, messages: page.messages };
  }

  /** Adds a message at the end; false (and nothing written) when the conversation was deleted. */
  append(id: string, message: StoredMessage): Promise<boolean> {
    return this.change(id, async (handle, size) => {
      const { total } = await this.scan(handle, size, { limit: 0 });
      const now = Date.now();
      const written = await this.write(handle, size, [{ k: 'a', at: now, i: total, m: message }], true);
      this.streamWritten(id, message, size + written);
      return { messageCount: total + 1, updatedAt: now };
    });
  }

  /** Replaces the message with that id (the final state of an answer); false when it or the conversation is gone. */
  update(id: string, message: StoredMessage): Promise<boolean> {
    return this.change(id, async (handle, size) => {
      const { total, foundAt } = await this.scan(handle, size, { limit: Number.POSITIVE_INFINITY, findId: message.id });
      if (foundAt === undefined) return undefined;
      const now = Date.now();
      const written = await this.write(handle, size, [{ k: 'u', at: now, i: foundAt, m: message }], true);
      this.streamWritten(id, message, size + written);
      return { messageCount: total, updatedAt: now };
    });
  }

  /**
   * Adds text streamed into a message since the previous checkpoint: only the new text is written,
   * so a checkpoint costs the same at the first and the thousandth. Not fsync'd (see the class).
   * An empty delta still records that the answer is alive (see STREAMING_STALE_MS).
   *
   * Each piece records where it starts in the message, and readers join only pieces that continue
   * the text exactly (store/log.ts). Once a checkpoint of a message fails (a disk error, the lock
   * held too long), later ones of that message are refused (false, nothing written) until `update`
   * writes the message whole: text saved later is never joined around the missing piece.
   * False also when the conversation or the message is gone.
   */
  async checkpoint(id: string, messageId: string, delta: { text?: string; reasoning?: string }): Promise<boolean> {
    const key = streamKey(id, messageId);
    if (this.streams.get(key) === 'gap') return false;
    try {
      return await this.change(id, async (handle, size) => {
        let saved = this.streams.get(key);
        if (saved === 'gap') return undefined;
        if (!saved || saved.size !== size) {
          // First checkpoint here, or another window wrote since: where the message ends now.
          const { slots, foundAt } = await this.scan(handle, size, { limit: Number.POSITIVE_INFINITY, findId: messageId });
          const message = foundAt === undefined ? undefined : slots.get(foundAt)?.message;
          if (!message) return undefined;
          saved = { text: message.text.length, reasoning: (message.reasoning ?? '').length, size };
        }
        const record: LogRecord = { k: 'c', at: Date.now(), id: messageId };
        if (delta.text) Object.assign(record, { t: delta.text, o: saved.text });
        if (delta.reasoning) Object.assign(record, { r: delta.reasoning, ro: saved.reasoning });
        const written = await this.write(handle, size, [record], false);
        this.streams.set(key, { text: saved.text + (delta.text?.length ?? 0), reasoning: saved.reasoning + (delta.reasoning?.length ?? 0), size: size + written });
        return 'unchanged';
      }, false);
    } catch (err) {
      this.streams.set(key, 'gap');
      throw err;
    }
  }

  /** After a message was written whole: a streaming one is checkpointed from its end, a finished one is forgotten. */
  private streamWritten(id: string, message: StoredMessage, size: number): void {
    const key = streamKey(id, message.id);
    if (message.status === 'streaming') this.streams.set(key, { text: message.text.length, reasoning: (message.reasoning ?? '').length, size });
    else this.streams.delete(key);
  }

  /** Forgets the checkpoint positions of a conversation's messages (removed, or the conversation deleted). */
  private forgetStreams(id: string): void {
    for (const key of this.streams.keys()) if (key.startsWith(streamKey(id, ''))) this.streams.delete(key);
  }

  /** Removes that message and every later one (regenerate, edit and resend); false when it or the conversation is gone. */
  truncateFrom(id: string, messageId: string): Promise<boolean> {
    return this.change(id, async (handle, size) => {
      const { foundAt } = await this.scan(handle, size, { limit: Number.POSITIVE_INFINITY, findId: messageId });
      if (foundAt === undefined) return undefined;
      const now = Date.now();
      await this.write(handle, size, [{ k: 'x', at: now, i: foundAt }], true);
      this.forgetStreams(id);
      return { messageCount: foundAt, updatedAt: now };
    });
  }

  /**
   * Replaces message `fromMessageId` and every later one with `messages` (Retry, Regenerate, Edit
   * and Resend), in one write under the lock: the removal and the replacement happen together or
   * not at all. Every record is checked before a byte is written; a write that fails is cut off
   * again, and one cut by a crash counts for nothing (store/log.ts), so the old messages stay.
   * False (nothing written) when that message or the conversation is gone.
   */
  replaceFrom(id: string, fromMessageId: string, messages: StoredMessage[]): Promise<boolean> {
    if (!messages.length) throw new Error('replaceFrom needs the messages that replace the removed ones (truncateFrom removes without replacing).');
    const batch = messages.length > 1 ? randomUUID() : undefined;
    return this.change(id, async (handle, size) => {
      const { foundAt } = await this.scan(handle, size, { limit: Number.POSITIVE_INFINITY, findId: fromMessageId });
      if (foundAt === undefined) return undefined;
      const now = Date.now();
      // An append at a position the conversation has removes that message and every later one.
      const records: LogRecord[] = messages.map((m, n) => ({ k: 'a', at: now, i: foundAt + n, m, ...(batch ? { b: batch, bl: messages.length - 1 - n } : {}) }));
      const bytes = encodeChecked(records);
      let written: number;
      try {
        written = await this.write(handle, size, bytes, true);
      } catch (err) {
        // Nothing of a failed write may count; if even this fails, readers skip the unfinished batch.
        await handle.truncate(size).catch(() => undefined);
        throw err;
      }
      this.forgetStreams(id);
      for (const m of messages) this.streamWritten(id, m, size + written);
      return { messageCount: foundAt + messages.length, updatedAt: now };
    });
  }

  /** Changes the title, model, protocol or search switch; a key given as undefined is cleared. */
  setMeta(id: string, patch: Partial<Omit<ConversationMeta, 'id' | 'createdAt'>>): Promise<boolean> {
    return this.change(id, async (handle, size, current) => {
      const now = Date.now();
      const meta: ConversationMeta = { ...current.meta, ...patch, id: current.meta.id, createdAt: current.meta.createdAt, updatedAt: patch.updatedAt ?? now };
      await this.write(handle, size, [{ k: 'm', at: now, meta }], true);
      return { meta };
    });
  }

  /** Removes the conversation for every window: later writes to it (from anywhere) write nothing. */
  async delete(id: string): Promise<void> {
    this.logFile(id);
    await this.exclusive(async () => {
      // The log first: a metadata file without its log is ignored, a log without metadata is listed.
      await fs.rm(this.logFile(id), { force: true });
      await fs.rm(this.metaFile(id), { force: true });
      await syncDirectory(this.dir);
    });
    this.summaries.delete(id);
    this.forgetStreams(id);
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
  async pruneImages(): Promise<number> {
    await this.ready();
    const seen = new Map<string, SeenFile>();
    const used = new Set<string>();
    for (let round = 0; round < PRUNE_ROUNDS; round++) {
      if ((await readImageRefs(this.dir, seen, used, Number.POSITIVE_INFINITY, (problem) => this.report(problem))) === 'failed') return 0;
      const removed = await this.exclusive(async () => {
        const read = await readImageRefs(this.dir, seen, used, PRUNE_LOCKED_READ_MAX, (problem) => this.report(problem));
        if (read === 'failed') return 0;
        if (read === 'tooMuch') return undefined;
        return this.images.prune(used, this.options.imageGraceMs ?? IMAGE_PRUNE_GRACE_MS);
      });
      if (removed !== undefined) return removed;
    }
    // The store kept changing faster than it could be read: nothing is removed this time.
    return 0;
  }

  /** Called when conversations change on disk, by this instance or any other window (within about a second). */
  onDidChange(listener: (e: StoreChange) => void): { dispose(): void } {
    this.listeners.add(listener);
    if (!this.watcher && !this.disposed) {
      const watcher = new ChangeWatcher(this.dir, this.options.watchIntervalMs ?? 1000, (e) => {
        for (const l of [...this.listeners]) {
          try {
            l(e);
          } catch (err) {
            // One failing listener must not keep the news from the others.
            this.report({ kind: 'io', message: l10n.t('A listener to chat history changes failed: {0}', describe(err)) });
          }
        }
      }, this.options.watch !== 'poll');
      this.watcher = watcher;
      void this.ready()
        .then(() => watcher.start())
        .catch((err: unknown) => this.report({ kind: 'io', message: l10n.t('Changes from other windows will not show: {0}', describe(err)) }));
    }
    return {
      dispose: () => {
        this.listeners.delete(listener);
        if (!this.listeners.size) {
          this.watcher?.dispose();
          this.watcher = undefined;
        }
      },
    };
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
    this.watcher?.dispose();
    this.watcher = undefined;
  }

  // ---- internals -------------------------------------------------------------------------------

  private ready(): Promise<void> {
    this.readiness ??= (async () => {
      // The cache's folder is made here, not at the first save: making it changes the folder's time.
      await fs.mkdir(path.join(this.dir, path.dirname(SUMMARY_CACHE)), { recursive: true });
      const names = await fs.readdir(this.dir);
      if (names.some(hasOldFormat)) await this.lock.run(() => migrateOldFormat({ dir: this.dir, logFile: (id) => this.logFile(id), writeMeta: (file) => this.writeMeta(file), report: (problem) => this.report(problem) }));
    })();
    // A failed start (a folder that could not be made) is tried again by the next call.
    this.readiness.catch(() => (this.readiness = undefined));
    return this.readiness;
  }

  private async exclusive<T>(work: () => Promise<T>): Promise<T> {
    await this.ready();
    return this.lock.run(work);
  }

  /**
   * One write to a conversation under the lock: the log is opened without O_CREAT (a deleted
   * conversation stays deleted), a torn end left by a crash is cut off first, and the metadata
   * file is rewritten when `work` says what changed. `undefined` from `work`: nothing was written.
   * `current` is checked against the log first (see metaOrRepairLocked) unless `verify` is false
   * (a checkpoint, which neither uses nor changes it, and must cost the same however long the log).
   */
  private async change(
    id: string,
    work: (handle: fs.FileHandle, size: number, current: MetaFile) => Promise<Partial<Pick<MetaFile, 'messageCount'>> & { updatedAt?: number; meta?: ConversationMeta } | 'unchanged' | undefined>,
    verify = true,
  ): Promise<boolean> {
    const file = this.logFile(id);
    return this.exclusive(async () => {
      let handle: fs.FileHandle;
      try {
        handle = await fs.open(file, 'r+');
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
      try {
        const size = await this.cutTornEnd(handle);
        const current = await this.metaOrRepairLocked(id, handle, size, verify);
        if (!current) return false;
        const changed = await work(handle, size, current);
        if (changed === undefined) return false;
        if (changed !== 'unchanged') {
          const meta = changed.meta ?? { ...current.meta, updatedAt: changed.updatedAt ?? current.meta.updatedAt };
          // Only a new title, model or switch must survive a power cut in the metadata file itself;
          // a count and a time that a crash leaves behind are set right by the next write (which
          // counts from the log), so that write skips two fsyncs per message.
          const logSize = (await handle.stat()).size;
          await this.writeMeta({ v: 1, meta, messageCount: changed.messageCount ?? current.messageCount, logSize }, changed.meta !== undefined);
        }
        return true;
      } catch (err) {
        if (err instanceof DamagedLogError) {
          await this.setAsideIfDamaged(id, err.message);
          return false;
        }
        throw err;
      } finally {
        await handle.close();
      }
    });
  }

  private async scan(handle: fs.FileHandle, size: number, options: ScanOptions): Promise<ScanResult> {
    const counter = { read: 0 };
    try {
      return await scanLog(handle, size, options, counter);
    } finally {
      this.io.bytesRead += counter.read;
    }
  }

  /** Appends records at `at`; each is checked first, so a record this version may not write reaches no file. */
  private async write(handle: fs.FileHandle, at: number, records: LogRecord[] | Buffer, sync: boolean): Promise<number> {
    const bytes = Buffer.isBuffer(records) ? records : encodeChecked(records);
    // A write may take only part of the bytes (a disk filling up): the rest is written after it,
    // and a write that then fails throws, never leaving a short line taken for a whole one.
    for (let done = 0; done < bytes.length; ) {
      const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, at + done);
      if (bytesWritten <= 0) throw new Error(l10n.t('The disk took none of the bytes written to the chat history.'));
      done += bytesWritten;
      this.io.bytesWritten += bytesWritten;
    }
    if (sync) await handle.sync();
    return bytes.length;
  }

  /** The log's size once a torn last line (a write cut by a crash, never acknowledged) is cut off. */
  private async cutTornEnd(handle: fs.FileHandle): Promise<number> {
    const size = (await handle.stat()).size;
    if (size === 0) return 0;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    if (last[0] === 0x0a) return size;
    let end = size;
    const chunk = Buffer.alloc(64 * 1024);
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      this.io.bytesRead += bytesRead;
      const nl = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (nl >= 0) {
        await handle.truncate(start + nl + 1);
        return start + nl + 1;
      }
      end = start;
    }
    await handle.truncate(0);
    return 0;
  }

  /**
   * A conversation's summary: from the cache when its metadata file and its log are unchanged
   * (same size, time and inode), else read (and checked against the log).
   */
  private async summary(id: string): Promise<{ summary: ConversationSummary; read: boolean } | undefined> {
    this.io.metaChecks++;
    const [stat, log] = await Promise.all([fs.stat(this.metaFile(id)).catch(() => undefined), fs.stat(this.logFile(id)).catch(() => undefined)]);
    const stamp = stat && log ? `${stat.size}:${stat.mtimeMs}:${stat.ino}/${log.size}:${log.ino}` : '';
    const cached = this.summaries.get(id);
    if (cached && stamp && cached.stamp === stamp) return { summary: cached.summary, read: false };
    const meta = await this.metaOrRepair(id);
    if (!meta) return undefined;
    const summary = parseSummary(meta);
    // Stamped before the read: a file replaced meanwhile is read again next time, never missed.
    if (stamp) this.summaries.set(id, { stamp, summary });
    return { summary, read: true };
  }

  /**
   * The summaries a window last read, with the stamps of the metadata files they came from: a new
   * window (a reload) checks each against a stat instead of reading a thousand files. Any window
   * may rewrite it (atomically, last one wins); every entry is checked before use, so an old or
   * foreign copy costs reads, never a wrong list. A damaged one is ignored.
   */
  private async loadSummaryCache(): Promise<void> {
    try {
      const result = z.safeParse(summaryCacheSchema, JSON.parse(await fs.readFile(path.join(this.dir, SUMMARY_CACHE), 'utf8')));
      if (result.success) {
        for (const e of result.data.entries) this.summaries.set(e.summary.id, { stamp: e.stamp, summary: e.summary });
        this.settledFolder = result.data.folder;
      }
    } catch {
      // Missing or unreadable: every metadata file is read, as without it.
    }
  }

  private async saveSummaryCache(): Promise<void> {
    const entries = [...this.summaries.values()];
    const file = path.join(this.dir, SUMMARY_CACHE);
    const text = JSON.stringify({ v: 1, ...(this.settledFolder ? { folder: this.settledFolder } : {}), entries });
    await writeFileAtomic(file, text, { overwrite: true, durable: false }).catch(() => undefined);
  }

  /** What says whether the folder's entries changed (its times, size and inode), when it was last changed, and when this was looked at. */
  private async folderStamp(): Promise<{ stamp: string; changedAt: number; checkedAt: number } | undefined> {
    const checkedAt = Date.now();
    const stat = await fs.stat(this.dir).catch(() => undefined);
    if (!stat) return undefined;
    return { stamp: `${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}:${stat.ino}`, changedAt: Math.max(stat.mtimeMs, stat.ctimeMs), checkedAt };
  }

  /**
   * The metadata file, rebuilt from the log when it is missing or damaged or the log disagrees with
   * it (see metaOrRepairLocked); undefined when the conversation is gone.
   */
  private async metaOrRepair(id: string): Promise<MetaFile | undefined> {
    const file = this.metaFile(id);
    const found = await readMetaFile(file);
    if (found.ok && found.value.logSize !== undefined) {
      // Checked without the lock: a log only grows, or is replaced whole by a rename.
      const handle = await fs.open(this.logFile(id), 'r').catch((err: unknown) => {
        if (isMissing(err)) return undefined;
        throw err;
      });
      if (!handle) return undefined;
      try {
        if (!(await this.logChangedSince(handle, found.value))) return found.value;
      } finally {
        await handle.close();
      }
    }
    return this.exclusive(async () => {
      let handle: fs.FileHandle;
      try {
        handle = await fs.open(this.logFile(id), 'r+');
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
      try {
        return await this.metaOrRepairLocked(id, handle, await this.cutTornEnd(handle));
      } catch (err) {
        if (err instanceof DamagedLogError) {
          await this.setAsideIfDamaged(id, err.message);
          return undefined;
        }
        throw err;
      } finally {
        await handle.close();
      }
    });
  }

  /** Whether the log has changed what the metadata file holds since the file was written (see changedSince). */
  private async logChangedSince(handle: fs.FileHandle, file: MetaFile, size?: number): Promise<boolean> {
    if (file.logSize === undefined) return true;
    const counter = { read: 0 };
    try {
      return await changedSince(handle, file.logSize, size ?? (await handle.stat()).size, counter);
    } finally {
      this.io.bytesRead += counter.read;
    }
  }

  /**
   * The metadata file as the log says it should be. The log is the truth: a file that is missing,
   * damaged, written without the log's size (by an older version), or behind the log (a crash
   * between the two writes, another version's write) is rebuilt from the log. With `verify` false
   * a readable file is taken as it is.
   */
  private async metaOrRepairLocked(id: string, handle: fs.FileHandle, size: number, verify = true): Promise<MetaFile | undefined> {
    const file = this.metaFile(id);
    const found = await readMetaFile(file);
    if (found.ok && (!verify || !(await this.logChangedSince(handle, found.value, size)))) return found.value;
    if (size === 0) {
      // Under the lock an empty log (once a torn write is cut off) can only be a create that
      // crashed before its first record was complete: nothing was ever stored in it.
      await fs.rm(this.logFile(id), { force: true });
      return undefined;
    }
    const scan = await this.scan(handle, size, { limit: 0, wantMeta: true });
    // Records but no metadata this version can read (a newer version's form): listed under a
    // plain title rather than set aside, since a newer window still reads it whole.
    const meta = scan.meta ?? { id, title: l10n.t('Chat'), createdAt: scan.lastAt, updatedAt: scan.lastAt };
    const rebuilt: MetaFile = { v: 1, meta: { ...meta, id, updatedAt: scan.updatedAt ?? meta.updatedAt }, messageCount: scan.total, logSize: size };
    if (found.damaged) {
      const aside = await setAside(file);
      this.report({
        kind: 'damaged',
        id,
        message: l10n.t('The details of conversation "{0}" were damaged and were rebuilt from its messages; the damaged file was kept as {1}.', rebuilt.meta.title, aside),
        setAsideAs: aside,
      });
    }
    await this.writeMeta(rebuilt);
    return rebuilt;
  }

  /** Under the lock: reads the whole log again and, if it is still damaged, moves it aside and says so. */
  private async setAsideIfDamaged(id: string, reason: string): Promise<void> {
    const file = this.logFile(id);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    try {
      await this.scan(handle, (await handle.stat()).size, { limit: Number.POSITIVE_INFINITY, wantMeta: true });
      // Read whole and fine now: it was replaced (compacted) while the first read ran.
      return;
    } catch (err) {
      if (!(err instanceof DamagedLogError)) throw err;
    } finally {
      await handle.close();
    }
    const title = (await readMetaFile(this.metaFile(id))).value?.meta.title;
    const aside = await setAside(file);
    await fs.rm(this.metaFile(id), { force: true });
    await syncDirectory(this.dir);
    this.summaries.delete(id);
    this.report({
      kind: 'damaged',
      id,
      message: title
        ? l10n.t('The conversation "{0}" could not be read ({1}). It was set aside as {2} in the chat history folder and is no longer listed.', title, reason, aside)
        : l10n.t('The conversation {0} could not be read ({1}). It was set aside as {2} in the chat history folder and is no longer listed.', id, reason, aside),
      setAsideAs: aside,
    });
  }

  /** Rewrites a log whose dead records dominate, atomically, under the lock. */
  private async compact(id: string): Promise<void> {
    await this.exclusive(async () => {
      let handle: fs.FileHandle;
      try {
        handle = await fs.open(this.logFile(id), 'r+');
      } catch (err) {
        if (isMissing(err)) return;
        throw err;
      }
      try {
        const size = await this.cutTornEnd(handle);
        const scan = await this.scan(handle, size, { limit: Number.POSITIVE_INFINITY, wantMeta: true, exact: true });
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
        await writeFileAtomic(this.logFile(id), text, { overwrite: true });
        this.io.bytesWritten += Buffer.byteLength(text);
        await this.writeMeta({ v: 1, meta, messageCount: records.length - 1, logSize: Buffer.byteLength(text) });
      } catch (err) {
        if (!(err instanceof DamagedLogError)) throw err;
      } finally {
        await handle.close();
      }
    });
  }

  /** Moves conversations in the format before logs (one JSON file each + index.json) to logs. */
  private async writeMeta(file: MetaFile, durable = true): Promise<void> {
    await writeFileAtomic(this.metaFile(file.meta.id), JSON.stringify(file), { overwrite: true, durable });
  }

  /** Says once per conversation (and instance) that some of its records are not shown by this version. */
  private reportUnread(id: string, title: string): void {
    if (this.unreadReported.has(id)) return;
    this.unreadReported.add(id);
    this.report({
      kind: 'damaged',
      id,
      message: l10n.t('Parts of the conversation "{0}" were written by a newer version of the extension or are damaged, and are not shown. They are kept in its file, unchanged.', title),
    });
  }

  private report(problem: StoreProblem): void {
    try {
      this.options.onProblem?.(problem);
    } catch {
      // A failing listener must not turn a recovered problem into a failed operation.
    }
  }

  private logFile(id: string): string {
    return path.join(this.dir, `${checkId(id)}.log`);
  }

  private metaFile(id: string): string {
    return path.join(this.dir, `${checkId(id)}.meta.json`);
  }
}

/** Records as the bytes of log lines, each checked first: a record this version may not write is refused before any byte is. */
function encodeChecked(records: LogRecord[]): Buffer {
  const text = records
    .map((record) => {
      try {
        return encodeRecord(checkRecord(record));
      } catch (err) {
        throw new GatewayError('badRequest', l10n.t('A change to a conversation was refused before anything was saved: it is not a record this version may write ({0}).', describe(err)));
      }
    })
    .join('');
  return Buffer.from(text, 'utf8');
}

function streamKey(id: string, messageId: string): string {
  return `${id}\n${messageId}`;
}

function sortSummaries(list: ConversationSummary[]): ConversationSummary[] {
  return list.sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id));
}

/** An answer still marked as streaming whose window died: keep its text, say so. */
function interrupted(m: StoredMessage): StoredMessage {
  return { ...m, status: 'cut', error: { kind: 'cancelled', message: interruptedText() } };
}

/** A title from the first user message: its first line, shortened. */
