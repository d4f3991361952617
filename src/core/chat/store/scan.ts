/**
 * Reading a conversation's log (log.ts says its format) from the end: the lines backward, the
 * replay that stops as soon as the wanted messages are complete, and the check whether the log
 * changed what its metadata file holds. No `vscode` import.
 */
import { promises as fs } from 'node:fs';
import * as l10n from '@vscode/l10n';
import {
  batchOf,
  DamagedLogError,
  readLine,
  type LogRecord,
  type Meta,
  type ReadLine,
  type StoredMessage,
} from './log';

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

/**
 * Replays the log from its end until the last `limit` messages are complete (and, if asked, a
 * metadata record was seen). A line this version cannot read costs that line (see ReadLine);
 * throws DamagedLogError only for a file that has lines and not one record among them.
 */
export async function scanLog(
  handle: fs.FileHandle,
  size: number,
  options: ScanOptions,
  counter: { read: number } = { read: 0 },
): Promise<ScanResult> {
  const before = counter.read;
  const replay = new Replay(options);
  let lines = 0;
  for await (const { line, bytes } of linesBackward(handle, size, counter)) {
    lines++;
    if (replay.take(readLine(line, options.exact), bytes)) break;
  }
  if (lines > 0 && replay.records === 0)
    throw new DamagedLogError(l10n.t('not one of its lines is a conversation record'));
  return replay.result(counter.read - before);
}

/** The state of one replay from the end of a log (see scanLog). */
class Replay {
  records = 0;
  private total: number | undefined;
  private cut = Number.POSITIVE_INFINITY;
  private readonly slots = new Map<number, Replayed>();
  private readonly done = new Set<string>();
  /** Checkpoints of messages whose base record is not reached yet, newest first. */
  private readonly pending = new Map<string, { pieces: Piece[]; lastAt: number; bytes: number }>();
  private meta: Meta | undefined;
  private lastAt = 0;
  private updatedAt: number | undefined;
  private liveBytes = 0;
  private foundAt: number | undefined;
  private unread = 0;
  /** Batches met so far (newest first), and whether each is whole (its last record was met first). */
  private readonly batches = new Map<string, boolean>();
  /** The first wanted position, once the total is known, and how many wanted positions are filled. */
  private from = 0;
  private filled = 0;

  constructor(private readonly options: ScanOptions) {}

  /** Takes one line (newest first); true once the result is complete. */
  take(read: ReadLine, bytes: number): boolean {
    if (read.kind === 'damaged') {
      this.unread++;
      return false;
    }
    this.records++;
    if (this.inCutBatch(read)) return false;
    if (!this.lastAt) this.lastAt = read.kind === 'record' ? read.record.at : read.at;
    if (read.kind === 'unknown') {
      this.unread++;
      return false;
    }
    if (read.kind === 'hole') {
      this.unread++;
      this.updatedAt ??= read.at;
      this.place(read.k, read.i, read.at, bytes);
      if (read.id !== undefined) this.done.add(read.id);
      return this.complete();
    }
    if (!read.exact) this.unread++;
    this.takeRecord(read.record, bytes);
    return this.complete();
  }

  result(bytesRead: number): ScanResult {
    return {
      total: this.total ?? 0,
      slots: this.slots,
      meta: this.meta,
      lastAt: this.lastAt,
      updatedAt: this.updatedAt,
      bytesRead,
      liveBytes: this.liveBytes,
      foundAt: this.foundAt,
      unread: this.unread,
    };
  }

  /** Whether the line belongs to a batch cut short by a crash: none of such a batch happened. */
  private inCutBatch(read: Exclude<ReadLine, { kind: 'damaged' }>): boolean {
    const batch =
      read.kind === 'hole'
        ? read.batch
        : read.kind === 'record' && read.record.k === 'a'
          ? batchOf(read.record)
          : undefined;
    if (!batch) return false;
    if (!this.batches.has(batch.b)) this.batches.set(batch.b, batch.bl === 0);
    return !this.batches.get(batch.b);
  }

  private takeRecord(record: LogRecord, bytes: number): void {
    if (record.k !== 'c') this.updatedAt ??= record.k === 'm' ? record.meta.updatedAt : record.at;
    switch (record.k) {
      case 'm':
        if (!this.meta) {
          this.meta = record.meta;
          this.liveBytes += bytes;
        }
        break;
      case 'x':
        if (this.total === undefined) this.setTotal(record.i);
        this.cut = Math.min(this.cut, record.i);
        break;
      case 'a':
      case 'u':
        if (this.place(record.k, record.i, record.at, bytes, record.m) && this.options.findId === record.m.id)
          this.foundAt = record.i;
        break;
      case 'c': {
        if (this.done.has(record.id)) break;
        const deltas = this.pending.get(record.id) ?? { pieces: [], lastAt: record.at, bytes: 0 };
        deltas.pieces.push(record);
        deltas.bytes += bytes;
        this.pending.set(record.id, deltas);
        break;
      }
    }
  }

  private setTotal(value: number): void {
    this.total = value;
    this.from = Math.max(0, value - this.options.limit);
    for (const i of this.slots.keys()) if (i >= this.from && i < value) this.filled++;
  }

  private complete(): boolean {
    if (this.total === undefined) return false;
    if (this.options.wantMeta && !this.meta) return false;
    if (this.options.findId !== undefined && this.foundAt !== undefined) return true;
    return this.filled >= this.total - this.from;
  }

  /** The newest record for position `i` (readable or not) fills its slot; older ones for it are dead. */
  private place(k: 'a' | 'u', i: number, at: number, bytes: number, message?: StoredMessage): boolean {
    if (k === 'a' && this.total === undefined) this.setTotal(i + 1);
    if (i >= this.cut || this.slots.has(i)) return false;
    if (this.total !== undefined && i >= this.total) return false;
    const id = message?.id;
    const deltas = id !== undefined ? this.pending.get(id) : undefined;
    const joined = message && deltas ? join(message, deltas.pieces.reverse()) : message;
    if (id !== undefined) {
      this.pending.delete(id);
      this.done.add(id);
    }
    this.slots.set(i, { ...(joined ? { message: joined } : {}), lastAt: Math.max(at, deltas?.lastAt ?? 0) });
    if (this.total !== undefined && i >= this.from) this.filled++;
    this.liveBytes += bytes + (deltas?.bytes ?? 0);
    return true;
  }
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
