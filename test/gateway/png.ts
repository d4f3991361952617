import { crc32, deflateSync } from 'node:zlib';

/**
 * A minimal PNG encoder (8-bit RGB, one IDAT) and the pictures the double "generates": small
 * images whose colours and shapes follow from the prompt, so different prompts give different
 * pixels and the same prompt the same bytes.
 */

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function encodePng(width: number, height: number, rgb: Uint8Array): Buffer {
  if (rgb.length !== width * height * 3) throw new Error('encodePng: pixel buffer has the wrong size');
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0; // filter: none
    Buffer.from(rgb.buffer, rgb.byteOffset + y * width * 3, width * 3).copy(raw, y * (width * 3 + 1) + 1);
  }
  return encodeFilteredRgbPng(width, height, raw);
}

/** An 8-bit RGB PNG from rows that already carry their filter byte. */
export function encodeFilteredRgbPng(width: number, height: number, filtered: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(filtered)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length, 0);
  const typeAndBody = Buffer.concat([Buffer.from(type, 'ascii'), body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndBody) >>> 0, 0);
  return Buffer.concat([length, typeAndBody, crc]);
}

const SIDE = 48;

/**
 * The picture for a prompt. `blockSize` > 1 gives the coarse previews sent as partial images
 * (each pixel block holds the colour of its top-left pixel).
 */
export function promptPng(prompt: string, blockSize = 1): Buffer {
  let seed = 2166136261;
  for (const c of prompt) seed = Math.imul(seed ^ (c.codePointAt(0) ?? 0), 16777619) >>> 0;
  const hue = (k: number) => [(seed >>> k) & 0xff, (seed >>> (k + 8)) & 0xff, (seed >>> (k + 16)) & 0xff] as const;
  const a = hue(0);
  const b = hue(5);
  const cx = 8 + (seed % 32);
  const cy = 8 + ((seed >>> 7) % 32);
  const r = 6 + ((seed >>> 13) % 12);
  const stripe = 3 + ((seed >>> 19) % 6);
  const rgb = new Uint8Array(SIDE * SIDE * 3);
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      const sx = x - (x % blockSize);
      const sy = y - (y % blockSize);
      const t = (sx + sy) / (2 * SIDE);
      const inCircle = (sx - cx) ** 2 + (sy - cy) ** 2 <= r * r;
      const onStripe = Math.floor((sx + 2 * sy) / stripe) % 4 === 0;
      const i = (y * SIDE + x) * 3;
      for (let k = 0; k < 3; k++) {
        const base = (a[k] ?? 0) * (1 - t) + (b[k] ?? 0) * t;
        rgb[i + k] = inCircle ? 255 - (a[k] ?? 0) : onStripe ? Math.round(base / 2) : Math.round(base);
      }
    }
  }
  return encodePng(SIDE, SIDE, rgb);
}
