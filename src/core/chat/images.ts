import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { GatewayError } from '../errors';
import { writeFileAtomic } from '../output';

/**
 * Images sent with chat messages. All three protocols accept PNG, JPEG, GIF and WebP (Chat
 * Completions `image_url` data URLs, Responses `input_image`, Messages `image` blocks with a
 * base64 source and `media_type`), so only those go out; the format is read from the bytes, never
 * from a file name or a browser's guess.
 *
 * Too large an image is refused with its size and the limit rather than scaled down: scaling needs
 * an image codec (decoding PNG, JPEG, GIF and WebP and encoding one of them again), and a codec in
 * the extension host would be a heavy native or WebAssembly dependency for a rare case. The limit
 * is a setting (`modelGateway.chat.imageMaxBytes`, default 5 MiB: the Messages protocol's own
 * per-image limit, which is the smallest of the three).
 */

export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export const IMAGE_MEDIA_TYPES: readonly ImageMediaType[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

export const DEFAULT_IMAGE_MAX_BYTES = 5 * 1024 * 1024;

/** More images than this in one message is refused (the protocols' own limits are higher). */
export const MAX_IMAGES_PER_MESSAGE = 20;

export interface ImageInfo {
  mediaType: ImageMediaType;
  /** Short name for people: PNG, JPEG, GIF, WebP. */
  format: string;
  width?: number;
  height?: number;
}

const FORMAT_NAMES: Record<ImageMediaType, string> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/gif': 'GIF', 'image/webp': 'WebP' };
const EXTENSIONS: Record<ImageMediaType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

function ascii(bytes: Uint8Array, start: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(start, start + length));
}

const u16be = (b: Uint8Array, i: number) => ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
const u16le = (b: Uint8Array, i: number) => (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
const u24le = (b: Uint8Array, i: number) => u16le(b, i) | ((b[i + 2] ?? 0) << 16);
const u32be = (b: Uint8Array, i: number) => u16be(b, i) * 65536 + u16be(b, i + 2);

/** The format (and, where the header says, the size) of an image the protocols accept; undefined otherwise. */
export function sniffImage(bytes: Uint8Array): ImageInfo | undefined {
  if (bytes.length >= 24 && bytes[0] === 0x89 && ascii(bytes, 1, 3) === 'PNG' && ascii(bytes, 12, 4) === 'IHDR') {
    return { mediaType: 'image/png', format: 'PNG', width: u32be(bytes, 16), height: u32be(bytes, 20) };
  }
  if (bytes.length >= 10 && (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a')) {
    return { mediaType: 'image/gif', format: 'GIF', width: u16le(bytes, 6), height: u16le(bytes, 8) };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return { mediaType: 'image/jpeg', format: 'JPEG', ...jpegSize(bytes) };
  }
  if (bytes.length >= 16 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') {
    return { mediaType: 'image/webp', format: 'WebP', ...webpSize(bytes) };
  }
  return undefined;
}

function jpegSize(b: Uint8Array): { width?: number; height?: number } {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return {};
    const marker = b[i + 1] ?? 0;
    if (marker === 0xff) {
      i++;
      continue;
    }
    // Markers without a length: TEM, RSTn, SOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2;
      continue;
    }
    const length = u16be(b, i + 2);
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: u16be(b, i + 5), width: u16be(b, i + 7) };
    }
    if (marker === 0xda || marker === 0xd9 || length < 2) return {};
    i += 2 + length;
  }
  return {};
}

function webpSize(b: Uint8Array): { width?: number; height?: number } {
  const chunk = ascii(b, 12, 4);
  if (chunk === 'VP8X' && b.length >= 30) return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  if (chunk === 'VP8L' && b.length >= 25) {
    const bits = (b[21] ?? 0) | ((b[22] ?? 0) << 8) | ((b[23] ?? 0) << 16) | ((b[24] ?? 0) << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8 ' && b.length >= 30) return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  return {};
}

/** What a file that is not an accepted image looks like, for the refusal message. */
function otherFormat(bytes: Uint8Array): string | undefined {
  const head = ascii(bytes, 0, 16);
  if (head.startsWith('BM')) return 'BMP';
  if (head.startsWith('II*\0') || head.startsWith('MM\0*')) return 'TIFF';
  if (head.slice(4, 8) === 'ftyp') return /avif|avis/.test(head) ? 'AVIF' : /hei|mif1|msf1/.test(head) ? 'HEIC' : 'a video or HEIF container';
  if (head.startsWith('%PDF')) return 'PDF';
  if (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 1 && bytes[3] === 0) return 'ICO';
  if (/^\s*(<\?xml|<svg)/i.test(ascii(bytes, 0, 64))) return 'SVG';
  return undefined;
}

export function formatName(mediaType: ImageMediaType): string {
  return FORMAT_NAMES[mediaType];
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** "PNG 48×48, 2.1 KB" */
export function describeImage(info: { mediaType: ImageMediaType; bytes: number; width?: number; height?: number }): string {
  const size = info.width && info.height ? ` ${info.width}×${info.height}` : '';
  return `${FORMAT_NAMES[info.mediaType]}${size}, ${formatBytes(info.bytes)}`;
}

/**
 * Checks bytes meant to go to a model as an image: an accepted format and not over `maxBytes`.
 * Throws a GatewayError whose message names the file, what it is, its size and the limit.
 */
export function checkImage(bytes: Uint8Array, name: string, maxBytes: number): ImageInfo {
  if (bytes.length === 0) throw new GatewayError('badRequest', `${name} is empty; there is no image to send.`);
  const info = sniffImage(bytes);
  if (!info) {
    const other = otherFormat(bytes);
    throw new GatewayError(
      'badRequest',
      `${name} is ${other ? `a ${other} file` : 'not an image the chat protocols accept'}. Models take PNG, JPEG, GIF and WebP images; convert it to one of those first.`,
    );
  }
  if (bytes.length > maxBytes) {
    throw new GatewayError(
      'tooLarge',
      `${name} is ${formatBytes(bytes.length)} (${bytes.length.toLocaleString('en-US')} bytes), over the ${formatBytes(maxBytes)} limit for chat images. Make it smaller (fewer pixels, or JPEG/WebP instead of PNG), or raise "modelGateway.chat.imageMaxBytes" if your models accept more (the Messages protocol refuses images over 5 MB).`,
    );
  }
  return info;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A stored image as messages refer to it: by the SHA-256 of its bytes. */
export interface StoredImageRef {
  id: string;
  mediaType: ImageMediaType;
}

/** Runs work while no other window changes the store (a cross-process lock); by default, at once. */
export type Exclusive = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * How long an image no conversation refers to is kept: it may be attached to a message another
 * window has not sent yet (pending attachments are in no conversation). `put` refreshes the
 * file's time, so the grace runs from the last time any window attached the image.
 */
export const IMAGE_PRUNE_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * Images of conversations as files, named by the SHA-256 of their bytes: an image sent in many
 * messages (or re-sent with every later turn as history) is stored once, and the conversation
 * files only hold the reference. `prune` removes files nothing refers to, and only once they have
 * not been attached for a grace period; `put` and `prune` run under the store's lock, so an image
 * attached in one window is never removed between its check and its use by a prune in another.
 */
export class ImageStore {
  constructor(
    readonly dir: string,
    private readonly exclusive: Exclusive = (work) => work(),
  ) {}

  file(ref: StoredImageRef): string {
    if (!/^[0-9a-f]{64}$/.test(ref.id)) throw new Error(`Invalid image id "${ref.id}".`);
    return path.join(this.dir, `${ref.id}.${EXTENSIONS[ref.mediaType]}`);
  }

  /** Stores the bytes (once) and returns their id; an image stored already gets a fresh time (see IMAGE_PRUNE_GRACE_MS). */
  async put(bytes: Uint8Array, mediaType: ImageMediaType): Promise<string> {
    const id = sha256Hex(bytes);
    const file = this.file({ id, mediaType });
    return this.exclusive(async () => {
      const now = new Date();
      try {
        await fs.utimes(file, now, now);
        return id;
      } catch {
        await fs.mkdir(this.dir, { recursive: true });
        await writeFileAtomic(file, bytes, { overwrite: true });
        return id;
      }
    });
  }

  /** The bytes, or undefined when the file is gone (a damaged or pruned store). */
  async read(ref: StoredImageRef): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.file(ref));
    } catch {
      return undefined;
    }
  }

  /**
   * Removes every stored image whose id is not in `keep` and whose file was not written or put
   * within `graceMs`; returns how many were removed. The caller holds the store's lock (it has
   * just worked out `keep` from every conversation on disk).
   */
  async prune(keep: ReadonlySet<string>, graceMs = IMAGE_PRUNE_GRACE_MS): Promise<number> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const now = Date.now();
    let removed = 0;
    for (const name of names) {
      const id = /^([0-9a-f]{64})\.\w+$/.exec(name)?.[1];
      if (!id || keep.has(id)) continue;
      const file = path.join(this.dir, name);
      const stat = await fs.stat(file).catch(() => undefined);
      if (!stat || now - stat.mtimeMs < graceMs) continue;
      await fs.rm(file, { force: true });
      removed++;
    }
    return removed;
  }
}
