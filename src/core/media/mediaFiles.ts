import { randomBytes } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { GatewayError } from '../errors';

/**
 * Saving generated media: names from date, prompt and index; written atomically (a temporary file
 * in the target folder, then a hard link under the final name, which fails if the name exists, so
 * an existing file is never replaced, not even by a concurrent writer); the real format read from
 * the bytes; and the check that a downloaded video is a playable MP4 and not an error page.
 */

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export const IMAGE_EXTENSIONS: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' };

/** The image format the bytes really are (magic numbers), whatever the server said. */
export function detectImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  const b = bytes;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a) return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** A short, readable account of bytes that are not what was expected (an error page, JSON, binary). */
export function describeBytes(bytes: Uint8Array, total = bytes.length): string {
  const size = formatBytes(total);
  if (total === 0) return 'an empty body';
  const text = Buffer.from(bytes.subarray(0, 4096)).toString('utf8').replace(/^\uFEFF/, '').trim();
  if (text.startsWith('<')) {
    const isXml = /^<\?xml/i.test(text) && !/<html/i.test(text);
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
    const code = /<Code>([^<]*)<\/Code>/i.exec(text)?.[1]?.trim();
    const message = /<Message>([^<]*)<\/Message>/i.exec(text)?.[1]?.trim();
    const said = [code, message].filter(Boolean).join(': ') || title;
    return `${isXml ? 'an XML document' : 'an HTML page'} (${size})${said ? ` saying "${clip(said, 160)}"` : ''}`;
  }
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      const json = JSON.parse(text) as Record<string, unknown>;
      const err = json.error;
      const message = typeof err === 'object' && err !== null ? (err as Record<string, unknown>).message : (json.message ?? err);
      return `a JSON body (${size})${typeof message === 'string' && message ? ` saying "${clip(message, 160)}"` : ''}`;
    } catch {
      return `a JSON-like text (${size}): "${clip(text.replace(/\s+/g, ' '), 120)}"`;
    }
  }
  if (/^[\x09\x0a\x0d\x20-\x7e]*$/.test(text.slice(0, 200))) return `text (${size}): "${clip(text.replace(/\s+/g, ' '), 120)}"`;
  const hex = Buffer.from(bytes.subarray(0, 8)).toString('hex').replace(/(..)/g, '$1 ').trim();
  return `binary data (${size}) starting with ${hex}`;
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

/**
 * Whether a file is an MP4 a player can open: top-level `ftyp`, `moov` (with at least one `trak`)
 * and `mdat` with media data, every box inside the file. HTML or XML error pages (an expired link
 * answered with 200), JSON, and files cut off in the middle are recognised and described.
 */
export async function checkMp4File(file: string): Promise<Mp4Check> {
  const handle = await fs.open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const read = async (position: number, length: number): Promise<Buffer> => {
      const buf = Buffer.alloc(Math.max(0, Math.min(length, size - position)));
      if (buf.length) await handle.read(buf, 0, buf.length, position);
      return buf;
    };
    const head = await read(0, HEAD_BYTES);
    const boxes: string[] = [];
    const fail = (reason: string): Mp4Check => ({ ok: false, reason, boxes, size });
    if (size < 8 || ascii(head, 4, 8) !== 'ftyp') {
      return fail(`it is not an MP4 video: the download was ${describeBytes(head, size)}`);
    }
    let offset = 0;
    let moov: { start: number; end: number; header: number } | undefined;
    let mediaBytes = 0;
    while (offset < size) {
      const header = await read(offset, 16);
      if (header.length < 8) return fail(`the file is cut off: ${size - offset} stray bytes after the last complete box`);
      let boxSize = header.readUInt32BE(0);
      const type = ascii(header, 4, 8);
      if (!/^[\x20-\x7e]{4}$/.test(type)) return fail(`the file is damaged: unreadable box at byte ${offset}`);
      let headerSize = 8;
      if (boxSize === 1) {
        if (header.length < 16) return fail(`the file is cut off inside the "${type}" box header`);
        boxSize = Number(header.readBigUInt64BE(8));
        headerSize = 16;
      } else if (boxSize === 0) {
        boxSize = size - offset;
      }
      if (boxSize < headerSize) return fail(`the file is damaged: the "${type}" box at byte ${offset} has an impossible size`);
      boxes.push(type);
      if (offset + boxSize > size) {
        return fail(`the file is cut off: the "${type}" box needs ${formatBytes(offset + boxSize)} but only ${formatBytes(size)} arrived`);
      }
      if (type === 'moov') moov = { start: offset, end: offset + boxSize, header: headerSize };
      if (type === 'mdat') mediaBytes += boxSize - headerSize;
      offset += boxSize;
    }
    if (!moov) return fail('the MP4 has no "moov" box (no index of its tracks), so players cannot open it');
    if (mediaBytes === 0) return fail('the MP4 has no media data ("mdat" box missing or empty)');
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
    if (tracks === 0) return fail('the MP4 describes no tracks (its "moov" box has no "trak")');
    return { ok: true, boxes, size };
  } finally {
    await handle.close();
  }
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

function candidate(dir: string, base: string, ext: string, attempt: number): string {
  return path.join(dir, `${base}${attempt > 1 ? `_${attempt}` : ''}.${ext}`);
}

const MAX_NAME_ATTEMPTS = 1000;

/**
 * Gives the finished temporary file its final name: `base.ext`, else `base_2.ext`, `base_3.ext`…
 * A hard link fails when the name exists, so nothing is ever overwritten, even in a race. Where
 * the file system has no hard links, an exclusive copy does the same.
 */
async function publish(tmp: string, dir: string, base: string, ext: string): Promise<string> {
  for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt++) {
    const target = candidate(dir, base, ext, attempt);
    try {
      await fs.link(tmp, target);
      return target;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EXDEV' || code === 'ENOSYS') {
        try {
          await fs.copyFile(tmp, target, fsConstants.COPYFILE_EXCL);
          return target;
        } catch (copyErr) {
          if ((copyErr as NodeJS.ErrnoException).code === 'EEXIST') continue;
          throw copyErr;
        }
      }
      throw err;
    }
  }
  throw new GatewayError('badRequest', `No free file name for ${base}.${ext} in ${dir}.`);
}

function tempPath(dir: string, base: string): string {
  return path.join(dir, `.${base}.${randomBytes(6).toString('hex')}.part`);
}

async function writeFailure(err: unknown, dir: string): Promise<never> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOSPC') {
    throw new GatewayError('badRequest', `Could not write to ${dir} (${code}). Choose another output folder ("modelGateway.outputFolder").`, { cause: err });
  }
  throw err;
}

/** Writes bytes under a unique name in `dir` (created if missing); returns the path written. */
export async function saveBytesUnique(dir: string, base: string, ext: string, data: Uint8Array): Promise<string> {
  await fs.mkdir(dir, { recursive: true }).catch((err: unknown) => writeFailure(err, dir));
  const tmp = tempPath(dir, base);
  try {
    await fs.writeFile(tmp, data).catch((err: unknown) => writeFailure(err, dir));
    return await publish(tmp, dir, base, ext);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/**
 * Streams chunks to a temporary file in `dir`, runs `verify` on the complete file, and only then
 * gives it its unique final name. A failure anywhere (the stream, the check) leaves no file behind.
 */
export async function streamToFileUnique(
  dir: string,
  base: string,
  ext: string,
  chunks: AsyncIterable<Uint8Array>,
  verify?: (tmpFile: string) => Promise<void>,
  onBytes?: (total: number) => void,
): Promise<string> {
  await fs.mkdir(dir, { recursive: true }).catch((err: unknown) => writeFailure(err, dir));
  const tmp = tempPath(dir, base);
  try {
    const handle = await fs.open(tmp, 'wx').catch((err: unknown) => writeFailure(err, dir));
    let total = 0;
    try {
      for await (const chunk of chunks) {
        await handle.write(chunk);
        total += chunk.length;
        onBytes?.(total);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (verify) await verify(tmp);
    return await publish(tmp, dir, base, ext);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

function ascii(b: Uint8Array, start: number, end: number): string {
  return b.length >= end ? Buffer.from(b.subarray(start, end)).toString('latin1') : '';
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
