/**
 * What every part of the conversation store shares (conversationStore.ts composes them): the
 * folder, the cross-process lock every write runs under, the byte counters, the summaries the
 * listing keeps (a set-aside or deleted conversation leaves them), the problem reports, and the
 * low-level steps on a log that the write path, the read path and the maintenance all take.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { writeFileAtomic } from '../../atomicFile';
import { GatewayError } from '../../errors';
import type { ConversationSummary } from '../../../shared/protocol';
import type { ClaimState } from './claims';
import { checkId, describe, STORE_LOCK, type MetaFile } from './files';
import { FileLock, type FileLockOptions } from './lock';
import { checkRecord, encodeRecord, type LogRecord, type Meta } from './log';
import { scanLog, type ScanOptions, type ScanResult } from './scan';
import { hasOldFormat, migrateOldFormat } from './migration';
import { words } from '../../../shared/words';

/** What a conversation is apart from its messages. */
export type ConversationMeta = Meta;

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
  /** The lock's clock, heartbeat and fence hook (tests; see FileLockOptions). */
  lock?: Omit<FileLockOptions, 'staleMs'>;
  /** See FOLDER_SETTLE_MS (tests shorten it). */
  folderSettleMs?: number;
}

/**
 * See the summary cache (store/summaries.ts); in a folder of its own, so that writing it leaves the
 * conversations folder's time alone (that time says whether any conversation changed).
 */
export const SUMMARY_CACHE = path.join('.index', 'summaries.json');

export class StoreCore {
  /** Bytes read from and written to conversation logs (for tests and the benchmark). */
  readonly io = { bytesRead: 0, bytesWritten: 0, metaChecks: 0 };
  readonly lock: FileLock;
  /** Each conversation's summary with the stamp of the files it was read from (see store/summaries.ts). */
  readonly summaries = new Map<string, { stamp: string; summary: ConversationSummary }>();
  /** Conversations whose unread records were reported (see store/readPath.ts). */
  readonly unreadReported = new Set<string>();
  private readiness?: Promise<void>;
  /** Whose the claim on a conversation is (see ConversationStore.useClaims); unset: not known. */
  claimState?: (id: string) => Promise<ClaimState>;

  constructor(
    readonly dir: string,
    readonly options: ConversationStoreOptions,
  ) {
    this.lock = new FileLock(path.join(dir, STORE_LOCK), { ...options.lock, staleMs: options.lockStaleMs });
  }

  logFile(id: string): string {
    return path.join(this.dir, `${checkId(id)}.log`);
  }

  metaFile(id: string): string {
    return path.join(this.dir, `${checkId(id)}.meta.json`);
  }

  report(problem: StoreProblem): void {
    try {
      this.options.onProblem?.(problem);
    } catch {
      // A failing listener must not turn a recovered problem into a failed operation.
    }
  }

  ready(): Promise<void> {
    this.readiness ??= (async () => {
      // The cache's folder is made here, not at the first save: making it changes the folder's time.
      await fs.mkdir(path.join(this.dir, path.dirname(SUMMARY_CACHE)), { recursive: true });
      const names = await fs.readdir(this.dir);
      if (names.some(hasOldFormat))
        await this.lock.run(() =>
          migrateOldFormat({
            dir: this.dir,
            logFile: (id) => this.logFile(id),
            writeMeta: (file) => this.writeMeta(file),
            report: (problem) => this.report(problem),
          }),
        );
    })();
    // A failed start (a folder that could not be made) is tried again by the next call.
    this.readiness.catch(() => (this.readiness = undefined));
    return this.readiness;
  }

  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    await this.ready();
    return this.lock.run(work);
  }

  /** Throws LEASE_LOST unless the lock `exclusive` runs under is still this window's: the last step before any write. */
  fence(): Promise<void> {
    return this.lock.fence();
  }

  async scan(handle: fs.FileHandle, size: number, options: ScanOptions): Promise<ScanResult> {
    const counter = { read: 0 };
    try {
      return await scanLog(handle, size, options, counter);
    } finally {
      this.io.bytesRead += counter.read;
    }
  }

  /** Appends records at `at`; each is checked first, so a record this version may not write reaches no file. */
  async write(handle: fs.FileHandle, at: number, records: LogRecord[] | Buffer, sync: boolean): Promise<number> {
    const bytes = Buffer.isBuffer(records) ? records : encodeChecked(records);
    await this.fence();
    // A write may take only part of the bytes (a disk filling up): the rest is written after it,
    // and a write that then fails throws, never leaving a short line taken for a whole one.
    for (let done = 0; done < bytes.length;) {
      const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, at + done);
      if (bytesWritten <= 0) throw new Error(l10n.t('The disk took none of the bytes written to the chat history.'));
      done += bytesWritten;
      this.io.bytesWritten += bytesWritten;
    }
    if (sync) await handle.sync();
    return bytes.length;
  }

  /** The log's size once a torn last line (a write cut by a crash, never acknowledged) is cut off. */
  async cutTornEnd(handle: fs.FileHandle): Promise<number> {
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
        await this.fence();
        await handle.truncate(start + nl + 1);
        return start + nl + 1;
      }
      end = start;
    }
    await this.fence();
    await handle.truncate(0);
    return 0;
  }

  /** Rewrites a conversation's metadata file (atomically). */
  async writeMeta(file: MetaFile, durable = true): Promise<void> {
    await writeFileAtomic(this.metaFile(file.meta.id), JSON.stringify(file), {
      overwrite: true,
      durable,
      beforeRename: () => this.fence(),
    });
  }
}

/** Records as the bytes of log lines, each checked first: a record this version may not write is refused before any byte is. */
export function encodeChecked(records: LogRecord[]): Buffer {
  const text = records
    .map((record) => {
      try {
        return encodeRecord(checkRecord(record));
      } catch (err) {
        throw new GatewayError(
          'badRequest',
          words(
            'A change to a conversation was refused before anything was saved: it is not a record this version may write ({0}).',
            describe(err),
          ),
        );
      }
    })
    .join('');
  return Buffer.from(text, 'utf8');
}
