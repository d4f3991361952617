import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { conversationSummarySchema, type ConversationSummary } from '../../../shared/protocol';
import { metaSchema, readMeta } from './log';

/** The store's small file helpers: names in its folder, reading a metadata file, setting a damaged file aside. */

/** The store's cross-process lock file (see lock.ts): conversation writes and claims share it. */
export const STORE_LOCK = '.lock';

/** What a conversation id may be: it names files in the store's folder, so never a path. */
export const CONVERSATION_ID = /^[A-Za-z0-9-]+$/;

/** `id` when it is a conversation id (see CONVERSATION_ID); throws otherwise. */
export function checkId(id: string): string {
  if (!CONVERSATION_ID.test(id)) throw new Error(`Invalid conversation id "${id}".`);
  return id;
}

/**
 * What a conversation's metadata file caches from its log: the newest metadata, the message count
 * and, since `logSize` was added, how long the log was when the file was written. The log is the
 * truth: a file without `logSize`, or with a log that changed after it, is rebuilt from the log.
 */
export const metaFileSchema = z.object({
  v: z.literal(1),
  meta: metaSchema,
  messageCount: z.number(),
  logSize: z.optional(z.number()),
});
export type MetaFile = z.infer<typeof metaFileSchema>;
/** How a metadata file is read: its metadata as tolerantly as a log's (see readMeta). */
const readableMetaFileSchema = z.object({
  v: z.literal(1),
  meta: z.unknown(),
  messageCount: z.number(),
  logSize: z.optional(z.catch(z.optional(z.number()), undefined)),
});

export function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function parseSummary(file: MetaFile): ConversationSummary {
  return z.parse(conversationSummarySchema, {
    id: file.meta.id,
    title: file.meta.title,
    updatedAt: file.meta.updatedAt,
    messageCount: file.messageCount,
  });
}

export async function readMetaFile(
  file: string,
): Promise<{ ok: true; value: MetaFile; damaged?: undefined } | { ok: false; value?: undefined; damaged: boolean }> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (isMissing(err)) return { ok: false, damaged: false };
    throw err;
  }
  try {
    const result = z.safeParse(readableMetaFileSchema, JSON.parse(text));
    const meta = result.success ? readMeta(result.data.meta) : undefined;
    if (result.success && meta) return { ok: true, value: { ...result.data, meta } };
  } catch {
    // Not JSON: damaged, like JSON of the wrong shape.
  }
  return { ok: false, damaged: true };
}

/** Renames a damaged file to `<name>.damaged-<time>` next to it (kept for the user) and returns the new name. */
export async function setAside(file: string): Promise<string> {
  const aside = `${path.basename(file)}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  await fs.rename(file, path.join(path.dirname(file), aside));
  return aside;
}
