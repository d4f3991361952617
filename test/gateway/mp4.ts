import { h264Still } from './h264';

/**
 * MP4 files for the video results, and a box parser for tests.
 *
 * The writer lays out ISO BMFF the "fast start" way: ftyp, moov (mvhd, one video trak with tkhd and
 * mdia → mdhd, hdlr, minf → vmhd, dinf/dref, stbl → stsd/avc1/avcC, stts, stss, stsc, stsz, stco),
 * then mdat holding the H.264 samples of h264.ts (length-prefixed NAL units, one chunk). The result
 * decodes with ffmpeg to a still picture drawn from the prompt, duration × 24 frames. Files are
 * described as segments (buffers and runs of one byte value) so a 1 GB padded file costs no memory
 * until it is streamed, and any byte range can be read without building the rest.
 */

export type Segment = Buffer | { fill: number; length: number };

export interface VirtualFile {
  size: number;
  segments: Segment[];
}

const FILL_CHUNK = 64 * 1024;
const fillBuffers = new Map<number, Buffer>();

function fillBuffer(value: number): Buffer {
  let buf = fillBuffers.get(value);
  if (!buf) {
    buf = Buffer.alloc(FILL_CHUNK, value);
    fillBuffers.set(value, buf);
  }
  return buf;
}

const segmentLength = (s: Segment): number => (Buffer.isBuffer(s) ? s.length : s.length);

export function fileOf(...segments: Segment[]): VirtualFile {
  return { size: segments.reduce((n, s) => n + segmentLength(s), 0), segments };
}

/** The bytes [start, end) in pieces of at most 64 KiB (buffers are shared: do not modify them). */
export function* readRange(file: VirtualFile, start = 0, end = file.size): Generator<Buffer> {
  let at = 0;
  for (const s of file.segments) {
    const length = segmentLength(s);
    const from = Math.max(start, at);
    const to = Math.min(end, at + length);
    if (from < to) {
      if (Buffer.isBuffer(s)) {
        for (let p = from; p < to; p += FILL_CHUNK) yield s.subarray(p - at, Math.min(to, p + FILL_CHUNK) - at);
      } else {
        const chunk = fillBuffer(s.fill);
        for (let p = from; p < to; p += FILL_CHUNK) yield chunk.subarray(0, Math.min(to - p, FILL_CHUNK));
      }
    }
    at += length;
    if (at >= end) return;
  }
}

/** The whole file in memory (for small files and tests). */
export function materialize(file: VirtualFile): Buffer {
  return Buffer.concat([...readRange(file)]);
}

// ------------------------------------------------------------------------------------------ writer

function u8(n: number): Buffer {
  return Buffer.from([n & 0xff]);
}
function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n & 0xffff, 0);
  return b;
}
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]);
}

function fullBox(type: string, version: number, flags: number, ...payload: Buffer[]): Buffer {
  return box(type, u32(((version & 0xff) << 24) | (flags & 0xffffff)), ...payload);
}

/** The identity matrix of mvhd/tkhd. */
const MATRIX = Buffer.concat([0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].map(u32));

export const VIDEO_FPS = 24;
/** ffmpeg's usual timescale for 24 fps, 512 ticks per frame. */
const TIMESCALE = 12288;
const FRAME_TICKS = TIMESCALE / VIDEO_FPS;

export interface Mp4Options {
  /** Drawn into the picture (and so into the mdat bytes). */
  seedText: string;
  width: number;
  height: number;
  durationSec: number;
  /** Pad to about this many bytes with H.264 filler NAL units (0xFF runs). */
  targetBytes?: number;
  /** Leave the moov box out: ftyp + mdat, as a download cut before a trailing moov would be. */
  withoutMoov?: boolean;
}

export function buildMp4(opts: Mp4Options): VirtualFile {
  const stream = h264Still(opts.seedText, opts.width, opts.height);
  const frames = Math.max(1, Math.round(opts.durationSec * VIDEO_FPS));

  // Samples: length-prefixed NAL units. Sample 0 is the IDR picture, the rest P pictures.
  const samples: Segment[][] = [[u32(stream.idr.length), stream.idr]];
  for (let i = 1; i < frames; i++) {
    const p = stream.pFrame(i);
    samples.push([u32(p.length), p]);
  }
  const natural = samples.reduce((n, s) => n + s.reduce((m, seg) => m + segmentLength(seg), 0), 0);
  const ftyp = box('ftyp', Buffer.from('isom', 'latin1'), u32(512), Buffer.from('isomiso2avc1mp41', 'latin1'));
  const moovFor = (chunkOffset: number, sizes: number[]) => moov(opts, stream, frames, sizes, chunkOffset);

  // Padding goes into the P samples as filler NAL units: [len][0x0C][0xFF × k][0x80] (6 + k bytes).
  if (opts.targetBytes !== undefined && frames > 1) {
    const overhead =
      ftyp.length +
      moovFor(
        0,
        samples.map(() => 0),
      ).length +
      8;
    let extra = opts.targetBytes - overhead - natural;
    const carriers = frames - 1;
    for (let i = 1; i <= carriers && extra >= 6; i++) {
      const share = i === carriers ? extra : Math.floor(extra / (carriers - i + 1));
      if (share < 6) continue;
      const k = share - 6;
      samples[i]?.push(u32(k + 2), Buffer.from([0x0c]), { fill: 0xff, length: k }, Buffer.from([0x80]));
      extra -= share;
    }
  }

  const sizes = samples.map((s) => s.reduce((n, seg) => n + segmentLength(seg), 0));
  const payload = sizes.reduce((a, b) => a + b, 0);
  const mdatHeader = Buffer.concat([u32(8 + payload), Buffer.from('mdat', 'latin1')]);
  const flat = samples.flat();
  if (opts.withoutMoov) return fileOf(ftyp, mdatHeader, ...flat);
  const moovLength = moovFor(0, sizes).length;
  const offset = ftyp.length + moovLength + mdatHeader.length;
  return fileOf(ftyp, moovFor(offset, sizes), mdatHeader, ...flat);
}

function moov(
  opts: Mp4Options,
  stream: ReturnType<typeof h264Still>,
  frames: number,
  sizes: number[],
  chunkOffset: number,
): Buffer {
  const movieMs = Math.round((frames * 1000) / VIDEO_FPS);
  const mvhd = fullBox(
    'mvhd',
    0,
    0,
    u32(0),
    u32(0),
    u32(1000),
    u32(movieMs),
    u32(0x00010000),
    u16(0x0100),
    Buffer.alloc(10),
    MATRIX,
    Buffer.alloc(24),
    u32(2),
  );
  const tkhd = fullBox(
    'tkhd',
    0,
    3, // enabled, in movie
    u32(0),
    u32(0),
    u32(1), // track_ID
    u32(0),
    u32(movieMs),
    Buffer.alloc(8),
    u16(0), // layer
    u16(0), // alternate_group
    u16(0), // volume
    u16(0),
    MATRIX,
    u32(opts.width * 0x10000),
    u32(opts.height * 0x10000),
  );
  const mdhd = fullBox(
    'mdhd',
    0,
    0,
    u32(0),
    u32(0),
    u32(TIMESCALE),
    u32(frames * FRAME_TICKS),
    u16(0x55c4 /* und */),
    u16(0),
  );
  const hdlr = fullBox(
    'hdlr',
    0,
    0,
    u32(0),
    Buffer.from('vide', 'latin1'),
    Buffer.alloc(12),
    Buffer.from('VideoHandler\0', 'latin1'),
  );
  const vmhd = fullBox('vmhd', 0, 1, u16(0), Buffer.alloc(6));
  const dinf = box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1)));
  const avcC = box(
    'avcC',
    u8(1),
    u8(stream.profile),
    u8(stream.compatibility),
    u8(stream.level),
    u8(0xff), // lengthSizeMinusOne = 3
    u8(0xe1), // one SPS
    u16(stream.sps.length),
    stream.sps,
    u8(1),
    u16(stream.pps.length),
    stream.pps,
  );
  const compressor = Buffer.alloc(32);
  const name = 'double h264 still';
  compressor[0] = name.length;
  compressor.write(name, 1, 'latin1');
  const avc1 = box(
    'avc1',
    Buffer.alloc(6),
    u16(1), // data_reference_index
    Buffer.alloc(16),
    u16(opts.width),
    u16(opts.height),
    u32(0x00480000),
    u32(0x00480000),
    u32(0),
    u16(1), // frame_count
    compressor,
    u16(0x0018),
    u16(0xffff),
    avcC,
    box('pasp', u32(1), u32(1)),
  );
  const stbl = box(
    'stbl',
    fullBox('stsd', 0, 0, u32(1), avc1),
    fullBox('stts', 0, 0, u32(1), u32(frames), u32(FRAME_TICKS)),
    fullBox('stss', 0, 0, u32(1), u32(1)),
    fullBox('stsc', 0, 0, u32(1), u32(1), u32(frames), u32(1)),
    fullBox('stsz', 0, 0, u32(0), u32(sizes.length), ...sizes.map(u32)),
    fullBox('stco', 0, 0, u32(1), u32(chunkOffset)),
  );
  return box('moov', mvhd, box('trak', tkhd, box('mdia', mdhd, hdlr, box('minf', vmhd, dinf, stbl))));
}

// ------------------------------------------------------------------------------------------ parser

export interface Mp4Box {
  type: string;
  /** Offset of the box header in the buffer. */
  offset: number;
  /** Whole box, header included. */
  size: number;
  headerSize: number;
  children?: Mp4Box[];
}

const CONTAINERS = new Set([
  'moov',
  'trak',
  'mdia',
  'minf',
  'stbl',
  'dinf',
  'edts',
  'udta',
  'mvex',
  'moof',
  'traf',
  'mfra',
]);
/** Boxes with fields before their child boxes: how many payload bytes to skip. */
const SKIP_BEFORE_CHILDREN: Record<string, number> = {
  stsd: 8,
  dref: 8,
  avc1: 78,
  avc3: 78,
  hvc1: 78,
  hev1: 78,
  mp4v: 78,
  mp4a: 28,
};

/**
 * The box tree of an ISO BMFF file. Throws on a box whose size runs past its parent (or the buffer),
 * naming it, the way strict demuxers refuse such files.
 */
export function mp4Boxes(buf: Buffer, start = 0, end = buf.length): Mp4Box[] {
  const boxes: Mp4Box[] = [];
  let at = start;
  while (at < end) {
    if (end - at < 8) throw new Error(`mp4: ${end - at} stray bytes at offset ${at}`);
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let headerSize = 8;
    if (size === 1) {
      if (end - at < 16) throw new Error(`mp4: box ${type} at ${at} has a cut 64-bit size`);
      size = Number(buf.readBigUInt64BE(at + 8));
      headerSize = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < headerSize || at + size > end)
      throw new Error(`mp4: box ${type} at ${at} claims ${size} bytes, only ${end - at} left`);
    const found: Mp4Box = { type, offset: at, size, headerSize };
    const skip = SKIP_BEFORE_CHILDREN[type];
    if (CONTAINERS.has(type) || skip !== undefined)
      found.children = mp4Boxes(buf, at + headerSize + (skip ?? 0), at + size);
    boxes.push(found);
    at += size;
  }
  return boxes;
}

/** The first box at a slash-separated path, e.g. `moov/trak/mdia/minf/stbl/stsd/avc1`. */
export function findMp4Box(boxes: Mp4Box[], path: string): Mp4Box | undefined {
  let level: Mp4Box[] | undefined = boxes;
  let found: Mp4Box | undefined;
  for (const type of path.split('/')) {
    found = level?.find((b) => b.type === type);
    if (!found) return undefined;
    level = found.children;
  }
  return found;
}

export interface Mp4Summary {
  majorBrand?: string;
  hasMoov: boolean;
  hasMdat: boolean;
  /** First sample entry of the first track, e.g. `avc1`. */
  codec?: string;
  width?: number;
  height?: number;
  durationSec?: number;
  frames?: number;
  mdatBytes: number;
  /** Every sample lies inside the file (chunk offsets + sizes), as a player needs. */
  samplesInside: boolean;
}

/** What a player would check first; throws as mp4Boxes does for a malformed file. */
export function mp4Summary(buf: Buffer): Mp4Summary {
  const boxes = mp4Boxes(buf);
  const ftyp = findMp4Box(boxes, 'ftyp');
  const mdat = boxes.find((b) => b.type === 'mdat');
  const body = (b: Mp4Box) => buf.subarray(b.offset + b.headerSize, b.offset + b.size);
  const summary: Mp4Summary = {
    ...(ftyp ? { majorBrand: buf.toString('latin1', ftyp.offset + 8, ftyp.offset + 12) } : {}),
    hasMoov: Boolean(findMp4Box(boxes, 'moov')),
    hasMdat: Boolean(mdat),
    mdatBytes: mdat ? mdat.size - mdat.headerSize : 0,
    samplesInside: false,
  };
  const mvhd = findMp4Box(boxes, 'moov/mvhd');
  if (mvhd) {
    const b = body(mvhd);
    const v1 = b[0] === 1;
    const timescale = b.readUInt32BE(v1 ? 20 : 12);
    const duration = v1 ? Number(b.readBigUInt64BE(24)) : b.readUInt32BE(16);
    summary.durationSec = duration / timescale;
  }
  const stbl = findMp4Box(boxes, 'moov/trak/mdia/minf/stbl');
  const entry = stbl && findMp4Box(stbl.children ?? [], 'stsd')?.children?.[0];
  if (entry) {
    summary.codec = entry.type;
    const b = body(entry);
    summary.width = b.readUInt16BE(24);
    summary.height = b.readUInt16BE(26);
  }
  const stsz = stbl && findMp4Box(stbl.children ?? [], 'stsz');
  const stco = stbl && findMp4Box(stbl.children ?? [], 'stco');
  if (stsz && stco) {
    const sz = body(stsz);
    const uniform = sz.readUInt32BE(4);
    const count = sz.readUInt32BE(8);
    summary.frames = count;
    const total = uniform
      ? uniform * count
      : Array.from({ length: count }, (_, i) => sz.readUInt32BE(12 + i * 4)).reduce((a, b) => a + b, 0);
    const co = body(stco);
    const chunks = co.readUInt32BE(4);
    // The double writes one chunk; for other files check only that the first chunk starts inside.
    const first = chunks > 0 ? co.readUInt32BE(8) : 0;
    summary.samplesInside = chunks === 1 ? first + total <= buf.length : first < buf.length;
  }
  return summary;
}
