import { promises as fs } from 'node:fs';
import * as l10n from '@vscode/l10n';
import { formatBytes, formatNumber } from '../../shared/format';
import { IMAGE_EXTENSIONS, sniffImage } from '../imageBytes';
import type { PixelSize } from '../../shared/mediaSize';

/**
 * Generated media as files: names from date, prompt and index; the real format read from the bytes;
 * and the check that a downloaded video is a playable MP4 and not an error page. Writing them is
 * atomicFile.ts's job (a new name each, never replacing a file).
 */

export type ImageFormat = 'png' | 'jpeg' | 'webp';

/** The file extension for a generated image's format. */
export function imageExtension(format: ImageFormat): string {
  return IMAGE_EXTENSIONS[`image/${format}`];
}

/** The format a generated image really is (read from its bytes), whatever the server said. */
export function detectImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  switch (sniffImage(bytes)?.mediaType) {
    case 'image/png':
      return 'png';
    case 'image/jpeg':
      return 'jpeg';
    case 'image/webp':
      return 'webp';
    default:
      return undefined;
  }
}

/** A short, readable account of bytes that are not what was expected (an error page, JSON, binary). */
export function describeBytes(bytes: Uint8Array, total = bytes.length): string {
  const size = formatBytes(total);
  if (total === 0) return l10n.t('an empty body');
  const text = Buffer.from(bytes.subarray(0, 4096))
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trim();
  if (text.startsWith('<')) {
    const isXml = /^<\?xml/i.test(text) && !/<html/i.test(text);
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
    const code = /<Code>([^<]*)<\/Code>/i.exec(text)?.[1]?.trim();
    const message = /<Message>([^<]*)<\/Message>/i.exec(text)?.[1]?.trim();
    const said = [code, message].filter(Boolean).join(': ') || title;
    if (isXml)
      return said
        ? l10n.t('an XML document ({0}) saying "{1}"', size, clip(said, 160))
        : l10n.t('an XML document ({0})', size);
    return said ? l10n.t('an HTML page ({0}) saying "{1}"', size, clip(said, 160)) : l10n.t('an HTML page ({0})', size);
  }
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      const json = JSON.parse(text) as Record<string, unknown>;
      const err = json.error;
      const message =
        typeof err === 'object' && err !== null ? (err as Record<string, unknown>).message : (json.message ?? err);
      return typeof message === 'string' && message
        ? l10n.t('a JSON body ({0}) saying "{1}"', size, clip(message, 160))
        : l10n.t('a JSON body ({0})', size);
    } catch {
      return l10n.t('a JSON-like text ({0}): "{1}"', size, clip(text.replace(/\s+/g, ' '), 120));
    }
  }
  if (/^[\x09\x0a\x0d\x20-\x7e]*$/.test(text.slice(0, 200)))
    return l10n.t('text ({0}): "{1}"', size, clip(text.replace(/\s+/g, ' '), 120));
  const hex = Buffer.from(bytes.subarray(0, 8)).toString('hex').replace(/(..)/g, '$1 ').trim();
  return l10n.t('binary data ({0}) starting with {1}', size, hex);
}

export interface Mp4Check {
  ok: boolean;
  /** Why the file is not a playable MP4, in words for the user. */
  reason?: string;
  /** The top-level boxes, for logs and tests. */
  boxes: string[];
  size: number;
}

const HEAD_BYTES = 4096;

/** The file's size, and a reader of `length` bytes at `position` (fewer at the file's end, none past it). */
async function rangeReader(
  handle: fs.FileHandle,
): Promise<{ size: number; read(position: number, length: number): Promise<Buffer> }> {
  const size = (await handle.stat()).size;
  const read = async (position: number, length: number): Promise<Buffer> => {
    const buf = Buffer.alloc(Math.max(0, Math.min(length, size - position)));
    if (buf.length) await handle.read(buf, 0, buf.length, position);
    return buf;
  };
  return { size, read };
}

/**
 * Whether a file is an MP4 a player can open: top-level `ftyp`, `moov` (with at least one `trak`)
 * and `mdat` with media data, every box inside the file. HTML or XML error pages (an expired link
 * answered with 200), JSON, and files cut off in the middle are recognised and described.
 * Given an open handle (the file just written), it reads that very file and leaves the handle open.
 */
export async function checkMp4File(file: string | fs.FileHandle): Promise<Mp4Check> {
  const handle = typeof file === 'string' ? await fs.open(file, 'r') : file;
  try {
    const { size, read } = await rangeReader(handle);
    const head = await read(0, HEAD_BYTES);
    const boxes: string[] = [];
    const fail = (reason: string): Mp4Check => ({ ok: false, reason, boxes, size });
    if (size < 8 || ascii(head, 4, 8) !== 'ftyp') {
      return fail(l10n.t('it is not an MP4 video: the download was {0}', describeBytes(head, size)));
    }
    let offset = 0;
    let moov: { start: number; end: number; header: number } | undefined;
    let mediaBytes = 0;
    while (offset < size) {
      const header = await read(offset, 16);
      if (header.length < 8)
        return fail(
          l10n.t('the file is cut off: {0} stray bytes after the last complete box', formatNumber(size - offset)),
        );
      let boxSize = header.readUInt32BE(0);
      const type = ascii(header, 4, 8);
      if (!/^[\x20-\x7e]{4}$/.test(type))
        return fail(l10n.t('the file is damaged: unreadable box at byte {0}', formatNumber(offset)));
      let headerSize = 8;
      if (boxSize === 1) {
        if (header.length < 16) return fail(l10n.t('the file is cut off inside the "{0}" box header', type));
        boxSize = Number(header.readBigUInt64BE(8));
        headerSize = 16;
      } else if (boxSize === 0) {
        boxSize = size - offset;
      }
      if (boxSize < headerSize)
        return fail(
          l10n.t('the file is damaged: the "{0}" box at byte {1} has an impossible size', type, formatNumber(offset)),
        );
      boxes.push(type);
      if (offset + boxSize > size) {
        return fail(
          l10n.t(
            'the file is cut off: the "{0}" box needs {1} but only {2} arrived',
            type,
            formatBytes(offset + boxSize),
            formatBytes(size),
          ),
        );
      }
      if (type === 'moov') moov = { start: offset, end: offset + boxSize, header: headerSize };
      if (type === 'mdat') mediaBytes += boxSize - headerSize;
      offset += boxSize;
    }
    if (!moov) return fail(l10n.t('the MP4 has no "moov" box (no index of its tracks), so players cannot open it'));
    if (mediaBytes === 0) return fail(l10n.t('the MP4 has no media data ("mdat" box missing or empty)'));
    // The movie box must describe at least one track.
    let inner = moov.start + moov.header;
    let tracks = 0;
    while (inner + 8 <= moov.end) {
      const h = await read(inner, 8);
      const s = h.readUInt32BE(0);
      if (ascii(h, 4, 8) === 'trak') tracks++;
      if (s < 8) break;
      inner += s;
    }
    if (tracks === 0) return fail(l10n.t('the MP4 describes no tracks (its "moov" box has no "trak")'));
    return { ok: true, boxes, size };
  } finally {
    if (typeof file === 'string') await handle.close();
  }
}

/** How much of an image is read for its header: the JPEG frame header may follow a large EXIF block. */
const IMAGE_HEADER_BYTES = 512 * 1024;
/** A movie box larger than this is not read for its track size (real ones are kilobytes to a few megabytes). */
const MAX_MOOV_BYTES = 16 * 1024 * 1024;

/**
 * The real size in pixels of a saved image or MP4, read from the file's own header (the image's
 * format header; the MP4's first visual track header, `tkhd`), never from what was asked for.
 * Undefined when the file is missing or its header does not say.
 */
export async function readPixelSize(file: string, kind: 'image' | 'video'): Promise<PixelSize | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const { size, read } = await rangeReader(handle);
    if (kind === 'image') {
      const info = sniffImage(await read(0, IMAGE_HEADER_BYTES));
      return info?.width && info.height ? { width: info.width, height: info.height } : undefined;
    }
    return await mp4PixelSize(read, size);
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** Walks the top-level boxes to `moov`, then its `trak` boxes for the first `tkhd` with a width and height. */
async function mp4PixelSize(
  read: (position: number, length: number) => Promise<Buffer>,
  size: number,
): Promise<PixelSize | undefined> {
  let offset = 0;
  while (offset + 8 <= size) {
    const header = await read(offset, 16);
    let boxSize = header.readUInt32BE(0);
    let headerSize = 8;
    if (boxSize === 1 && header.length >= 16) {
      boxSize = Number(header.readBigUInt64BE(8));
      headerSize = 16;
    } else if (boxSize === 0) {
      boxSize = size - offset;
    }
    if (boxSize < headerSize) return undefined;
    if (ascii(header, 4, 8) === 'moov') {
      if (boxSize > MAX_MOOV_BYTES) return undefined;
      const moov = await read(offset + headerSize, boxSize - headerSize);
      for (const trak of childBoxes(moov, 0, moov.length, 'trak')) {
        for (const tkhd of childBoxes(moov, trak.start, trak.end, 'tkhd')) {
          const found = tkhdSize(moov, tkhd.start, tkhd.end);
          if (found) return found;
        }
      }
      return undefined;
    }
    offset += boxSize;
  }
  return undefined;
}

function* childBoxes(b: Buffer, start: number, end: number, type: string): Generator<{ start: number; end: number }> {
  let at = start;
  while (at + 8 <= end) {
    const boxSize = b.readUInt32BE(at);
    if (boxSize < 8 || at + boxSize > end) return;
    if (ascii(b, at + 4, at + 8) === type) yield { start: at + 8, end: at + boxSize };
    at += boxSize;
  }
}

/**
 * ISO/IEC 14496-12 track header: version and flags, then times and ids (20 bytes in version 0,
 * 32 in version 1), 52 bytes of layer, volume and matrix, then width and height as 16.16 fixed
 * point. Audio tracks have 0 × 0 and are skipped.
 */
function tkhdSize(b: Buffer, start: number, end: number): PixelSize | undefined {
  const at = start + 4 + (b[start] === 1 ? 32 : 20) + 52;
  if (at + 8 > end) return undefined;
  const width = Math.round(b.readUInt32BE(at) / 65536);
  const height = Math.round(b.readUInt32BE(at + 4) / 65536);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** `2026-09-21T14:30:05` → `20260921-143005`, in local time as the user reads file names. */
export function timestampForName(date: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}-${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

/** Letters and digits of any script, lower case, joined by dashes, at most `max` characters. */
export function slugify(text: string, max = 40, fallback = 'media'): string {
  const words = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  let slug = '';
  for (const word of words) {
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > max) {
      if (!slug) slug = word.slice(0, max);
      break;
    }
    slug = next;
  }
  return slug || fallback;
}

/** `<date>-<slug of the prompt>-<index>`, without the extension. */
export function mediaBaseName(prompt: string, index: number, date: Date, fallback: string): string {
  return `${timestampForName(date)}-${slugify(prompt, 40, fallback)}-${index}`;
}

function ascii(b: Uint8Array, start: number, end: number): string {
  return b.length >= end ? Buffer.from(b.subarray(start, end)).toString('latin1') : '';
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
