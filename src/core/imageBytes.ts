/**
 * What an image's bytes are: the format (magic numbers) and, where the header says, the size in
 * pixels. The one image sniffer of the extension: chat attachments and generated images both use it,
 * never a file name or a server's content type.
 */

import * as l10n from '@vscode/l10n';

export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export interface ImageInfo {
  mediaType: ImageMediaType;
  /** Short name for people: PNG, JPEG, GIF, WebP. */
  format: string;
  width?: number;
  height?: number;
}

export const FORMAT_NAMES: Record<ImageMediaType, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/gif': 'GIF',
  'image/webp': 'WebP',
};
export const IMAGE_EXTENSIONS: Record<ImageMediaType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

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
export function otherFormat(bytes: Uint8Array): string | undefined {
  const head = ascii(bytes, 0, 16);
  if (head.startsWith('BM')) return 'BMP';
  if (head.startsWith('II*\0') || head.startsWith('MM\0*')) return 'TIFF';
  if (head.slice(4, 8) === 'ftyp')
    return /avif|avis/.test(head) ? 'AVIF' : /hei|mif1|msf1/.test(head) ? 'HEIC' : l10n.t('video or HEIF container');
  if (head.startsWith('%PDF')) return 'PDF';
  if (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 1 && bytes[3] === 0) return 'ICO';
  if (/^\s*(<\?xml|<svg)/i.test(ascii(bytes, 0, 64))) return 'SVG';
  return undefined;
}
