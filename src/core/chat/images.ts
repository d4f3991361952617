import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { GatewayError } from '../errors';
import { writeFileAtomic } from '../atomicFile';
import { formatBytes, formatNumber } from '../../shared/format';
import {
  FORMAT_NAMES,
  IMAGE_EXTENSIONS,
  otherFormat,
  sniffImage,
  type ImageInfo,
  type ImageMediaType,
} from '../imageBytes';
import { words } from '../../shared/words';

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

export const DEFAULT_IMAGE_MAX_BYTES = 5 * 1024 * 1024;

/** More images than this in one message is refused (the protocols' own limits are higher). */
export const MAX_IMAGES_PER_MESSAGE = 20;

/** "PNG 48×48, 2.1 KB" */
export function describeImage(info: {
  mediaType: ImageMediaType;
  bytes: number;
  width?: number;
  height?: number;
}): string {
  const size = info.width && info.height ? ` ${info.width}×${info.height}` : '';
  return `${FORMAT_NAMES[info.mediaType]}${size}, ${formatBytes(info.bytes)}`;
}

/**
 * Checks bytes meant to go to a model as an image: an accepted format and not over `maxBytes`.
 * Throws a GatewayError whose message names the file, what it is, its size and the limit.
 */
export function checkImage(bytes: Uint8Array, name: string, maxBytes: number): ImageInfo {
  if (bytes.length === 0) throw new GatewayError('badRequest', words('{0} is empty; there is no image to send.', name));
  const info = sniffImage(bytes);
  if (!info) {
    const other = otherFormat(bytes);
    throw new GatewayError(
      'badRequest',
      other
        ? words(
            '{0} is a {1} file. Models take PNG, JPEG, GIF and WebP images; convert it to one of those first.',
            name,
            other,
          )
        : words(
            '{0} is not an image the chat protocols accept. Models take PNG, JPEG, GIF and WebP images; convert it to one of those first.',
            name,
          ),
    );
  }
  if (bytes.length > maxBytes) {
    throw new GatewayError(
      'tooLarge',
      words(
        '{0} is {1} ({2} bytes), over the {3} limit for chat images. Make it smaller (fewer pixels, or JPEG/WebP instead of PNG), or raise "modelGateway.chat.imageMaxBytes" if your models accept more (the Messages protocol refuses images over 5 MiB).',
        name,
        formatBytes(bytes.length),
        formatNumber(bytes.length),
        formatBytes(maxBytes),
      ),
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
    return path.join(this.dir, `${ref.id}.${IMAGE_EXTENSIONS[ref.mediaType]}`);
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
      // No grace keeps nothing for its time: a file written within this millisecond has a time
      // a fraction of a millisecond after `now` (Date.now() drops what file times keep).
      if (!stat || (graceMs > 0 && now - stat.mtimeMs < graceMs)) continue;
      await fs.rm(file, { force: true });
      removed++;
    }
    return removed;
  }
}
