/**
 * A small, structurally valid MP4 (ISO-BMFF) for the simulator's video results: ftyp, moov (mvhd, one video
 * trak with tkhd/mdia/mdhd/hdlr/minf/vmhd/dinf/stbl and an avc1 sample entry carrying a real H.264 SPS/PPS
 * for the size), then mdat with one sample per second. The sample tables agree with mdat (sizes, offset,
 * durations), so MP4 parsers read duration and size; the samples themselves are filler, not decodable
 * pictures, which keeps the file a few hundred bytes.
 */

/** Options of the generated file. */
export interface Mp4Options {
  seconds?: number;
  width?: number;
  height?: number;
}

function u8(n: number): Buffer {
  return Buffer.from([n & 0xff]);
}
function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n & 0xffff);
  return b;
}
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** A box: 32-bit size, four-character type, payload. */
function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]);
}

/** A full box: version and 24-bit flags before the payload. */
function fullBox(type: string, version: number, flags: number, ...payload: Buffer[]): Buffer {
  return box(type, u8(version), u8(flags >> 16), u16(flags & 0xffff), ...payload);
}

/** The unity transformation matrix of mvhd/tkhd. */
const MATRIX = Buffer.concat([0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].map(u32));

/** Writes bits MSB first, with H.264 exp-Golomb codes. */
class BitWriter {
  readonly #bits: number[] = [];
  bit(b: number): this {
    this.#bits.push(b & 1);
    return this;
  }
  bits(value: number, n: number): this {
    for (let i = n - 1; i >= 0; i--) this.bit((value >>> i) & 1);
    return this;
  }
  /** ue(v). */
  ue(v: number): this {
    const x = v + 1;
    const len = Math.floor(Math.log2(x));
    this.bits(0, len);
    return this.bits(x, len + 1);
  }
  /** rbsp_trailing_bits, then bytes with emulation prevention. */
  nal(header: number): Buffer {
    this.bit(1);
    while (this.#bits.length % 8 !== 0) this.bit(0);
    const raw: number[] = [];
    for (let i = 0; i < this.#bits.length; i += 8) {
      let byte = 0;
      for (let j = 0; j < 8; j++) byte = (byte << 1) | (this.#bits[i + j] as number);
      raw.push(byte);
    }
    const out: number[] = [header];
    let zeros = 0;
    for (const byte of raw) {
      if (zeros >= 2 && byte <= 3) {
        out.push(3);
        zeros = 0;
      }
      out.push(byte);
      zeros = byte === 0 ? zeros + 1 : 0;
    }
    return Buffer.from(out);
  }
}

const PROFILE_BASELINE = 66;
const LEVEL = 40;

/** A Baseline-profile sequence parameter set for width × height (4:2:0, frame cropping when not a multiple of 16). */
function sps(width: number, height: number): Buffer {
  const mbW = Math.ceil(width / 16);
  const mbH = Math.ceil(height / 16);
  const w = new BitWriter()
    .bits(PROFILE_BASELINE, 8)
    .bits(0xc0, 8) // constraint_set0/1 flags
    .bits(LEVEL, 8)
    .ue(0) // seq_parameter_set_id
    .ue(0) // log2_max_frame_num_minus4
    .ue(0) // pic_order_cnt_type
    .ue(0) // log2_max_pic_order_cnt_lsb_minus4
    .ue(1) // max_num_ref_frames
    .bit(0) // gaps_in_frame_num_value_allowed_flag
    .ue(mbW - 1)
    .ue(mbH - 1)
    .bit(1) // frame_mbs_only_flag
    .bit(1); // direct_8x8_inference_flag
  const cropRight = (mbW * 16 - width) / 2;
  const cropBottom = (mbH * 16 - height) / 2;
  if (cropRight > 0 || cropBottom > 0) {
    w.bit(1).ue(0).ue(Math.floor(cropRight)).ue(0).ue(Math.floor(cropBottom));
  } else w.bit(0);
  w.bit(0); // vui_parameters_present_flag
  return w.nal(0x67);
}

/** A picture parameter set matching the SPS (CAVLC). */
function pps(): Buffer {
  return new BitWriter()
    .ue(0) // pic_parameter_set_id
    .ue(0) // seq_parameter_set_id
    .bit(0) // entropy_coding_mode_flag (CAVLC)
    .bit(0) // bottom_field_pic_order_in_frame_present_flag
    .ue(0) // num_slice_groups_minus1
    .ue(0) // num_ref_idx_l0_default_active_minus1
    .ue(0) // num_ref_idx_l1_default_active_minus1
    .bit(0) // weighted_pred_flag
    .bits(0, 2) // weighted_bipred_idc
    .ue(0) // pic_init_qp_minus26: se(0) is coded like ue(0)
    .ue(0) // pic_init_qs_minus26
    .ue(0) // chroma_qp_index_offset
    .bit(1) // deblocking_filter_control_present_flag
    .bit(0) // constrained_intra_pred_flag
    .bit(0) // redundant_pic_cnt_present_flag
    .nal(0x68);
}

/** The video's frame size and length, in the movie's timescale (milliseconds). */
interface Track {
  width: number;
  height: number;
  seconds: number;
  timescale: number;
  duration: number;
}

/** One filler sample per second: a 4-byte length prefix and an IDR-typed NAL unit of deterministic bytes. */
function fillerSamples(seconds: number): Buffer[] {
  const samples: Buffer[] = [];
  for (let i = 0; i < seconds; i++) {
    const payload = Buffer.alloc(24 + i, 0);
    payload[0] = 0x65;
    for (let j = 1; j < payload.length; j++) payload[j] = 0x80 + ((i * 13 + j * 7) % 0x70);
    samples.push(Buffer.concat([u32(payload.length), payload]));
  }
  return samples;
}

/** The H.264 sample entry: frame size, and the SPS and PPS in its avcC box. */
function avc1Entry(width: number, height: number): Buffer {
  const spsNal = sps(width, height);
  const ppsNal = pps();
  const avcC = box(
    'avcC',
    u8(1),
    u8(PROFILE_BASELINE),
    u8(0xc0),
    u8(LEVEL),
    u8(0xff), // lengthSizeMinusOne = 3
    u8(0xe1), // one SPS
    u16(spsNal.length),
    spsNal,
    u8(1), // one PPS
    u16(ppsNal.length),
    ppsNal,
  );
  const compressor = Buffer.alloc(32);
  compressor.write('\u0006gw sim', 'latin1');
  return box(
    'avc1',
    Buffer.alloc(6), // reserved
    u16(1), // data_reference_index
    Buffer.alloc(16), // pre_defined, reserved
    u16(width),
    u16(height),
    u32(0x00480000), // 72 dpi
    u32(0x00480000),
    u32(0),
    u16(1), // frame_count
    compressor,
    u16(0x0018), // depth
    u16(0xffff), // pre_defined = -1
    avcC,
  );
}

/** The sample table: every sample a sync frame of one second, all in one chunk at `chunkOffset`. */
function sampleTable(t: Track, samples: Buffer[], chunkOffset: number): Buffer {
  return box(
    'stbl',
    fullBox('stsd', 0, 0, u32(1), avc1Entry(t.width, t.height)),
    fullBox('stts', 0, 0, u32(1), u32(t.seconds), u32(t.timescale)),
    fullBox('stss', 0, 0, u32(t.seconds), ...samples.map((_, i) => u32(i + 1))),
    fullBox('stsc', 0, 0, u32(1), u32(1), u32(t.seconds), u32(1)),
    fullBox('stsz', 0, 0, u32(0), u32(t.seconds), ...samples.map((s) => u32(s.length))),
    fullBox('stco', 0, 0, u32(1), u32(chunkOffset)),
  );
}

/** The one video track. */
function videoTrack(t: Track, samples: Buffer[], chunkOffset: number): Buffer {
  return box(
    'trak',
    fullBox(
      'tkhd',
      0,
      3, // enabled, in movie
      u32(0),
      u32(0),
      u32(1), // track_ID
      u32(0),
      u32(t.duration),
      Buffer.alloc(8),
      u16(0), // layer
      u16(0), // alternate_group
      u16(0), // volume (video)
      u16(0),
      MATRIX,
      u32(t.width * 0x10000),
      u32(t.height * 0x10000),
    ),
    box(
      'mdia',
      fullBox('mdhd', 0, 0, u32(0), u32(0), u32(t.timescale), u32(t.duration), u16(0x55c4), u16(0)), // 'und'
      fullBox(
        'hdlr',
        0,
        0,
        u32(0),
        Buffer.from('vide', 'latin1'),
        Buffer.alloc(12),
        Buffer.from('VideoHandler\0', 'latin1'),
      ),
      box(
        'minf',
        fullBox('vmhd', 0, 1, Buffer.alloc(8)),
        box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))),
        sampleTable(t, samples, chunkOffset),
      ),
    ),
  );
}

/** The movie box: its header and the track. */
function movie(t: Track, samples: Buffer[], chunkOffset: number): Buffer {
  return box(
    'moov',
    fullBox(
      'mvhd',
      0,
      0,
      u32(0),
      u32(0),
      u32(t.timescale),
      u32(t.duration),
      u32(0x00010000), // rate 1.0
      u16(0x0100), // volume 1.0
      Buffer.alloc(10),
      MATRIX,
      Buffer.alloc(24),
      u32(2), // next_track_ID
    ),
    videoTrack(t, samples, chunkOffset),
  );
}

/**
 * Builds the MP4. Sizes default to 1280×720 and 5 seconds; every call with the same options returns the same
 * bytes (tests compare exact downloads).
 */
export function makeMp4(o: Mp4Options = {}): Buffer {
  const seconds = Math.max(1, Math.round(o.seconds ?? 5));
  const timescale = 1000;
  const t: Track = {
    width: o.width ?? 1280,
    height: o.height ?? 720,
    seconds,
    timescale,
    duration: seconds * timescale,
  };
  const samples = fillerSamples(seconds);
  const ftyp = box(
    'ftyp',
    Buffer.from('isom', 'latin1'),
    u32(0x200),
    Buffer.from('isomiso2avc1mp41', 'latin1'),
  );
  // "Fast start": moov before mdat; its size does not depend on the offset value, so measure, then fill in.
  const moovLength = movie(t, samples, 0).length;
  const moov = movie(t, samples, ftyp.length + moovLength + 8);
  return Buffer.concat([ftyp, moov, box('mdat', Buffer.concat(samples))]);
}

/** One parsed box (tests and `gw sim` self-checks). */
export interface Mp4Box {
  type: string;
  start: number;
  size: number;
  children?: Mp4Box[];
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'dinf', 'stbl']);

/** Parses the box tree (containers expanded); throws when a size runs past its parent. */
export function parseMp4Boxes(buf: Buffer, start = 0, end = buf.length): Mp4Box[] {
  const out: Mp4Box[] = [];
  let pos = start;
  while (pos < end) {
    if (pos + 8 > end) throw new Error(`truncated box header at ${pos}`);
    const size = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    if (size < 8 || pos + size > end) throw new Error(`box ${type} at ${pos} has bad size ${size}`);
    const b: Mp4Box = { type, start: pos, size };
    if (CONTAINERS.has(type)) b.children = parseMp4Boxes(buf, pos + 8, pos + size);
    out.push(b);
    pos += size;
  }
  return out;
}
