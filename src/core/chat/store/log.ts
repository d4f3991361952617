import { promises as fs } from 'node:fs';
import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { chatMessageSchema, protocolSchema, thinkingChoiceSchema } from '../../../shared/protocol';

/**
 * The log of one conversation: one JSON record per line, only ever appended to (until a rare
 * compaction rewrites it whole). Positions make replay possible from the END of the file, so that
 * opening a conversation reads the messages shown plus a margin, and appending costs one short
 * write whatever the length:
 *
 *   {"k":"m","at":…,"meta":{…}}          the whole metadata after a change (the first line is one)
 *   {"k":"a","at":…,"i":7,"m":{…}}        message 7 appended; the conversation now has 8
 *   {"k":"u","at":…,"i":7,"m":{…}}        message 7 replaced (the final state of an answer)
 *   {"k":"c","at":…,"id":"…","t":"…","r":"…"}  text / reasoning streamed since the last checkpoint
 *   {"k":"x","at":…,"i":7}                 messages 7 and later removed; the conversation has 7
 *
 * Read from the end, the newest record for a position wins, a removal hides older records at or
 * after its position, and checkpoints add to the message whose base record comes before them.
 */

/** A stored message also keeps the context text that was sent with it (shown only as a chip). */
export const storedMessageSchema = z.extend(chatMessageSchema, { context: z.optional(z.string()) });
export type StoredMessage = z.infer<typeof storedMessageSchema>;

export const metaSchema = z.object({
  id: z.string(),
  title: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  model: z.optional(z.string()),
  protocolOverride: z.optional(protocolSchema),
  enableSearch: z.optional(z.boolean()),
  // A value this version does not know (written by a newer one) reads as unset, not as damage.
  thinking: z.optional(z.catch(z.optional(thinkingChoiceSchema), undefined)),
});

const recordSchema = z.discriminatedUnion('k', [
  z.object({ k: z.literal('m'), at: z.number(), meta: metaSchema }),
  z.object({ k: z.literal('a'), at: z.number(), i: z.number(), m: storedMessageSchema }),
  z.object({ k: z.literal('u'), at: z.number(), i: z.number(), m: storedMessageSchema }),
  z.object({ k: z.literal('c'), at: z.number(), id: z.string(), t: z.optional(z.string()), r: z.optional(z.string()) }),
  z.object({ k: z.literal('x'), at: z.number(), i: z.number() }),
]);
export type LogRecord = z.infer<typeof recordSchema>;
export type Meta = z.infer<typeof metaSchema>;

/** One record as a line. The webview address of an image is worked out when a view is sent, never saved. */
export function encodeRecord(record: LogRecord): string {
  return `${JSON.stringify(record, (key, value: unknown) => (key === 'src' ? undefined : value))}\n`;
}

/** A line that is JSON but not a record: the file was damaged (or written by something else). */
export class DamagedLogError extends Error {}

/** A message replayed from the log, with the time of the last record that wrote to it. */
export interface Replayed {
  message: StoredMessage;
  lastAt: number;
}

export interface ScanResult {
  /** How many messages the conversation has; 0 when no record says otherwise. */
  total: number;
  /** Positions from `total - limit` (at least 0) to `total - 1` that were found, by position. */
  slots: Map<number, Replayed>;
  /** The newest metadata record read (only when the scan reached one). */
  meta?: Meta;
  /** The newest record's time. */
  lastAt: number;
  /** Bytes read from the file, and bytes of the records that the result is made of. */
  bytesRead: number;
  liveBytes: number;
  /** With `findId`: the position of that message, if it is in the conversation. */
  foundAt?: number;
}

export interface ScanOptions {
  /** How many of the last messages are wanted (Infinity: all). */
  limit: number;
  /** Keep reading until a metadata record is found (for rebuilding the metadata file). */
  wantMeta?: boolean;
  /** Stop as soon as the message with this id has been found (and report its position). */
  findId?: string;
}

const CHUNK = 64 * 1024;

/**
 * Lines of a file from the last to the first, each with its byte length (newline included).
 * A last line without its newline is the torn end of a write cut by a crash: it is skipped.
 */
export async function* linesBackward(handle: fs.FileHandle, size: number, counter: { read: number }): AsyncGenerator<{ line: string; bytes: number }> {
  let position = size;
  // The bytes from `position` on that were not yielded yet; once trimmed, they end with a newline.
  let rest = Buffer.alloc(0);
  let trimmed = false;
  const readMore = async (): Promise<void> => {
    const length = Math.min(CHUNK, position);
    position -= length;
    const chunk = Buffer.alloc(length);
    const { bytesRead } = await handle.read(chunk, 0, length, position);
    counter.read += bytesRead;
    rest = rest.length ? Buffer.concat([chunk.subarray(0, bytesRead), rest]) : chunk.subarray(0, bytesRead);
  };
  while (!trimmed) {
    if (position === 0) return;
    await readMore();
    const end = rest.lastIndexOf(0x0a);
    if (end >= 0) {
      // Everything after the last newline is a torn write.
      rest = rest.subarray(0, end + 1);
      trimmed = true;
    }
  }
  while (rest.length > 0) {
    const nl = rest.length >= 2 ? rest.lastIndexOf(0x0a, rest.length - 2) : -1;
    if (nl < 0 && position > 0) {
      await readMore();
      continue;
    }
    const bytes = rest.length - 1 - nl;
    if (bytes > 1) yield { line: rest.toString('utf8', nl + 1, rest.length - 1), bytes };
    rest = rest.subarray(0, nl + 1);
  }
}

export function parseRecord(line: string): LogRecord {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    throw new DamagedLogError(l10n.t('a line is not JSON: "{0}"', `${line.slice(0, 80)}${line.length > 80 ? '…' : ''}`));
  }
  const result = z.safeParse(recordSchema, data);
  if (!result.success) throw new DamagedLogError(l10n.t('a line is not a conversation record: "{0}"', `${line.slice(0, 80)}${line.length > 80 ? '…' : ''}`));
  return result.data;
}

/**
 * Replays the log from its end until the last `limit` messages are complete (and, if asked, a
 * metadata record was seen). Throws DamagedLogError for a line that is not a record.
 */
export async function scanLog(handle: fs.FileHandle, size: number, options: ScanOptions, counter: { read: number } = { read: 0 }): Promise<ScanResult> {
  const before = counter.read;
  let total: number | undefined;
  let cut = Number.POSITIVE_INFINITY;
  const slots = new Map<number, Replayed>();
  const done = new Set<string>();
  const pending = new Map<string, { text: string[]; reasoning: string[]; lastAt: number; bytes: number }>();
  let meta: Meta | undefined;
  let lastAt = 0;
  let liveBytes = 0;
  let foundAt: number | undefined;

  // The first wanted position, once the total is known, and how many wanted positions are filled.
  let from = 0;
  let filled = 0;
  const setTotal = (value: number): void => {
    total = value;
    from = Math.max(0, value - options.limit);
    for (const i of slots.keys()) if (i >= from && i < value) filled++;
  };
  const complete = (): boolean => {
    if (total === undefined) return false;
    if (options.wantMeta && !meta) return false;
    if (options.findId !== undefined && foundAt !== undefined) return true;
    return filled >= total - from;
  };

  for await (const { line, bytes } of linesBackward(handle, size, counter)) {
    const record = parseRecord(line);
    if (!lastAt) lastAt = record.at;
    switch (record.k) {
      case 'm':
        if (!meta) {
          meta = record.meta;
          liveBytes += bytes;
        }
        break;
      case 'x':
        if (total === undefined) setTotal(record.i);
        cut = Math.min(cut, record.i);
        break;
      case 'a':
      case 'u': {
        if (record.k === 'a' && total === undefined) setTotal(record.i + 1);
        if (record.i >= cut || slots.has(record.i)) break;
        if (total !== undefined && record.i >= total) break;
        const id = record.m.id;
        const deltas = pending.get(id);
        const message = deltas ? { ...record.m, text: record.m.text + deltas.text.reverse().join('') } : record.m;
        if (deltas?.reasoning.length) message.reasoning = (record.m.reasoning ?? '') + deltas.reasoning.reverse().join('');
        pending.delete(id);
        done.add(id);
        slots.set(record.i, { message, lastAt: Math.max(record.at, deltas?.lastAt ?? 0) });
        if (total !== undefined && record.i >= from) filled++;
        liveBytes += bytes + (deltas?.bytes ?? 0);
        if (options.findId === id) foundAt = record.i;
        break;
      }
      case 'c': {
        if (done.has(record.id)) break;
        const deltas = pending.get(record.id) ?? { text: [], reasoning: [], lastAt: record.at, bytes: 0 };
        if (record.t) deltas.text.push(record.t);
        if (record.r) deltas.reasoning.push(record.r);
        deltas.bytes += bytes;
        pending.set(record.id, deltas);
        break;
      }
    }
    if (complete()) break;
  }
  return { total: total ?? 0, slots, meta, lastAt, bytesRead: counter.read - before, liveBytes, foundAt };
}
