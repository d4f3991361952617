/**
 * Listing: every conversation's summary, newest first, without reading a thousand files. Each
 * summary is kept with the stamp of the files it came from and read again only when they changed;
 * the whole set is saved in a cache file a reloaded window starts from; and a folder unchanged
 * since every summary was checked is listed without looking at any file (see FOLDER_SETTLE_MS).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { writeFileAtomic } from '../../atomicFile';
import { conversationSummarySchema, type ConversationSummary } from '../../../shared/protocol';
import { SUMMARY_CACHE, type StoreCore } from './core';
import { CONVERSATION_ID, isMissing, parseSummary } from './files';
import { metaOrRepair } from './readPath';
import { isRecord } from '../../validate';

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

export class SummaryList {
  /** The folder's stamp when every summary was last checked against its file, if it was settled then. */
  private settledFolder: string | undefined;

  constructor(private readonly core: StoreCore) {}

  /** Every conversation, newest first. */
  async list(): Promise<ConversationSummary[]> {
    const core = this.core;
    const names = await fs.readdir(core.dir).catch((err: unknown) => {
      if (isMissing(err)) return [] as string[];
      throw err;
    });
    const ids = names
      .filter((n) => n.endsWith('.log'))
      .map((n) => n.slice(0, -4))
      .filter((id) => CONVERSATION_ID.test(id));
    if (!core.summaries.size && ids.length) await this.loadCache();
    // Every window writes a metadata file by renaming a new one into the folder, and creates and
    // deletes logs in it: a folder unchanged since every summary was checked has unchanged
    // summaries, so a thousand conversations are listed without looking at a thousand files.
    const folder = await this.folderStamp();
    if (
      folder &&
      folder.stamp === this.settledFolder &&
      ids.length === core.summaries.size &&
      ids.every((id) => core.summaries.has(id))
    ) {
      return sortSummaries(ids.map((id) => (core.summaries.get(id) as { summary: ConversationSummary }).summary));
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
    for (const id of core.summaries.keys()) if (!present.has(id)) core.summaries.delete(id);
    // Trusted next time only if nothing changed in the folder while the files were checked, and
    // its last change was long enough before that (see FOLDER_SETTLE_MS).
    const after = await this.folderStamp();
    const settled =
      folder !== undefined &&
      after?.stamp === folder.stamp &&
      folder.changedAt <= folder.checkedAt - (core.options.folderSettleMs ?? FOLDER_SETTLE_MS) &&
      out.length === ids.length;
    const wasSettled = this.settledFolder;
    this.settledFolder = settled ? folder.stamp : undefined;
    if (misses || (settled && wasSettled !== folder.stamp)) await this.saveCache();
    return sortSummaries(out);
  }

  /**
   * A conversation's summary: from the cache when its metadata file and its log are unchanged
   * (same size, time and inode), else read (and checked against the log).
   */
  private async summary(id: string): Promise<{ summary: ConversationSummary; read: boolean } | undefined> {
    const core = this.core;
    core.io.metaChecks++;
    const [stat, log] = await Promise.all([
      fs.stat(core.metaFile(id)).catch(() => undefined),
      fs.stat(core.logFile(id)).catch(() => undefined),
    ]);
    const stamp = stat && log ? `${stat.size}:${stat.mtimeMs}:${stat.ino}/${log.size}:${log.ino}` : '';
    const cached = core.summaries.get(id);
    if (cached && stamp && cached.stamp === stamp) return { summary: cached.summary, read: false };
    const meta = await metaOrRepair(core, id);
    if (!meta) return undefined;
    const summary = parseSummary(meta);
    // Stamped before the read: a file replaced meanwhile is read again next time, never missed.
    if (stamp) core.summaries.set(id, { stamp, summary });
    return { summary, read: true };
  }

  /**
   * The summaries a window last read, with the stamps of the metadata files they came from: a new
   * window (a reload) checks each against a stat instead of reading a thousand files. Any window
   * may rewrite it (atomically, last one wins); every entry is checked before use, so an old or
   * foreign copy costs reads, never a wrong list. A damaged one is ignored.
   */
  private async loadCache(): Promise<void> {
    try {
      const data: unknown = JSON.parse(await fs.readFile(path.join(this.core.dir, SUMMARY_CACHE), 'utf8'));
      const cache = readCacheFast(data) ?? z.safeParse(summaryCacheSchema, data).data;
      if (cache) {
        for (const e of cache.entries) this.core.summaries.set(e.summary.id, { stamp: e.stamp, summary: e.summary });
        this.settledFolder = cache.folder;
      }
    } catch {
      // Missing or unreadable: every metadata file is read, as without it.
    }
  }

  private async saveCache(): Promise<void> {
    const entries = [...this.core.summaries.values()];
    const file = path.join(this.core.dir, SUMMARY_CACHE);
    const text = JSON.stringify({ v: 1, ...(this.settledFolder ? { folder: this.settledFolder } : {}), entries });
    await writeFileAtomic(file, text, { overwrite: true, durable: false }).catch(() => undefined);
  }

  /** What says whether the folder's entries changed (its times, size and inode), when it was last changed, and when this was looked at. */
  private async folderStamp(): Promise<{ stamp: string; changedAt: number; checkedAt: number } | undefined> {
    const checkedAt = Date.now();
    const stat = await fs.stat(this.core.dir).catch(() => undefined);
    if (!stat) return undefined;
    return {
      stamp: `${stat.mtimeMs}:${stat.ctimeMs}:${stat.size}:${stat.ino}`,
      changedAt: Math.max(stat.mtimeMs, stat.ctimeMs),
      checkedAt,
    };
  }
}

type SummaryCache = z.infer<typeof summaryCacheSchema>;

/**
 * The fast path in front of `summaryCacheSchema` (checking a thousand entries with the schema costs
 * a window's first list about 20 ms): the same checks written out, giving what the schema gives
 * (unknown keys left out). Undefined for anything it is not sure of, which the schema then decides.
 */
function readCacheFast(data: unknown): SummaryCache | undefined {
  if (!isRecord(data) || data.v !== 1 || !Array.isArray(data.entries)) return undefined;
  if (data.folder !== undefined && typeof data.folder !== 'string') return undefined;
  const entries: SummaryCache['entries'] = [];
  for (const e of data.entries as unknown[]) {
    if (!isRecord(e) || typeof e.stamp !== 'string' || !isRecord(e.summary)) return undefined;
    const { id, title, updatedAt, messageCount } = e.summary;
    if (
      typeof id !== 'string' ||
      typeof title !== 'string' ||
      typeof updatedAt !== 'number' ||
      typeof messageCount !== 'number'
    )
      return undefined;
    entries.push({ stamp: e.stamp, summary: { id, title, updatedAt, messageCount } });
  }
  return { v: 1, ...(data.folder !== undefined ? { folder: data.folder } : {}), entries };
}

function sortSummaries(list: ConversationSummary[]): ConversationSummary[] {
  return list.sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id));
}
