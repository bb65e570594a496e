import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A real, decodable grey 8-bit PNG of the given size (built with node:zlib). */
export function makePng(width: number, height: number, grey = 0x80): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // colour type: greyscale
  const row = Buffer.alloc(width + 1, grey);
  row[0] = 0; // filter: none
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function segment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/**
 * A JPEG whose headers are well formed (SOI, APP0 JFIF, an APP1 block, DQT, SOFn, EOI): enough for header
 * readers; no entropy-coded data. `sof` picks baseline (0xc0), extended (0xc1) or progressive (0xc2).
 */
export function makeJpeg(width: number, height: number, o: { sof?: number; fill?: boolean } = {}): Buffer {
  const sofPayload = Buffer.alloc(6 + 3);
  sofPayload[0] = 8; // precision
  sofPayload.writeUInt16BE(height, 1);
  sofPayload.writeUInt16BE(width, 3);
  sofPayload[5] = 1; // one component
  sofPayload[6] = 1;
  sofPayload[7] = 0x11;
  sofPayload[8] = 0;
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.from('JFIF\0\x01\x02\0\0\x01\0\x01\0\0', 'latin1')),
    segment(0xe1, Buffer.alloc(300, 0xff)), // an APP1 block full of 0xFF bytes a naive scanner would trip on
    ...(o.fill === true ? [Buffer.from([0xff, 0xff, 0xff])] : []), // fill bytes before the next marker
    segment(0xdb, Buffer.alloc(65, 1)),
    segment(o.sof ?? 0xc0, sofPayload),
    Buffer.from([0xff, 0xd9]),
  ]);
}
