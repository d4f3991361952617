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
export interface Batch {
  b: string;
  bl: number;
}

export function batchOf(data: Record<string, unknown>): Batch | undefined {
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
      // A piece of text this version cannot read is not joined, and neither is anything after it (see scanLog in scan.ts).
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
