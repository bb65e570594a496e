/**
 * Image dimensions read from file headers, without decoding pixels. Pure: works on a Buffer.
 * Only the types the alpha family accepts (wire-formats.md §5: jpg/jpeg/png) are recognised.
 */

/** The image types gw recognises. */
export type ImageType = 'png' | 'jpeg';

/** What a header says about an image. */
export interface ImageInfo {
  type: ImageType;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The type of an image from its first bytes (magic numbers), or undefined. */
export function sniffImageType(buf: Uint8Array): ImageType | undefined {
  if (buf.length >= 8 && Buffer.from(buf.subarray(0, 8)).equals(PNG_SIGNATURE)) return 'png';
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'jpeg';
  return undefined;
}

function pngSize(buf: Buffer): ImageInfo | undefined {
  // The PNG spec requires IHDR to be the first chunk: length(4) "IHDR"(4) width(4) height(4), big-endian.
  if (buf.length < 24 || buf.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  return width > 0 && height > 0 ? { type: 'png', width, height } : undefined;
}

// Start-of-frame markers carry the frame size: C0..CF except C4 (DHT), C8 (JPG extension) and CC (DAC).
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpegSize(buf: Buffer): ImageInfo | undefined {
  let i = 2; // after SOI (FF D8)
  while (i < buf.length) {
    if (buf[i] !== 0xff) return undefined; // lost sync: not a marker where one must be
    // Any number of 0xFF fill bytes may precede a marker.
    while (i < buf.length && buf[i] === 0xff) i++;
    const marker = buf[i];
    i++;
    if (marker === undefined) return undefined;
    // Markers without a length field: TEM, RST0..7, SOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
    if (marker === 0xd9 || marker === 0xda) return undefined; // EOI or start of scan before any frame header
    if (i + 2 > buf.length) return undefined;
    const length = buf.readUInt16BE(i);
    if (length < 2) return undefined;
    if (isStartOfFrame(marker)) {
      // length(2) precision(1) height(2) width(2)
      if (i + 7 > buf.length) return undefined;
      const height = buf.readUInt16BE(i + 3);
      const width = buf.readUInt16BE(i + 5);
      return width > 0 && height > 0 ? { type: 'jpeg', width, height } : undefined;
    }
    i += length;
  }
  return undefined;
}

/** Width, height and type of a PNG (IHDR) or JPEG (SOFn) image, or undefined when the header is not readable. */
export function imageSize(bytes: Uint8Array): ImageInfo | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = sniffImageType(buf);
  if (type === 'png') return pngSize(buf);
  if (type === 'jpeg') return jpegSize(buf);
  return undefined;
}
