import * as l10n from '@vscode/l10n';
import * as path from 'node:path';
import type { ConversationSummary } from '../../shared/protocol';
import { ImageStore } from './images';
import type { ConversationClaims } from './store/claims';
import { StoreCore, type ConversationMeta, type ConversationStoreOptions } from './store/core';
import { describe } from './store/files';
import type { StoredMessage } from './store/log';
import { compact, pruneImages } from './store/maintenance';
import { DEFAULT_PAGE, readPage, type ConversationPage } from './store/readPath';
import { SummaryList } from './store/summaries';
import { ChangeWatcher, type StoreChange } from './store/watch';
import { StoreWriter } from './store/writePath';

/** A whole conversation: export, tests, and stores in the old format. */
export interface Conversation extends ConversationMeta {
  messages: StoredMessage[];
}

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
 * This class puts the parts together; each lives in store/: what they share (core.ts: the lock,
 * the counters, the low-level log steps), the write path (writePath.ts), the tolerant read path
 * (readPath.ts), listing (summaries.ts), maintenance (maintenance.ts: compaction, image pruning),
 * the log format (log.ts), the lock (lock.ts), change watching (watch.ts), file helpers
 * (files.ts) and the old format's migration (migration.ts).
 */
export class ConversationStore {
  /** Images of the conversations, stored once each next to them (`images/<sha256>.<ext>`). */
  readonly images: ImageStore;
  /** Bytes this instance read from and wrote to conversation logs (for tests and the benchmark). */
  readonly io: StoreCore['io'];
  private readonly core: StoreCore;
  private readonly writer: StoreWriter;
  private readonly summaries: SummaryList;
  private readonly listeners = new Set<(e: StoreChange) => void>();
  private watcher?: ChangeWatcher;
  private disposed = false;

  constructor(dir: string, options: ConversationStoreOptions = {}) {
    this.core = new StoreCore(dir, options);
    this.io = this.core.io;
    this.writer = new StoreWriter(this.core);
    this.summaries = new SummaryList(this.core);
    this.images = new ImageStore(path.join(dir, 'images'), (work) => this.core.exclusive(work));
  }

  /**
   * Where answers are claimed (store/claims.ts): an answer still marked as streaming is then shown
   * as cut as soon as its conversation's claim is free (its window closed, died or hangs), instead
   * of after STREAMING_STALE_MS without a write.
   */
  useClaims(claims: Pick<ConversationClaims, 'state'>): void {
    this.core.claimState = (id) => claims.state(id);
  }

  /** Every conversation, newest first. */
  async list(): Promise<ConversationSummary[]> {
    await this.core.ready();
    return this.summaries.list();
  }

  /** Creates and writes a new, empty conversation. */
  create(meta: Partial<Omit<ConversationMeta, 'id' | 'createdAt' | 'updatedAt'>> = {}): Promise<ConversationMeta> {
    return this.writer.create(meta);
  }

  /** The metadata and the last `limit` messages; undefined when the conversation is gone or was set aside. */
  async open(id: string, options: { limit?: number } = {}): Promise<ConversationPage | undefined> {
    await this.core.ready();
    const limit = Number.isNaN(options.limit) ? DEFAULT_PAGE : Math.max(0, options.limit ?? DEFAULT_PAGE);
    const read = await readPage(this.core, id, limit);
    if (!read) return undefined;
    if (read.compact) {
      // Compaction only saves reading time later: if it fails (a full disk), the log stays as it was.
      await compact(this.core, id).catch((err: unknown) =>
        this.core.report({
          kind: 'io',
          id,
          message: l10n.t('A long conversation could not be compacted ({0}); it stays as it is.', describe(err)),
        }),
      );
    }
    return read.page;
  }

  /** Every message (export, tests). */
  async load(id: string): Promise<Conversation | undefined> {
    const page = await this.open(id, { limit: Number.POSITIVE_INFINITY });
    return page && { ...page.meta, messages: page.messages };
  }

  /** Adds a message at the end; false (and nothing written) when the conversation was deleted. */
  append(id: string, message: StoredMessage): Promise<boolean> {
    return this.writer.append(id, message);
  }

  /** Replaces the message with that id (the final state of an answer); false when it or the conversation is gone. */
  update(id: string, message: StoredMessage): Promise<boolean> {
    return this.writer.update(id, message);
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
  checkpoint(id: string, messageId: string, delta: { text?: string; reasoning?: string }): Promise<boolean> {
    return this.writer.checkpoint(id, messageId, delta);
  }

  /** Removes that message and every later one (regenerate, edit and resend); false when it or the conversation is gone. */
  truncateFrom(id: string, messageId: string): Promise<boolean> {
    return this.writer.truncateFrom(id, messageId);
  }

  /**
   * Replaces message `fromMessageId` and every later one with `messages` (Retry, Regenerate, Edit
   * and Resend), in one write under the lock: the removal and the replacement happen together or
   * not at all. Every record is checked before a byte is written; a write that fails is cut off
   * again, and one cut by a crash counts for nothing (store/log.ts), so the old messages stay.
   * False (nothing written) when that message or the conversation is gone.
   */
  replaceFrom(id: string, fromMessageId: string, messages: StoredMessage[]): Promise<boolean> {
    return this.writer.replaceFrom(id, fromMessageId, messages);
  }

  /** Changes the title, model, protocol or search switch; a key given as undefined is cleared. */
  setMeta(id: string, patch: Partial<Omit<ConversationMeta, 'id' | 'createdAt'>>): Promise<boolean> {
    return this.writer.setMeta(id, patch);
  }

  /** Removes the conversation for every window: later writes to it (from anywhere) write nothing. */
  delete(id: string): Promise<void> {
    return this.writer.delete(id);
  }

  /** Removes stored images that no conversation refers to (see store/maintenance.ts); how many were removed. */
  pruneImages(): Promise<number> {
    return pruneImages(this.core, this.images);
  }

  /** Called when conversations change on disk, by this instance or any other window (within about a second). */
  onDidChange(listener: (e: StoreChange) => void): { dispose(): void } {
    this.listeners.add(listener);
    if (!this.watcher && !this.disposed) {
      const core = this.core;
      const watcher = new ChangeWatcher(
        core.dir,
        core.options.watchIntervalMs ?? 1000,
        (e) => {
          for (const l of [...this.listeners]) {
            try {
              l(e);
            } catch (err) {
              // One failing listener must not keep the news from the others.
              core.report({
                kind: 'io',
                message: l10n.t('A listener to chat history changes failed: {0}', describe(err)),
              });
            }
          }
        },
        core.options.watch !== 'poll',
      );
      this.watcher = watcher;
      void core
        .ready()
        .then(() => watcher.start())
        .catch((err: unknown) =>
          core.report({ kind: 'io', message: l10n.t('Changes from other windows will not show: {0}', describe(err)) }),
        );
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
}
