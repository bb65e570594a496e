/**
 * The few protobuf wire-format writes the OTLP span encoder needs (otlp-spans.ts), into one growing buffer:
 * varints, fixed-width numbers, strings, bytes given as hex, pieces encoded beforehand, and nested messages whose
 * length is written once they end.
 */

/** Wire types. */
export const VARINT = 0;
export const FIXED64 = 1;
export const LEN = 2;
export const FIXED32 = 5;

const TWO_32 = 4294967296;

export class ProtoWriter {
  #buf: Buffer;
  #pos = 0;

  constructor(size = 1024) {
    this.#buf = Buffer.allocUnsafe(size);
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#pos + n));
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }

  tag(field: number, wire: number): this {
    return this.varint(field * 8 + wire);
  }

  /** A non-negative whole number below 2^64 (int64, uint32, enum, length). */
  varint(n: number): this {
    this.#room(10);
    while (n >= 128) {
      this.#buf[this.#pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.#buf[this.#pos++] = n;
    return this;
  }

  /** A 64-bit value from its two 32-bit halves. */
  fixed64(lo: number, hi: number): this {
    this.#room(8);
    this.#buf.writeUInt32LE(lo, this.#pos);
    this.#buf.writeUInt32LE(hi, this.#pos + 4);
    this.#pos += 8;
    return this;
  }

  fixed32(n: number): this {
    this.#room(4);
    this.#buf.writeUInt32LE(n, this.#pos);
    this.#pos += 4;
    return this;
  }

  double(v: number): this {
    this.#room(8);
    this.#buf.writeDoubleLE(v, this.#pos);
    this.#pos += 8;
    return this;
  }

  /** A length-delimited string (UTF-8). */
  string(s: string): this {
    const n = Buffer.byteLength(s);
    this.varint(n);
    this.#room(n);
    this.#pos += this.#buf.write(s, this.#pos, 'utf8');
    return this;
  }

  /** Length-delimited bytes given as hex digits (an id). */
  hex(s: string): this {
    this.varint(s.length >> 1);
    this.#room(s.length >> 1);
    this.#pos += this.#buf.write(s, this.#pos, 'hex');
    return this;
  }

  /** Bytes encoded beforehand, as they are. */
  raw(bytes: Uint8Array): this {
    this.#room(bytes.length);
    this.#buf.set(bytes, this.#pos);
    this.#pos += bytes.length;
    return this;
  }

  /**
   * Starts a nested message (after its tag): `reserved` bytes are kept for its length, which `end` writes (moving
   * the message when its length takes another number of bytes).
   */
  begin(reserved = 1): number {
    this.#room(reserved);
    this.#pos += reserved;
    return this.#pos;
  }

  end(start: number, reserved = 1): this {
    const length = this.#pos - start;
    const size = varintSize(length);
    if (size !== reserved) {
      this.#room(size - reserved);
      this.#buf.copyWithin(start - reserved + size, start, this.#pos);
      this.#pos += size - reserved;
    }
    const end = this.#pos;
    this.#pos = start - reserved;
    this.varint(length);
    this.#pos = end;
    return this;
  }

  /** What was written (a view of the buffer: the writer is not used after). */
  finish(): Buffer {
    return this.#buf.subarray(0, this.#pos);
  }
}

export function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/**
 * Unix epoch milliseconds as the nanoseconds of an OTLP timestamp (fixed64), split in 32-bit halves without
 * losing a nanosecond (the count passes 2^53): whole seconds and the nanoseconds of the rest, as OpenTelemetry's
 * SDK rounds a millisecond time.
 */
export function unixNanos(ms: number): { lo: number; hi: number } {
  const seconds = Math.trunc(ms / 1000);
  const nanos = Math.round((ms % 1000) * 1e6);
  // seconds * 1e9 + nanos, with seconds = hi16 * 2^16 + lo16: every product below stays under 2^53.
  const lo16 = seconds % 65536;
  const hi16 = (seconds - lo16) / 65536;
  const a = lo16 * 1e9 + nanos;
  const b = hi16 * 1e9;
  const bLo = b % 65536;
  const low = a + bLo * 65536;
  const lo = low % TWO_32;
  return { lo, hi: (b - bLo) / 65536 + (low - lo) / TWO_32 };
}
