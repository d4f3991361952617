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
 *   {"k":"c","at":…,"id":"…","t":"…","o":5,"r":"…","ro":0}  text / reasoning streamed since the last
 *                                          checkpoint, and the length each had before it
 *   {"k":"x","at":…,"i":7}                 messages 7 and later removed; the conversation has 7
 *
 * An append record at a position the conversation already has replaces that message and removes
 * every later one (the conversation then ends with it): that is how Retry, Regenerate and Edit
 * replace an answer in one write. Several such records written at once are a batch: each carries
 * the batch's id (`b`) and how many of its records follow it (`bl`), and a batch whose last record
 * is missing (a crash cut the write) counts for nothing, so a removal never stands without its
 * replacement.
 *
 * Read from the end, the newest record for a position wins, a removal hides older records at or
 * after its position, and checkpoints add to the message whose base record comes before them, each
 * only where it continues the text exactly (`o`, `ro`): a piece whose write failed leaves a gap, and
 * nothing after a gap is joined (the answer's final record writes it whole).
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
  /** The id of the API key the model is called with in this conversation (several keys may list it). */
  keyId: z.optional(z.string()),
  protocolOverride: z.optional(protocolSchema),
  enableSearch: z.optional(z.boolean()),
  // A value this version does not know (written by a newer one) reads as unset, not as damage.
  thinking: z.optional(z.catch(z.optional(thinkingChoiceSchema), undefined)),
});

/** What this version writes: every record is checked against it before it reaches a file. */
const recordSchema = z.discriminatedUnion('k', [
  z.object({ k: z.literal('m'), at: z.number(), meta: metaSchema }),
  z.object({
    k: z.literal('a'),
    at: z.number(),
    i: z.number(),
    m: storedMessageSchema,
    b: z.optional(z.string()),
    bl: z.optional(z.number()),
  }),
  z.object({ k: z.literal('u'), at: z.number(), i: z.number(), m: storedMessageSchema }),
  z.object({
    k: z.literal('c'),
    at: z.number(),
    id: z.string(),
    t: z.optional(z.string()),
    o: z.optional(z.number()),
    r: z.optional(z.string()),
    ro: z.optional(z.number()),
  }),
  z.object({ k: z.literal('x'), at: z.number(), i: z.number() }),
]);
export type LogRecord = z.infer<typeof recordSchema>;
export type Meta = z.infer<typeof metaSchema>;

/**
 * A schema that reads what it can of an object: the fields named in `required` must be valid,
 * every other field of `shape` that is not (a value a newer version added to an enum, a bug) reads
 * as absent. The record on disk keeps it; this version only does not show it.
 */
function tolerant<S extends Record<string, z.ZodMiniType>>(
  shape: S,
  required: ReadonlyArray<keyof S>,
): z.ZodMiniType<Partial<z.infer<z.ZodMiniObject<S>>>> {
  const fields: Record<string, z.ZodMiniType> = {};
  for (const [key, field] of Object.entries(shape))
    fields[key] = required.includes(key) ? field : z.optional(z.catch(z.optional(field), undefined));
  // The shape is the schema's own with each optional field made forgiving: what it reads is a subset of S's type.
  return z.object(fields) as unknown as z.ZodMiniType<Partial<z.infer<z.ZodMiniObject<S>>>>;
}

/** A message as far as this version can read it: a status it does not know reads as `unknown`. */
const readableMessageSchema = z.extend(
  tolerant(storedMessageSchema.shape, ['id', 'role', 'text']) as unknown as z.ZodMiniObject<
    typeof storedMessageSchema.shape
  >,
  {
    status: z.catch(storedMessageSchema.shape.status, 'unknown' as const),
    createdAt: z.catch(z.number(), 0),
  },
);
const readableMetaSchema = tolerant(metaSchema.shape, ['id', 'title']);

/**
 * Metadata as this version reads it (from a record or the metadata file): a field it cannot read
 * is unset, never damage. Times default to 0 (the record's own time is used where one is missing).
 */
export function readMeta(data: unknown): Meta | undefined {
  const result = z.safeParse(readableMetaSchema, data);
  if (!result.success) return undefined;
  // What tolerant() let through is Meta's fields or absent; the two times are the only required ones it may have let go.
  return { ...result.data, createdAt: result.data.createdAt ?? 0, updatedAt: result.data.updatedAt ?? 0 } as Meta;
}

/** The record `data` would be if it were written now; throws with the reason when it is not one this version may write. */
export function checkRecord(data: LogRecord): LogRecord {
  const result = z.safeParse(recordSchema, data);
  if (!result.success) throw new Error(z.prettifyError(result.error));
  if ((data.k === 'a' || data.k === 'u') && data.m.status === 'unknown') {
    // `unknown` stands for a value a newer version stored; written back, it would replace that value.
    throw new Error(l10n.t('the message has a status this version does not know, which it cannot write back'));
  }
  return result.data;
}

/** One record as a line. The webview address of an image is worked out when a view is sent, never saved. */
export function encodeRecord(record: LogRecord): string {
  return `${JSON.stringify(record, (key, value: unknown) => (key === 'src' ? undefined : value))}\n`;
}

/** A log with lines none of which is a record: the file was damaged (or is not a log at all). */
export class DamagedLogError extends Error {}

/** A message replayed from the log, with the time of the last record that wrote to it. */
export interface Replayed {
  /** Absent where the newest record for the position holds a message this version cannot read. */
  message?: StoredMessage;
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
  /**
   * When the conversation last changed as its metadata file counts it (checkpoints do not count):
   * the newest metadata record's `updatedAt`, or the time of a newer message record or removal.
   */
  updatedAt?: number;
  /** Bytes read from the file, and bytes of the records that the result is made of. */
  bytesRead: number;
  liveBytes: number;
  /** With `findId`: the position of that message, if it is in the conversation. */
  foundAt?: number;
  /**
   * Lines read that this version did not read whole (skipped, or read without a value it does not
   * know; with `exact`, also records with fields it does not keep). A log with any must never be
   * rewritten from what this version made of it.
   */
  unread: number;
}

export interface ScanOptions {
  /** How many of the last messages are wanted (Infinity: all). */
  limit: number;
  /** Keep reading until a metadata record is found (for rebuilding the metadata file). */
  wantMeta?: boolean;
  /** Stop as soon as the message with this id has been found (and report its position). */
  findId?: string;
  /** Count as unread every record with a field this version would not write back (before a rewrite). */
  exact?: boolean;
}

const CHUNK = 64 * 1024;

/**
 * Lines of a file from the last to the first, each with its byte length (newline included).
 * A last line without its newline is the torn end of a write cut by a crash: it is skipped.
 */
export async function* linesBackward(
  handle: fs.FileHandle,
  size: number,
  counter: { read: number },
): AsyncGenerator<{ line: string; bytes: number }> {
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

/**
 * What one line of a log is to this version:
 * - `record`: a record it can read (`exact` when it read every field of it as written);
 * - `hole`: a message record whose message it cannot read (a role a newer version added): the
 *   position is taken (the message is not shown, and no older record for it is shown instead);
 * - `unknown`: a record of a kind or shape it does not know (a newer version's, or a bug's): skipped;
 * - `damaged`: not a record at all (not JSON, or JSON without a kind and a time).
 * Nothing here is ever an error: a line costs itself, never the conversation.
 */
export type ReadLine =
  | { kind: 'record'; record: LogRecord; exact: boolean }
  | { kind: 'hole'; k: 'a' | 'u'; at: number; i: number; id?: string; batch?: Batch }
  | { kind: 'unknown'; at: number }
  | { kind: 'damaged' };

/** Where a record belongs to a batch written at once: the batch's id and how many of its records follow. */
interface Batch {
  b: string;
  bl: number;
}

function batchOf(data: Record<string, unknown>): Batch | undefined {
  return typeof data.b === 'string' && typeof data.bl === 'number' ? { b: data.b, bl: data.bl } : undefined;
}

export function readLine(line: string, compare = false): ReadLine {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return { kind: 'damaged' };
  }
  if (!isObject(data) || typeof data.k !== 'string' || typeof data.at !== 'number') return { kind: 'damaged' };
  const strict = z.safeParse(recordSchema, data);
  if (strict.success)
    return {
      kind: 'record',
      record: strict.data,
      exact: !compare || sameJson(JSON.parse(encodeRecord(strict.data)), data),
    };
  const at = data.at;
  const i = data.i;
  switch (data.k) {
    case 'm': {
      const meta = readMeta(data.meta);
      return meta
        ? {
            kind: 'record',
            record: { k: 'm', at, meta: { ...meta, createdAt: meta.createdAt || at, updatedAt: meta.updatedAt || at } },
            exact: false,
          }
        : { kind: 'unknown', at };
    }
    case 'a':
    case 'u': {
      if (typeof i !== 'number') return { kind: 'unknown', at };
      const m = z.safeParse(readableMessageSchema, data.m);
      const batch = data.k === 'a' ? batchOf(data) : undefined;
      if (m.success) return { kind: 'record', record: { k: data.k, at, i, m: m.data, ...batch }, exact: false };
      const id = isObject(data.m) && typeof data.m.id === 'string' ? data.m.id : undefined;
      return { kind: 'hole', k: data.k, at, i, ...(id !== undefined ? { id } : {}), ...(batch ? { batch } : {}) };
    }
    case 'c':
      // A piece of text this version cannot read is not joined, and neither is anything after it (see scanLog).
      if (
        typeof data.id !== 'string' ||
        (data.t !== undefined && typeof data.t !== 'string') ||
        (data.r !== undefined && typeof data.r !== 'string')
      )
        return { kind: 'unknown', at };
      return {
        kind: 'record',
        record: {
          k: 'c',
          at,
          id: data.id,
          ...(typeof data.t === 'string' ? { t: data.t } : {}),
          ...(typeof data.o === 'number' ? { o: data.o } : {}),
          ...(typeof data.r === 'string' ? { r: data.r } : {}),
          ...(typeof data.ro === 'number' ? { ro: data.ro } : {}),
        },
        exact: false,
      };
    case 'x':
      return typeof i === 'number'
        ? { kind: 'record', record: { k: 'x', at, i }, exact: false }
        : { kind: 'unknown', at };
    default:
      return { kind: 'unknown', at };
  }
}

type Piece = Extract<LogRecord, { k: 'c' }>;

/**
 * A message with its checkpoints (oldest first) added. A piece is added where it says it starts
 * (`o` / `ro`; a piece written before offsets were recorded has none and is added where the text
 * ends); once one does not start where the text ends, neither it nor any later piece is added.
 */
function join(message: StoredMessage, pieces: Piece[]): StoredMessage {
  let text = message.text;
  let reasoning = message.reasoning ?? '';
  let textGap = false;
  let reasoningGap = false;
  for (const piece of pieces) {
    if (piece.t && !textGap) {
      if (piece.o === undefined || piece.o === text.length) text += piece.t;
      else textGap = true;
    }
    if (piece.r && !reasoningGap) {
      if (piece.ro === undefined || piece.ro === reasoning.length) reasoning += piece.r;
      else reasoningGap = true;
    }
  }
  const joined = { ...message, text };
  if (reasoning || message.reasoning !== undefined) joined.reasoning = reasoning;
  return joined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether two parsed JSON values are the same (key order aside). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (!isObject(a) || !isObject(b) || Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

/**
 * Replays the log from its end until the last `limit` messages are complete (and, if asked, a
 * metadata record was seen). A line this version cannot read costs that line (see ReadLine);
 * throws DamagedLogError only for a file that has lines and not one record among them.
 */
// eslint-disable-next-line max-lines-per-function -- over the limit when it came in; to be split (issue 32)
export async function scanLog(
  handle: fs.FileHandle,
  size: number,
  options: ScanOptions,
  counter: { read: number } = { read: 0 },
): Promise<ScanResult> {
  const before = counter.read;
  let total: number | undefined;
  let cut = Number.POSITIVE_INFINITY;
  const slots = new Map<number, Replayed>();
  const done = new Set<string>();
  /** Checkpoints of messages whose base record is not reached yet, newest first. */
  const pending = new Map<string, { pieces: Piece[]; lastAt: number; bytes: number }>();
  let meta: Meta | undefined;
  let lastAt = 0;
  let updatedAt: number | undefined;
  let liveBytes = 0;
  let foundAt: number | undefined;
  let unread = 0;
  let lines = 0;
  let records = 0;
  /** Batches met so far (newest first), and whether each is whole (its last record was met first). */
  const batches = new Map<string, boolean>();

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
  /** The newest record for position `i` (readable or not) fills its slot; older ones for it are dead. */
  const place = (k: 'a' | 'u', i: number, at: number, bytes: number, message?: StoredMessage): boolean => {
    if (k === 'a' && total === undefined) setTotal(i + 1);
    if (i >= cut || slots.has(i)) return false;
    if (total !== undefined && i >= total) return false;
    const id = message?.id;
    const deltas = id !== undefined ? pending.get(id) : undefined;
    const joined = message && deltas ? join(message, deltas.pieces.reverse()) : message;
    if (id !== undefined) {
      pending.delete(id);
      done.add(id);
    }
    slots.set(i, { ...(joined ? { message: joined } : {}), lastAt: Math.max(at, deltas?.lastAt ?? 0) });
    if (total !== undefined && i >= from) filled++;
    liveBytes += bytes + (deltas?.bytes ?? 0);
    return true;
  };

  for await (const { line, bytes } of linesBackward(handle, size, counter)) {
    lines++;
    const read = readLine(line, options.exact);
    if (read.kind === 'damaged') {
      unread++;
      continue;
    }
    records++;
    const batch =
      read.kind === 'hole'
        ? read.batch
        : read.kind === 'record' && read.record.k === 'a'
          ? batchOf(read.record)
          : undefined;
    if (batch) {
      if (!batches.has(batch.b)) batches.set(batch.b, batch.bl === 0);
      // A batch cut short by a crash: none of it happened.
      if (!batches.get(batch.b)) continue;
    }
    if (!lastAt) lastAt = read.kind === 'record' ? read.record.at : read.at;
    if (read.kind === 'unknown') {
      unread++;
      continue;
    }
    if (read.kind === 'hole') {
      unread++;
      updatedAt ??= read.at;
      place(read.k, read.i, read.at, bytes);
      if (read.id !== undefined) done.add(read.id);
      if (complete()) break;
      continue;
    }
    if (!read.exact) unread++;
    const record = read.record;
    if (record.k !== 'c') updatedAt ??= record.k === 'm' ? record.meta.updatedAt : record.at;
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
      case 'u':
        if (place(record.k, record.i, record.at, bytes, record.m) && options.findId === record.m.id) foundAt = record.i;
        break;
      case 'c': {
        if (done.has(record.id)) break;
        const deltas = pending.get(record.id) ?? { pieces: [], lastAt: record.at, bytes: 0 };
        deltas.pieces.push(record);
        deltas.bytes += bytes;
        pending.set(record.id, deltas);
        break;
      }
    }
    if (complete()) break;
  }
  if (lines > 0 && records === 0) throw new DamagedLogError(l10n.t('not one of its lines is a conversation record'));
  return {
    total: total ?? 0,
    slots,
    meta,
    lastAt,
    updatedAt,
    bytesRead: counter.read - before,
    liveBytes,
    foundAt,
    unread,
  };
}

/** A tail longer than this is not read to check a metadata file: the metadata is rebuilt instead. */
const TAIL_CHECK_MAX = 1024 * 1024;

/**
 * Whether the log changed what its metadata file holds since the file was written, when the log
 * was `from` bytes long: true if the log is now shorter, `from` is not where a record ends, or a
 * record after it (other than a checkpoint or a record this version cannot read) is there.
 */
export async function changedSince(
  handle: fs.FileHandle,
  from: number,
  size: number,
  counter: { read: number },
): Promise<boolean> {
  if (size < from || size - from > TAIL_CHECK_MAX) return true;
  if (size === from) return false;
  const start = Math.max(0, from - 1);
  const bytes = Buffer.alloc(size - start);
  const { bytesRead } = await handle.read(bytes, 0, bytes.length, start);
  counter.read += bytesRead;
  if (from > 0 && bytes[0] !== 0x0a) return true;
  const lines = bytes.toString('utf8', from - start, bytesRead).split('\n');
  // The last piece is empty (the tail ends with a newline) or a torn write: neither counts.
  lines.pop();
  return lines.some((line) => {
    const read = readLine(line);
    return read.kind === 'hole' || (read.kind === 'record' && read.record.k !== 'c');
  });
}
