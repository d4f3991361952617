/**
 * The double's OCR: real recognition of text drawn by the fixtures' renderText (test/fixtures/
 * image.ts), from a PNG (grayscale, RGB, with or without alpha, palette; any filter) or from the image
 * XObjects of a scanned PDF. Glyphs are matched against templates rendered from the very same font
 * table, at whatever scale the picture was drawn; the scale and the grid are found from the picture.
 * Pictures of anything else give no text, as a real OCR gives nothing useful for a photo.
 */
import * as zlib from 'node:zlib';
import { FONT_CHARACTERS, renderText, type GrayImage } from '../fixtures/samples';

export type { GrayImage };

export class OcrInputError extends Error {}

// ---------------------------------------------------------------------------------------------
// PNG

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A 10 MB PNG can hold a huge, highly compressible picture; more pixels than this is refused. */
const MAX_PIXELS = 50_000_000;

export function isPng(buf: Buffer): boolean {
  return buf.subarray(0, 8).equals(PNG_SIGNATURE);
}

/** Decodes an 8-bit (or 16-bit) non-interlaced PNG of any colour type to gray, alpha over white. */
export function decodePng(buf: Buffer): GrayImage {
  if (!isPng(buf)) throw new OcrInputError('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  let depth = 0;
  let colorType = -1;
  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  const data: Buffer[] = [];
  while (offset + 12 <= buf.length) {
    const length = buf.readUInt32BE(offset);
    const type = buf.toString('latin1', offset + 4, offset + 8);
    const body = buf.subarray(offset + 8, offset + 8 + length);
    if (body.length !== length) throw new OcrInputError(`PNG chunk ${type} is cut short`);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      depth = body[8] ?? 0;
      colorType = body[9] ?? -1;
      if (body[12] !== 0) throw new OcrInputError('interlaced PNGs are not supported');
    } else if (type === 'PLTE') palette = body;
    else if (type === 'tRNS') transparency = body;
    else if (type === 'IDAT') data.push(body);
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colorType];
  if (!width || !height || channels === undefined) throw new OcrInputError('PNG without a usable IHDR');
  if (!(depth === 8 || depth === 16) || (colorType === 3 && depth !== 8))
    throw new OcrInputError(`PNG bit depth ${depth} is not supported`);
  if (width * height > MAX_PIXELS) throw new OcrInputError('PNG picture too large');
  let raw: Buffer;
  try {
    raw = zlib.inflateSync(Buffer.concat(data));
  } catch {
    throw new OcrInputError('PNG image data is damaged');
  }
  const bpp = channels * (depth / 8);
  const stride = width * bpp;
  if (raw.length < (stride + 1) * height) throw new OcrInputError('PNG image data is cut short');
  const rows = unfilter(raw, width, height, bpp);
  const pixels = new Uint8Array(width * height);
  const sample = (row: Buffer, i: number): number => (depth === 16 ? (row[i * 2] ?? 0) : (row[i] ?? 0));
  for (let y = 0; y < height; y++) {
    const row = rows.subarray(y * stride, (y + 1) * stride);
    for (let x = 0; x < width; x++) {
      let r: number;
      let g: number;
      let b: number;
      let a = 255;
      const i = x * channels;
      if (colorType === 3) {
        const index = row[x] ?? 0;
        r = palette?.[index * 3] ?? 0;
        g = palette?.[index * 3 + 1] ?? 0;
        b = palette?.[index * 3 + 2] ?? 0;
        a = transparency?.[index] ?? 255;
      } else if (channels <= 2) {
        r = g = b = sample(row, i);
        if (channels === 2) a = sample(row, i + 1);
      } else {
        r = sample(row, i);
        g = sample(row, i + 1);
        b = sample(row, i + 2);
        if (channels === 4) a = sample(row, i + 3);
      }
      const lum = 0.299 * r + 0.587 * g + 0.114 * b;
      pixels[y * width + x] = Math.round((lum * a + 255 * (255 - a)) / 255);
    }
  }
  return { width, height, pixels };
}

/** Undoes PNG's per-row filters (none, sub, up, average, Paeth). */
function unfilter(raw: Buffer, width: number, height: number, bpp: number): Buffer {
  const stride = width * bpp;
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const dst = y * stride;
    for (let i = 0; i < stride; i++) {
      const x = raw[src + i] ?? 0;
      const a = i >= bpp ? (out[dst + i - bpp] ?? 0) : 0;
      const b = y > 0 ? (out[dst - stride + i] ?? 0) : 0;
      const c = y > 0 && i >= bpp ? (out[dst - stride + i - bpp] ?? 0) : 0;
      let v: number;
      switch (filter) {
        case 0:
          v = x;
          break;
        case 1:
          v = x + a;
          break;
        case 2:
          v = x + b;
          break;
        case 3:
          v = x + ((a + b) >> 1);
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default:
          throw new OcrInputError(`PNG row ${y} has unknown filter ${String(filter)}`);
      }
      out[dst + i] = v & 0xff;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// PDF image XObjects

export function isPdf(buf: Buffer): boolean {
  return buf.subarray(0, 1024).toString('latin1').includes('%PDF-');
}

interface RawObject {
  /** The object's text up to `stream` or `endobj`, latin1. */
  text: string;
  stream?: Buffer;
}

/** Every `N G obj` with its dictionary text and raw stream; a later definition replaces an earlier one. */
function pdfObjects(buf: Buffer): Map<number, RawObject> {
  const s = buf.toString('latin1');
  const objects = new Map<number, RawObject>();
  const header = /(?:^|[\s>\]])(\d+)\s+\d+\s+obj\b/g;
  for (let m = header.exec(s); m; m = header.exec(s)) {
    const start = m.index + m[0].length;
    const endobj = s.indexOf('endobj', start);
    const streamAt = s.indexOf('stream', start);
    const isStream = streamAt >= 0 && (endobj < 0 || streamAt < endobj) && s.slice(start, streamAt).includes('>>');
    if (!isStream) {
      objects.set(Number(m[1]), { text: s.slice(start, endobj < 0 ? s.length : endobj) });
      if (endobj >= 0) header.lastIndex = endobj;
      continue;
    }
    const text = s.slice(start, streamAt);
    let dataStart = streamAt + 'stream'.length;
    if (s[dataStart] === '\r') dataStart++;
    if (s[dataStart] === '\n') dataStart++;
    const length = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(text);
    let dataEnd = length ? dataStart + Number(length[1]) : -1;
    if (dataEnd < 0 || dataEnd > buf.length || !/^\s*endstream/.test(s.slice(dataEnd, dataEnd + 20))) {
      dataEnd = s.indexOf('endstream', dataStart);
      if (dataEnd < 0) dataEnd = s.length;
      if (s[dataEnd - 1] === '\n') dataEnd--;
      if (s[dataEnd - 1] === '\r') dataEnd--;
    }
    objects.set(Number(m[1]), { text, stream: buf.subarray(dataStart, dataEnd) });
    header.lastIndex = dataEnd;
  }
  return objects;
}

function refIn(text: string, key: string): number | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+)\\s+\\d+\\s+R`).exec(text);
  return m ? Number(m[1]) : undefined;
}

/** The text of a dictionary value `/key << … >>` (one nesting level), or of the object it refers to. */
function dictIn(objects: Map<number, RawObject>, text: string, key: string): string | undefined {
  const ref = refIn(text, key);
  if (ref !== undefined) return objects.get(ref)?.text;
  const at = new RegExp(`/${key}\\s*<<`).exec(text);
  if (!at) return undefined;
  let depth = 0;
  for (let i = at.index + at[0].length - 2; i < text.length - 1; i++) {
    if (text.startsWith('<<', i)) {
      depth++;
      i++;
    } else if (text.startsWith('>>', i)) {
      depth--;
      i++;
      if (depth === 0) return text.slice(at.index + at[0].length, i - 1);
    }
  }
  return undefined;
}

function numberIn(text: string, key: string): number | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+)(?!\\s+\\d+\\s+R)`).exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Page objects in reading order, from the Catalog's page tree (else every /Type /Page in file order). */
function pdfPages(objects: Map<number, RawObject>): RawObject[] {
  const catalog = [...objects.values()].find((o) => /\/Type\s*\/Catalog\b/.test(o.text));
  const pages: RawObject[] = [];
  const seen = new Set<number>();
  const walk = (num: number | undefined): void => {
    if (num === undefined || seen.has(num)) return;
    seen.add(num);
    const node = objects.get(num);
    if (!node) return;
    if (/\/Type\s*\/Page\b/.test(node.text)) {
      pages.push(node);
      return;
    }
    const kids = /\/Kids\s*\[([^\]]*)\]/.exec(node.text)?.[1] ?? '';
    for (const k of kids.matchAll(/(\d+)\s+\d+\s+R/g)) walk(Number(k[1]));
  };
  if (catalog) walk(refIn(catalog.text, 'Pages'));
  if (pages.length > 0) return pages;
  return [...objects.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, o]) => o)
    .filter((o) => /\/Type\s*\/Page\b/.test(o.text));
}

function decodeImage(entry: RawObject): GrayImage {
  const text = entry.text;
  const width = numberIn(text, 'Width') ?? 0;
  const height = numberIn(text, 'Height') ?? 0;
  const bits = numberIn(text, 'BitsPerComponent') ?? 8;
  if (!width || !height) throw new OcrInputError('PDF image without a size');
  if (bits !== 8) throw new OcrInputError(`PDF image with ${bits} bits per component is not supported`);
  if (width * height > MAX_PIXELS) throw new OcrInputError('PDF image too large');
  const filters = [...(/\/Filter\s*(\[[^\]]*\]|\/\w+)/.exec(text)?.[1] ?? '').matchAll(/\/(\w+)/g)].map((f) => f[1]);
  let data = entry.stream ?? Buffer.alloc(0);
  for (const filter of filters) {
    if (filter !== 'FlateDecode' && filter !== 'Fl')
      throw new OcrInputError(`PDF image filter ${filter ?? ''} is not supported by the double`);
    try {
      data = zlib.inflateSync(data);
    } catch {
      throw new OcrInputError('PDF image data is damaged');
    }
  }
  const channels = Math.round(data.length / (width * height));
  if (channels !== 1 && channels !== 3 && channels !== 4)
    throw new OcrInputError('PDF image colour space is not supported');
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) {
    if (channels === 1) pixels[i] = data[i] ?? 255;
    else if (channels === 3)
      pixels[i] = Math.round(
        0.299 * (data[i * 3] ?? 0) + 0.587 * (data[i * 3 + 1] ?? 0) + 0.114 * (data[i * 3 + 2] ?? 0),
      );
    else
      pixels[i] =
        255 -
        Math.min(
          255,
          Math.round(
            0.3 * (data[i * 4] ?? 0) +
              0.59 * (data[i * 4 + 1] ?? 0) +
              0.11 * (data[i * 4 + 2] ?? 0) +
              (data[i * 4 + 3] ?? 0),
          ),
        );
  }
  return { width, height, pixels };
}

/** The image XObjects each page draws, in page order (a page with text only gives an empty list). */
export function pdfPageImages(buf: Buffer): GrayImage[][] {
  const objects = pdfObjects(buf);
  return pdfPages(objects).map((page) => {
    const resources = dictIn(objects, page.text, 'Resources') ?? '';
    const xobjects = dictIn(objects, resources, 'XObject') ?? '';
    const images: GrayImage[] = [];
    for (const ref of xobjects.matchAll(/\/[^\s/]+\s+(\d+)\s+\d+\s+R/g)) {
      const entry = objects.get(Number(ref[1]));
      if (entry && /\/Subtype\s*\/Image\b/.test(entry.text)) images.push(decodeImage(entry));
    }
    return images;
  });
}

// ---------------------------------------------------------------------------------------------
// Recognition

const GLYPH_W = 5;
const GLYPH_H = 8;
/** renderText's advance and line height in font pixels (glyph + 1 column, glyph + 3 rows). */
const ADVANCE = GLYPH_W + 1;
const LINE = GLYPH_H + 3;
/** renderText's ink is 0-69 and its paper 243-255; dust specks are 90 and 120, so they are not ink. */
const INK_BELOW = 80;
const MAX_SCALE = 24;

interface Template {
  char: string;
  hi: number;
  lo: number;
}

/** 40 cells as two 20-bit numbers: rows 0-3 and rows 4-7. */
function bitsKey(hi: number, lo: number): string {
  return `${hi},${lo}`;
}

/** Templates rendered at scale 1 from the fixtures' own font, so they match it by construction. */
const TEMPLATES: Template[] = [...FONT_CHARACTERS].map((char) => {
  const img = renderText(char, { scale: 1, margin: 0, noise: false });
  let hi = 0;
  let lo = 0;
  for (let y = 0; y < GLYPH_H; y++) {
    for (let x = 0; x < GLYPH_W; x++) {
      if ((img.pixels[y * img.width + x] ?? 255) < 128) {
        const bit = (y % 4) * GLYPH_W + x;
        if (y < 4) hi |= 1 << bit;
        else lo |= 1 << bit;
      }
    }
  }
  return { char, hi, lo };
});
const EXACT = new Map(TEMPLATES.map((t) => [bitsKey(t.hi, t.lo), t.char]));

function popcount(n: number): number {
  let v = n - ((n >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function matchGlyph(hi: number, lo: number): { char: string; distance: number } {
  const exact = EXACT.get(bitsKey(hi, lo));
  if (exact !== undefined) return { char: exact, distance: 0 };
  let best = { char: '?', distance: Infinity };
  for (const t of TEMPLATES) {
    const d = popcount(t.hi ^ hi) + popcount(t.lo ^ lo);
    if (d < best.distance) best = { char: t.char, distance: d };
  }
  return best;
}

/** A paragraph: consecutive non-empty lines, with its box in pixels. */
export interface OcrBlock {
  text: string;
  box: { x1: number; y1: number; x2: number; y2: number };
}

export interface OcrPage {
  width: number;
  height: number;
  /** Lines joined by '\n', blank lines kept between paragraphs, trailing spaces dropped. */
  text: string;
  blocks: OcrBlock[];
}

/** Sums of ink over rectangles in O(1), from a summed-area table. */
class InkSums {
  readonly table: Int32Array;
  readonly cols: Int32Array;
  readonly rows: Int32Array;
  total = 0;
  minX: number;
  minY: number;
  maxX = -1;
  maxY = -1;

  constructor(readonly image: GrayImage) {
    const { width, height, pixels } = image;
    this.table = new Int32Array((width + 1) * (height + 1));
    this.cols = new Int32Array(width);
    this.rows = new Int32Array(height);
    this.minX = width;
    this.minY = height;
    for (let y = 0; y < height; y++) {
      let rowSum = 0;
      for (let x = 0; x < width; x++) {
        const ink = (pixels[y * width + x] ?? 255) < INK_BELOW ? 1 : 0;
        rowSum += ink;
        this.table[(y + 1) * (width + 1) + x + 1] = (this.table[y * (width + 1) + x + 1] ?? 0) + rowSum;
        if (ink) {
          this.cols[x] = (this.cols[x] ?? 0) + 1;
          if (x < this.minX) this.minX = x;
          if (x > this.maxX) this.maxX = x;
        }
      }
      this.rows[y] = rowSum;
      this.total += rowSum;
      if (rowSum > 0) {
        if (y < this.minY) this.minY = y;
        this.maxY = y;
      }
    }
  }

  /** Ink in [x, x+w) × [y, y+h), clipped to the picture. */
  sum(x: number, y: number, w: number, h: number): number {
    const W = this.image.width + 1;
    const x1 = Math.max(0, Math.min(this.image.width, x));
    const y1 = Math.max(0, Math.min(this.image.height, y));
    const x2 = Math.max(0, Math.min(this.image.width, x + w));
    const y2 = Math.max(0, Math.min(this.image.height, y + h));
    const t = this.table;
    return (t[y2 * W + x2] ?? 0) - (t[y1 * W + x2] ?? 0) - (t[y2 * W + x1] ?? 0) + (t[y1 * W + x1] ?? 0);
  }
}

/** Residues (mod period) where a gap of `gap` pixels can start with the least ink, and that ink. */
function gapPhases(profile: Int32Array, period: number, gap: number): { ink: number; starts: number[] } {
  const residue = new Float64Array(period);
  profile.forEach((v, i) => (residue[i % period] = (residue[i % period] ?? 0) + v));
  let best = Infinity;
  let starts: number[] = [];
  for (let r = 0; r < period; r++) {
    let sum = 0;
    for (let k = 0; k < gap; k++) sum += residue[(r + k) % period] ?? 0;
    if (sum < best) {
      best = sum;
      starts = [r];
    } else if (sum === best) starts.push(r);
  }
  return { ink: best, starts };
}

/** At most `n` of `values`, evenly spread. */
function spread(values: number[], n: number): number[] {
  if (values.length <= n) return values;
  return Array.from({ length: n }, (_, i) => values[Math.floor((i * values.length) / n)] ?? 0);
}

interface Reading {
  cost: number;
  scale: number;
  lines: string[];
  /** Per line: the pixel box of its cells that hold ink, or undefined for a blank line. */
  boxes: Array<{ x1: number; x2: number; y1: number; y2: number } | undefined>;
}

/** Decodes the grid with cells of `scale` font pixels starting at (px, py); cost counts what does not fit the font. */
function readGrid(ink: InkSums, scale: number, px: number, py: number): Reading {
  const adv = ADVANCE * scale;
  const lh = LINE * scale;
  const area = scale * scale;
  const k0 = Math.floor((ink.minX - px) / adv);
  const k1 = Math.floor((ink.maxX - px) / adv);
  const j0 = Math.floor((ink.minY - py) / lh);
  const j1 = Math.floor((ink.maxY - py) / lh);
  let cost = 0;
  const lines: string[] = [];
  const boxes: Reading['boxes'] = [];
  for (let j = j0; j <= j1; j++) {
    const cy = py + j * lh;
    let line = '';
    let box: Reading['boxes'][number];
    for (let k = k0; k <= k1; k++) {
      const cx = px + k * adv;
      const cellInk = ink.sum(cx, cy, adv, lh);
      if (cellInk === 0) {
        line += ' ';
        continue;
      }
      let hi = 0;
      let lo = 0;
      let glyphInk = 0;
      for (let gy = 0; gy < GLYPH_H; gy++) {
        for (let gx = 0; gx < GLYPH_W; gx++) {
          const n = ink.sum(cx + gx * scale, cy + gy * scale, scale, scale);
          glyphInk += n;
          cost += Math.min(n, area - n);
          if (2 * n >= area) {
            const bit = (gy % 4) * GLYPH_W + gx;
            if (gy < 4) hi |= 1 << bit;
            else lo |= 1 << bit;
          }
        }
      }
      cost += cellInk - glyphInk; // ink between cells does not belong to any glyph
      const { char, distance } = matchGlyph(hi, lo);
      cost += distance * area;
      line += char;
      const right = cx + GLYPH_W * scale;
      box = box ? { ...box, x2: right } : { x1: cx, x2: right, y1: cy, y2: cy + GLYPH_H * scale };
    }
    lines.push(line.replace(/\s+$/, ''));
    boxes.push(box);
  }
  return { cost: cost / Math.max(1, ink.total), scale, lines, boxes };
}

/** Above this share of misfit ink the picture is not text in the font: nothing is read. */
const MAX_COST = 0.35;

/** Reads the text renderText drew into `image`; an image without such text gives ''. */
export function recognise(image: GrayImage): OcrPage {
  const ink = new InkSums(image);
  const page: OcrPage = { width: image.width, height: image.height, text: '', blocks: [] };
  if (ink.total === 0) return page;

  let best: Reading | undefined;
  for (let scale = 1; scale <= MAX_SCALE && ADVANCE * scale <= image.width && LINE * scale <= image.height; scale++) {
    const xs = gapPhases(ink.cols, ADVANCE * scale, scale);
    const ys = gapPhases(ink.rows, LINE * scale, 3 * scale);
    // The one-pixel column gap and the three-row line gap are empty at the true scale; skip scales
    // whose grid cannot fit the ink (a few specks aside).
    if ((xs.ink + ys.ink) / ink.total > 0.05) continue;
    for (const gx of spread(xs.starts, 4)) {
      for (const gy of spread(ys.starts, 2 * scale + 2)) {
        const reading = readGrid(ink, scale, (gx + scale) % (ADVANCE * scale), (gy + 3 * scale) % (LINE * scale));
        if (!best || reading.cost < best.cost || (reading.cost === best.cost && reading.scale > best.scale))
          best = reading;
      }
    }
  }
  if (!best || best.cost > MAX_COST) return page;

  // Blank lines above the first and below the last line of text are margins, not content.
  let first = best.lines.findIndex((l) => l !== '');
  let last = best.lines.length - 1;
  while (last >= 0 && best.lines[last] === '') last--;
  if (first < 0) first = 0;
  const lines = best.lines.slice(first, last + 1);
  const boxes = best.boxes.slice(first, last + 1);
  page.text = lines.join('\n');

  let block: OcrBlock | undefined;
  lines.forEach((line, i) => {
    const box = boxes[i];
    if (line === '' || !box) {
      block = undefined;
      return;
    }
    if (!block) {
      block = { text: line, box: { ...box } };
      page.blocks.push(block);
    } else {
      block.text += `\n${line}`;
      block.box = {
        x1: Math.min(block.box.x1, box.x1),
        y1: block.box.y1,
        x2: Math.max(block.box.x2, box.x2),
        y2: box.y2,
      };
    }
  });
  return page;
}
