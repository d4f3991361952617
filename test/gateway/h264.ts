import { drawCells } from './imageCodecs';

/**
 * A tiny H.264 (Constrained Baseline, CAVLC) writer that needs no transform coding, so the MP4s of
 * the double decode for real: the first frame is an IDR picture whose macroblocks are all I_PCM
 * (raw samples), every later frame a P picture whose macroblocks are all skipped (mb_skip_run = all),
 * i.e. a still picture for the whole duration. Parameter sets follow ITU-T H.264 §7.3.2.1/§7.3.2.2.
 */

/** MSB-first bit writer over a growable buffer, with Exp-Golomb codes. */
class RbspWriter {
  private buf: Buffer;
  private bytes = 0;
  private acc = 0;
  private count = 0;

  constructor(capacity = 64) {
    this.buf = Buffer.alloc(capacity);
  }

  private push(byte: number): void {
    if (this.bytes === this.buf.length) {
      const bigger = Buffer.alloc(this.buf.length * 2);
      this.buf.copy(bigger);
      this.buf = bigger;
    }
    this.buf[this.bytes++] = byte;
  }

  u(length: number, value: number): void {
    for (let i = length - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((value >>> i) & 1);
      if (++this.count === 8) {
        this.push(this.acc);
        this.acc = 0;
        this.count = 0;
      }
    }
  }

  ue(value: number): void {
    const x = value + 1;
    const length = 32 - Math.clz32(x);
    this.u(length - 1, 0);
    this.u(length, x);
  }

  se(value: number): void {
    this.ue(value <= 0 ? -2 * value : 2 * value - 1);
  }

  alignZero(): void {
    while (this.count !== 0) this.u(1, 0);
  }

  /** Whole bytes; only when aligned. */
  raw(bytes: Uint8Array): void {
    if (this.count !== 0) throw new Error('h264: raw bytes need byte alignment');
    for (const b of bytes) this.push(b);
  }

  /** rbsp_trailing_bits. */
  finish(): Buffer {
    this.u(1, 1);
    this.alignZero();
    return this.buf.subarray(0, this.bytes);
  }
}

/** NAL unit: header byte, then the RBSP with emulation-prevention bytes inserted. */
function nal(header: number, rbsp: Buffer): Buffer {
  const out = Buffer.alloc(1 + rbsp.length + Math.ceil(rbsp.length / 2) + 1);
  let n = 0;
  out[n++] = header;
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out[n++] = 3;
      zeros = 0;
    }
    out[n++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, n);
}

export interface H264Stream {
  width: number;
  height: number;
  sps: Buffer;
  pps: Buffer;
  /** One access unit (a single NAL unit here) per frame, without length prefixes. */
  idr: Buffer;
  /** The P frame for frame index i ≥ 1 (they differ only in frame_num). */
  pFrame: (index: number) => Buffer;
  profile: number;
  compatibility: number;
  level: number;
}

const PROFILE_BASELINE = 66;
/** constraint_set0_flag and constraint_set1_flag: Constrained Baseline. */
const COMPATIBILITY = 0xc0;
const LEVEL = 40;
/** log2_max_frame_num_minus4 = 0. */
const FRAME_NUM_BITS = 4;

export function h264Still(seedText: string, width: number, height: number): H264Stream {
  if (width % 2 || height % 2) throw new Error('h264: width and height must be even');
  const mbCols = Math.ceil(width / 16);
  const mbRows = Math.ceil(height / 16);

  const sps = new RbspWriter();
  sps.u(8, PROFILE_BASELINE);
  sps.u(8, COMPATIBILITY);
  sps.u(8, LEVEL);
  sps.ue(0); // seq_parameter_set_id
  sps.ue(FRAME_NUM_BITS - 4); // log2_max_frame_num_minus4
  sps.ue(2); // pic_order_cnt_type: output order = decoding order
  sps.ue(1); // max_num_ref_frames
  sps.u(1, 0); // gaps_in_frame_num_value_allowed_flag
  sps.ue(mbCols - 1);
  sps.ue(mbRows - 1);
  sps.u(1, 1); // frame_mbs_only_flag
  sps.u(1, 1); // direct_8x8_inference_flag
  const cropRight = (mbCols * 16 - width) / 2;
  const cropBottom = (mbRows * 16 - height) / 2;
  if (cropRight || cropBottom) {
    sps.u(1, 1);
    sps.ue(0);
    sps.ue(cropRight);
    sps.ue(0);
    sps.ue(cropBottom);
  } else {
    sps.u(1, 0);
  }
  sps.u(1, 0); // vui_parameters_present_flag

  const pps = new RbspWriter();
  pps.ue(0); // pic_parameter_set_id
  pps.ue(0); // seq_parameter_set_id
  pps.u(1, 0); // entropy_coding_mode_flag: CAVLC
  pps.u(1, 0); // bottom_field_pic_order_in_frame_present_flag
  pps.ue(0); // num_slice_groups_minus1
  pps.ue(0); // num_ref_idx_l0_default_active_minus1
  pps.ue(0); // num_ref_idx_l1_default_active_minus1
  pps.u(1, 0); // weighted_pred_flag
  pps.u(2, 0); // weighted_bipred_idc
  pps.se(0); // pic_init_qp_minus26
  pps.se(0); // pic_init_qs_minus26
  pps.se(0); // chroma_qp_index_offset
  pps.u(1, 1); // deblocking_filter_control_present_flag
  pps.u(1, 0); // constrained_intra_pred_flag
  pps.u(1, 0); // redundant_pic_cnt_present_flag

  // The picture: 8×8 cells as for images, two per macroblock side; BT.601 limited-range YCbCr.
  const cols = mbCols * 2;
  const cells = drawCells(seedText, cols, mbRows * 2);
  const ycc = new Uint8Array(cells.length);
  for (let i = 0; i < cells.length; i += 3) {
    const r = cells[i] ?? 0;
    const g = cells[i + 1] ?? 0;
    const b = cells[i + 2] ?? 0;
    ycc[i] = Math.round(16 + (65.738 * r + 129.057 * g + 25.064 * b) / 256);
    ycc[i + 1] = Math.round(128 + (-37.945 * r - 74.494 * g + 112.439 * b) / 256);
    ycc[i + 2] = Math.round(128 + (112.439 * r - 94.154 * g - 18.285 * b) / 256);
  }
  const idr = new RbspWriter(mbCols * mbRows * 390 + 64);
  idr.ue(0); // first_mb_in_slice
  idr.ue(7); // slice_type: I (all slices)
  idr.ue(0); // pic_parameter_set_id
  idr.u(FRAME_NUM_BITS, 0); // frame_num
  idr.ue(0); // idr_pic_id
  idr.u(1, 0); // no_output_of_prior_pics_flag
  idr.u(1, 0); // long_term_reference_flag
  idr.se(0); // slice_qp_delta
  idr.ue(1); // disable_deblocking_filter_idc: off
  const pcm = new Uint8Array(384);
  for (let my = 0; my < mbRows; my++) {
    for (let mx = 0; mx < mbCols; mx++) {
      idr.ue(25); // mb_type I_PCM
      idr.alignZero(); // pcm_alignment_zero_bit
      const cell = (cx: number, cy: number) => ((my * 2 + cy) * cols + mx * 2 + cx) * 3;
      for (let y = 0; y < 16; y++) for (let x = 0; x < 16; x++) pcm[y * 16 + x] = ycc[cell(x >> 3, y >> 3)] ?? 16;
      for (let y = 0; y < 8; y++) {
        for (let x = 0; x < 8; x++) {
          pcm[256 + y * 8 + x] = ycc[cell(x >> 2, y >> 2) + 1] ?? 128;
          pcm[320 + y * 8 + x] = ycc[cell(x >> 2, y >> 2) + 2] ?? 128;
        }
      }
      idr.raw(pcm);
    }
  }

  const pFrames = new Map<number, Buffer>();
  const pFrame = (index: number): Buffer => {
    const frameNum = index % (1 << FRAME_NUM_BITS);
    let frame = pFrames.get(frameNum);
    if (!frame) {
      const p = new RbspWriter();
      p.ue(0); // first_mb_in_slice
      p.ue(5); // slice_type: P (all slices)
      p.ue(0); // pic_parameter_set_id
      p.u(FRAME_NUM_BITS, frameNum);
      p.u(1, 0); // num_ref_idx_active_override_flag
      p.u(1, 0); // ref_pic_list_modification_flag_l0
      p.u(1, 0); // adaptive_ref_pic_marking_mode_flag (sliding window)
      p.se(0); // slice_qp_delta
      p.ue(1); // disable_deblocking_filter_idc
      p.ue(mbCols * mbRows); // mb_skip_run: every macroblock
      // POC type 2 forbids consecutive non-reference pictures, so each P picture is a reference (nal_ref_idc 2).
      frame = nal(0x41, p.finish());
      pFrames.set(frameNum, frame);
    }
    return frame;
  };

  return {
    width,
    height,
    sps: nal(0x67, sps.finish()),
    pps: nal(0x68, pps.finish()),
    idr: nal(0x65, idr.finish()),
    pFrame,
    profile: PROFILE_BASELINE,
    compatibility: COMPATIBILITY,
    level: LEVEL,
  };
}
