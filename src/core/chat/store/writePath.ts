/**
 * The store's write path: every change is a locked read-modify-write of a conversation's log and
 * then its metadata file (see `change`). Appends are fsync'd; checkpoints of a streaming answer
 * are not (losing the last second of a stream to a power cut is acceptable, and the final `update`
 * is fsync'd), and write only the text added since the previous one, from positions kept per
 * message being streamed.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as l10n from '@vscode/l10n';
import { syncDirectory } from '../../atomicFile';
import { encodeChecked, type ConversationMeta, type StoreCore } from './core';
import { definedOnly, describe, isMissing, type MetaFile } from './files';
import { DamagedLogError, type LogRecord, type StoredMessage } from './log';
import { metaOrRepairLocked, setAsideIfDamaged } from './readPath';

/** What a change did to the metadata: `undefined` when nothing was written, 'unchanged' when the metadata stays. */
type Changed =
  (Partial<Pick<MetaFile, 'messageCount'>> & { updatedAt?: number; meta?: ConversationMeta }) | 'unchanged' | undefined;

export class StoreWriter {
  /**
   * Per message being streamed (see streamKey): how long its text and reasoning are in the log and
   * the log's size after this instance's last write to it, or `gap` once a checkpoint failed.
   */
  private readonly streams = new Map<string, { text: number; reasoning: number; size: number } | 'gap'>();

  constructor(private readonly core: StoreCore) {}

  async create(meta: Partial<Omit<ConversationMeta, 'id' | 'createdAt' | 'updatedAt'>>): Promise<ConversationMeta> {
    const core = this.core;
    const now = Date.now();
    const created: ConversationMeta = {
      ...definedOnly(meta),
      title: meta.title ?? l10n.t('New chat'),
      id: randomUUID(),
      createdAt: now,
      updatedAt: now,
    };
    // Checked before the log exists: a refused record leaves no empty conversation behind.
    const first = encodeChecked([{ k: 'm', at: now, meta: created }]);
    await core.exclusive(async () => {
      const handle = await fs.open(core.logFile(created.id), 'wx');
      let logSize: number;
      try {
        logSize = await core.write(handle, 0, first, true);
      } finally {
        await handle.close();
      }
      await core.writeMeta({ v: 1, meta: created, messageCount: 0, logSize });
    });
    return created;
  }

  append(id: string, message: StoredMessage): Promise<boolean> {
    return this.change(id, async (handle, size) => {
      const { total } = await this.core.scan(handle, size, { limit: 0 });
      const now = Date.now();
      const written = await this.core.write(handle, size, [{ k: 'a', at: now, i: total, m: message }], true);
      this.streamWritten(id, message, size + written);
      return { messageCount: total + 1, updatedAt: now };
    });
  }

  update(id: string, message: StoredMessage): Promise<boolean> {
    return this.change(id, async (handle, size) => {
      const { total, foundAt } = await this.core.scan(handle, size, {
        limit: Number.POSITIVE_INFINITY,
        findId: message.id,
      });
      if (foundAt === undefined) return undefined;
      const now = Date.now();
      const written = await this.core.write(handle, size, [{ k: 'u', at: now, i: foundAt, m: message }], true);
      this.streamWritten(id, message, size + written);
      return { messageCount: total, updatedAt: now };
    });
  }

  /** See ConversationStore.checkpoint. */
  async checkpoint(id: string, messageId: string, delta: { text?: string; reasoning?: string }): Promise<boolean> {
    const key = streamKey(id, messageId);
    if (this.streams.get(key) === 'gap') return false;
    try {
      return await this.change(
        id,
        async (handle, size) => {
          let saved = this.streams.get(key);
          if (saved === 'gap') return undefined;
          if (!saved || saved.size !== size) {
            // First checkpoint here, or another window wrote since: where the message ends now.
            const { slots, foundAt } = await this.core.scan(handle, size, {
              limit: Number.POSITIVE_INFINITY,
              findId: messageId,
            });
            const message = foundAt === undefined ? undefined : slots.get(foundAt)?.message;
            if (!message) return undefined;
            saved = { text: message.text.length, reasoning: (message.reasoning ?? '').length, size };
          }
          const record: LogRecord = { k: 'c', at: Date.now(), id: messageId };
          if (delta.text) Object.assign(record, { t: delta.text, o: saved.text });
          if (delta.reasoning) Object.assign(record, { r: delta.reasoning, ro: saved.reasoning });
          const written = await this.core.write(handle, size, [record], false);
          this.streams.set(key, {
            text: saved.text + (delta.text?.length ?? 0),
            reasoning: saved.reasoning + (delta.reasoning?.length ?? 0),
            size: size + written,
          });
          return 'unchanged';
        },
        false,
      );
    } catch (err) {
      this.streams.set(key, 'gap');
      throw err;
    }
  }

  truncateFrom(id: string, messageId: string): Promise<boolean> {
    return this.change(id, async (handle, size) => {
      const { foundAt } = await this.core.scan(handle, size, { limit: Number.POSITIVE_INFINITY, findId: messageId });
      if (foundAt === undefined) return undefined;
      const now = Date.now();
      await this.core.write(handle, size, [{ k: 'x', at: now, i: foundAt }], true);
      this.forgetStreams(id);
      return { messageCount: foundAt, updatedAt: now };
    });
  }

  /** See ConversationStore.replaceFrom. */
  replaceFrom(id: string, fromMessageId: string, messages: StoredMessage[]): Promise<boolean> {
    if (!messages.length)
      throw new Error(
        'replaceFrom needs the messages that replace the removed ones (truncateFrom removes without replacing).',
      );
    const batch = messages.length > 1 ? randomUUID() : undefined;
    return this.change(id, async (handle, size) => {
      const { foundAt } = await this.core.scan(handle, size, {
        limit: Number.POSITIVE_INFINITY,
        findId: fromMessageId,
      });
      if (foundAt === undefined) return undefined;
      const now = Date.now();
      // An append at a position the conversation has removes that message and every later one.
      const records: LogRecord[] = messages.map((m, n) => ({
        k: 'a',
        at: now,
        i: foundAt + n,
        m,
        ...(batch ? { b: batch, bl: messages.length - 1 - n } : {}),
      }));
      const bytes = encodeChecked(records);
      let written: number;
      try {
        written = await this.core.write(handle, size, bytes, true);
      } catch (err) {
        // Nothing of a failed write may count; if even this fails, readers skip the unfinished batch.
        // Never once the lease is lost: the bytes after `size` may be another window's by then.
        await this.core
          .fence()
          .then(() => handle.truncate(size))
          .catch(() => undefined);
        throw err;
      }
      this.forgetStreams(id);
      for (const m of messages) this.streamWritten(id, m, size + written);
      return { messageCount: foundAt + messages.length, updatedAt: now };
    });
  }

  setMeta(id: string, patch: Partial<Omit<ConversationMeta, 'id' | 'createdAt'>>): Promise<boolean> {
    return this.change(id, async (handle, size, current) => {
      const now = Date.now();
      const meta: ConversationMeta = {
        ...current.meta,
        ...patch,
        id: current.meta.id,
        createdAt: current.meta.createdAt,
        updatedAt: patch.updatedAt ?? now,
      };
      await this.core.write(handle, size, [{ k: 'm', at: now, meta }], true);
      return { meta };
    });
  }

  async delete(id: string): Promise<void> {
    const core = this.core;
    core.logFile(id);
    await core.exclusive(async () => {
      // The log first: a metadata file without its log is ignored, a log without metadata is listed.
      await core.fence();
      await fs.rm(core.logFile(id), { force: true });
      await fs.rm(core.metaFile(id), { force: true });
      await syncDirectory(core.dir);
    });
    core.summaries.delete(id);
    this.forgetStreams(id);
  }

  /** After a message was written whole: a streaming one is checkpointed from its end, a finished one is forgotten. */
  private streamWritten(id: string, message: StoredMessage, size: number): void {
    const key = streamKey(id, message.id);
    if (message.status === 'streaming')
      this.streams.set(key, { text: message.text.length, reasoning: (message.reasoning ?? '').length, size });
    else this.streams.delete(key);
  }

  /** Forgets the checkpoint positions of a conversation's messages (removed, or the conversation deleted). */
  private forgetStreams(id: string): void {
    for (const key of this.streams.keys()) if (key.startsWith(streamKey(id, ''))) this.streams.delete(key);
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
    work: (handle: fs.FileHandle, size: number, current: MetaFile) => Promise<Changed>,
    verify = true,
  ): Promise<boolean> {
    const core = this.core;
    const file = core.logFile(id);
    return core.exclusive(async () => {
      let handle: fs.FileHandle;
      try {
        handle = await fs.open(file, 'r+');
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
      try {
        const size = await core.cutTornEnd(handle);
        const current = await metaOrRepairLocked(core, id, handle, size, verify);
        if (!current) return false;
        const changed = await work(handle, size, current);
        if (changed === undefined) return false;
        if (changed !== 'unchanged') {
          const meta = changed.meta ?? { ...current.meta, updatedAt: changed.updatedAt ?? current.meta.updatedAt };
          // Only a new title, model or switch must survive a power cut in the metadata file itself;
          // a count and a time that a crash leaves behind are set right by the next write (which
          // counts from the log), so that write skips two fsyncs per message.
          const logSize = (await handle.stat()).size;
          await core
            .writeMeta(
              { v: 1, meta, messageCount: changed.messageCount ?? current.messageCount, logSize },
              changed.meta !== undefined,
            )
            // The log write is durable: the change happened, and readers rebuild the metadata from the
            // log (it records the log's size). Telling the caller "nothing was changed" would be false.
            .catch((err: unknown) => metaNotSaved(core, id, meta.title, err));
        }
        return true;
      } catch (err) {
        if (err instanceof DamagedLogError) {
          await setAsideIfDamaged(core, id, err.message);
          return false;
        }
        throw err;
      } finally {
        await handle.close();
      }
    });
  }
}

function streamKey(id: string, messageId: string): string {
  return `${id}\n${messageId}`;
}

/** The change is in the log, but the metadata file could not follow: said as such, never as a change that failed. */
function metaNotSaved(core: StoreCore, id: string, title: string, err: unknown): void {
  core.report({
    kind: 'io',
    id,
    message: l10n.t(
      'The change to "{0}" was saved, but its details file could not be updated ({1}); it is rebuilt from the conversation the next time it is read.',
      title,
      describe(err),
    ),
  });
}
