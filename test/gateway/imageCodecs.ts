import { imageSize as readImageSize } from 'image-size';
import { encodeFilteredRgbPng, PNG_SIGNATURE } from './png';

/**
 * The pictures the Images route "generates", at the requested size and in the requested format.
 *
 * Mapping from size to pixels: the picture is drawn on a grid of 8×8-pixel cells
 * (ceil(w/8) × ceil(h/8) cells), each cell one flat colour, and the file has exactly the requested
 * width × height (the PNG IHDR, the JPEG SOF0 and the WebP VP8L header say so). Cells keep drawing
 * cheap at 1536×1024 and map one-to-one onto JPEG blocks; the colours follow from a seed text
 * (prompt + image index), so other prompts or indices give other pixels and the same ones the same bytes.
 *
 * All three encoders are hand-written and produce files that real decoders accept (checked with
 * ffmpeg while writing them); the double never needs ffmpeg itself.
 */

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export const CELL = 8;

export const IMAGE_CONTENT_TYPES: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

/** FNV-1a of the text, the same hash promptPng uses. */
export function seedOf(text: string): number {
  let seed = 2166136261;
  for (const c of text) seed = Math.imul(seed ^ (c.codePointAt(0) ?? 0), 16777619) >>> 0;
  return seed;
}

/** RGB per cell of a cols × rows grid: a two-colour gradient, a disc and stripes placed by the seed. */
export function drawCells(seedText: string, cols: number, rows: number): Uint8Array {
  const seed = seedOf(seedText);
  const hue = (k: number) => [(seed >>> k) & 0xff, (seed >>> (k + 8)) & 0xff, (seed >>> (k + 16)) & 0xff] as const;
  const a = hue(0);
  const b = hue(5);
  const cx = ((seed % 997) / 997) * cols;
  const cy = (((seed >>> 7) % 991) / 991) * rows;
  const r = (0.15 + ((seed >>> 13) % 20) / 100) * Math.min(cols, rows);
  const stripe = 3 + ((seed >>> 19) % 6);
  const rgb = new Uint8Array(cols * rows * 3);
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < cols; x++) {
      const t = (x / Math.max(1, cols) + y / Math.max(1, rows)) / 2;
      const inDisc = (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
      const onStripe = Math.floor((x + 2 * y) / stripe) % 4 === 0;
      const i = (y * cols + x) * 3;
      for (let k = 0; k < 3; k++) {
        const base = (a[k] ?? 0) * (1 - t) + (b[k] ?? 0) * t;
        rgb[i + k] = inDisc ? 255 - (a[k] ?? 0) : onStripe ? Math.round(base / 2) : Math.round(base);
      }
    }
  }
  return rgb;
}

export function drawImage(seedText: string, width: number, height: number, format: ImageFormat): Buffer {
  const cols = Math.ceil(width / CELL);
  const rows = Math.ceil(height / CELL);
  const cells = drawCells(seedText, cols, rows);
  switch (format) {
    case 'png':
      return cellsToPng(cells, cols, width, height);
    case 'jpeg':
      return cellsToJpeg(cells, cols, rows, width, height);
    case 'webp':
      return cellsToWebp(cells, cols, width, height);
  }
}

/** Full-size PNG: each row is built once per cell row and repeated, which deflate shrinks to little. */
function cellsToPng(cells: Uint8Array, cols: number, width: number, height: number): Buffer {
  const stride = width * 3 + 1;
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const at = y * stride;
    if (y % CELL !== 0) {
      raw.copy(raw, at, at - stride, at); // the same cell row as the line above
      continue;
    }
    const cy = y / CELL;
    raw[at] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      const c = (cy * cols + Math.floor(x / CELL)) * 3;
      raw[at + 1 + x * 3] = cells[c] ?? 0;
      raw[at + 2 + x * 3] = cells[c + 1] ?? 0;
      raw[at + 3 + x * 3] = cells[c + 2] ?? 0;
    }
  }
  return encodeFilteredRgbPng(width, height, raw);
}

// ---------------------------------------------------------------------------------------------
// JPEG: baseline, YCbCr 4:4:4, one 8×8 block per cell holding only its DC coefficient (every AC
// coefficient zero, coded as an immediate end-of-block). DC values use the standard DC Huffman
// tables of ITU T.81 Annex K; each AC table holds the single symbol EOB with the code `0`.
// ---------------------------------------------------------------------------------------------

const DC_LUMA = {
  bits: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
  values: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};
const DC_CHROMA = {
  bits: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
  values: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};
const AC_EOB_ONLY = { bits: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], values: [0] };
/** DC quantiser 8 makes a block's quantised DC equal to its mean level − 128. */
const DC_QUANT = 8;

interface HuffTable {
  bits: number[];
  values: number[];
}

/** Canonical codes (T.81 Annex C) by symbol. */
function huffCodes(table: HuffTable): Map<number, { code: number; length: number }> {
  const codes = new Map<number, { code: number; length: number }>();
  let code = 0;
  let k = 0;
  for (let length = 1; length <= 16; length++) {
    for (let i = 0; i < (table.bits[length - 1] ?? 0); i++) codes.set(table.values[k++] ?? 0, { code: code++, length });
    code <<= 1;
  }
  return codes;
}

class JpegBits {
  private readonly out: number[] = [];
  private acc = 0;
  private count = 0;

  put(code: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((code >>> i) & 1);
      if (++this.count === 8) this.flushByte();
    }
  }

  private flushByte(): void {
    this.out.push(this.acc);
    if (this.acc === 0xff) this.out.push(0x00); // byte stuffing
    this.acc = 0;
    this.count = 0;
  }

  finish(): Buffer {
    while (this.count !== 0) this.put(1, 1); // pad with 1-bits
    return Buffer.from(this.out);
  }
}

function segment(marker: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(0xff00 | marker, 0);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, body]);
}

function dht(tableClass: number, id: number, table: HuffTable): Buffer {
  return Buffer.from([(tableClass << 4) | id, ...table.bits, ...table.values]);
}

function cellsToJpeg(cells: Uint8Array, cols: number, rows: number, width: number, height: number): Buffer {
  const dcCodes = [huffCodes(DC_LUMA), huffCodes(DC_CHROMA), huffCodes(DC_CHROMA)];
  const acCodes = [huffCodes(AC_EOB_ONLY), huffCodes(AC_EOB_ONLY), huffCodes(AC_EOB_ONLY)];
  const bits = new JpegBits();
  const previous = [0, 0, 0];
  for (let i = 0; i < cols * rows; i++) {
    const r = cells[i * 3] ?? 0;
    const g = cells[i * 3 + 1] ?? 0;
    const b = cells[i * 3 + 2] ?? 0;
    // JFIF full-range YCbCr.
    const levels = [
      0.299 * r + 0.587 * g + 0.114 * b,
      128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
      128 + 0.5 * r - 0.418688 * g - 0.081312 * b,
    ];
    for (let c = 0; c < 3; c++) {
      const dc = Math.max(-128, Math.min(127, Math.round((levels[c] ?? 128) - 128)));
      const diff = dc - (previous[c] ?? 0);
      previous[c] = dc;
      const magnitude = Math.abs(diff);
      const category = magnitude === 0 ? 0 : 32 - Math.clz32(magnitude);
      const code = dcCodes[c]?.get(category);
      const eob = acCodes[c]?.get(0);
      if (!code || !eob) throw new Error('jpeg: missing Huffman code');
      bits.put(code.code, code.length);
      if (category > 0) bits.put(diff >= 0 ? diff : diff + (1 << category) - 1, category);
      bits.put(eob.code, eob.length);
    }
  }
  const quant = Buffer.alloc(65, 1);
  quant[0] = 0; // 8-bit precision, table 0
  quant[1] = DC_QUANT;
  const frame = Buffer.alloc(15);
  frame[0] = 8;
  frame.writeUInt16BE(height, 1);
  frame.writeUInt16BE(width, 3);
  frame[5] = 3;
  [1, 2, 3].forEach((id, i) => frame.set([id, 0x11, 0], 6 + i * 3));
  const scan = Buffer.from([3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.from([0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])), // JFIF 1.01, aspect 1:1
    segment(0xdb, quant),
    segment(0xc0, frame),
    segment(
      0xc4,
      Buffer.concat([dht(0, 0, DC_LUMA), dht(0, 1, DC_CHROMA), dht(1, 0, AC_EOB_ONLY), dht(1, 1, AC_EOB_ONLY)]),
    ),
    segment(0xda, scan),
    bits.finish(),
    Buffer.from([0xff, 0xd9]),
  ]);
}

// ---------------------------------------------------------------------------------------------
// WebP: lossless (VP8L), no transforms, no colour cache, one prefix-code group of "simple" codes:
// red, blue, alpha and distance have one symbol each (zero bits per pixel) and green two symbols
// (one bit per pixel). So each pixel is one of two colours that differ in green: a cell is the
// lighter or darker one by its luminance against the picture's median.
// ---------------------------------------------------------------------------------------------

class LsbBits {
  private readonly out: number[] = [];
  private acc = 0;
  private count = 0;

  put(value: number, length: number): void {
    for (let i = 0; i < length; i++) {
      this.acc |= ((value >>> i) & 1) << this.count;
      if (++this.count === 8) {
        this.out.push(this.acc);
        this.acc = 0;
        this.count = 0;
      }
    }
  }

  finish(): Buffer {
    if (this.count > 0) this.out.push(this.acc);
    return Buffer.from(this.out);
  }
}

function cellsToWebp(cells: Uint8Array, cols: number, width: number, height: number): Buffer {
  const lum = (i: number) =>
    (cells[i * 3] ?? 0) * 0.299 + (cells[i * 3 + 1] ?? 0) * 0.587 + (cells[i * 3 + 2] ?? 0) * 0.114;
  const rows = Math.ceil(height / CELL);
  const all = Array.from({ length: cols * rows }, (_, i) => lum(i)).sort((a, b) => a - b);
  const median = all[Math.floor(all.length / 2)] ?? 128;
  // Average colour of the picture for red/blue; two greens apart enough to see the shapes.
  let rSum = 0;
  let gSum = 0;
  let bSum = 0;
  for (let i = 0; i < cols * rows; i++) {
    rSum += cells[i * 3] ?? 0;
    gSum += cells[i * 3 + 1] ?? 0;
    bSum += cells[i * 3 + 2] ?? 0;
  }
  const n = Math.max(1, cols * rows);
  const red = Math.round(rSum / n);
  const blue = Math.round(bSum / n);
  const gMid = Math.round(gSum / n);
  const gLow = Math.max(0, Math.min(gMid - 48, 200));
  const gHigh = gLow + 55;

  const bits = new LsbBits();
  bits.put(0x2f, 8); // VP8L signature
  bits.put(width - 1, 14);
  bits.put(height - 1, 14);
  bits.put(0, 1); // alpha_is_used
  bits.put(0, 3); // version
  bits.put(0, 1); // no transform
  bits.put(0, 1); // no colour cache
  bits.put(0, 1); // no meta prefix codes
  const simple = (symbols: number[]) => {
    bits.put(1, 1); // simple code
    bits.put(symbols.length - 1, 1);
    const first = symbols[0] ?? 0;
    if (first > 1) {
      bits.put(1, 1);
      bits.put(first, 8);
    } else {
      bits.put(0, 1);
      bits.put(first, 1);
    }
    if (symbols.length === 2) bits.put(symbols[1] ?? 0, 8);
  };
  simple([gLow, gHigh]); // green: gLow < gHigh, so gLow has code 0 and gHigh code 1
  simple([red]);
  simple([blue]);
  simple([255]); // alpha
  simple([0]); // distance (unused)
  for (let y = 0; y < height; y++) {
    const rowBase = Math.floor(y / CELL) * cols;
    for (let x = 0; x < width; x++) bits.put(lum(rowBase + Math.floor(x / CELL)) >= median ? 1 : 0, 1);
  }
  const data = bits.finish();
  const chunk = Buffer.concat([
    Buffer.from('VP8L'),
    u32le(data.length),
    data,
    data.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0),
  ]);
  return Buffer.concat([Buffer.from('RIFF'), u32le(4 + chunk.length), Buffer.from('WEBP'), chunk]);
}

function u32le(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n, 0);
  return b;
}

/** What the bytes are, by their magic numbers (what a careful client checks before saving). */
export function sniffImage(buf: Buffer): ImageFormat | undefined {
  if (buf.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'jpeg';
  if (buf.toString('latin1', 0, 4) === 'RIFF' && buf.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** Width and height as the file header states them, read by the image-size library (not the client's reader). */
export function imageSize(buf: Buffer): { width: number; height: number } | undefined {
  if (!sniffImage(buf)) return undefined;
  try {
    const { width, height } = readImageSize(buf);
    return { width, height };
  } catch {
    return undefined;
  }
}
