/**
 * The protobuf writes of gw's OTLP span encoder, read back by protobufjs: varints past 2^32, timestamps past 2^53
 * nanoseconds to the nanosecond, and nested messages whose length takes more or fewer bytes than kept for it.
 */
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { FIXED64, LEN, ProtoWriter, unixNanos, VARINT } from '../../../src/core/proto-writer.js';

/** A 64-bit value protobufjs read (a Long, or a number when it fits), as a bigint. */
function u64(v: number | { low: number; high: number }): bigint {
  return typeof v === 'number' ? BigInt(v) : (BigInt(v.high >>> 0) << 32n) + BigInt(v.low >>> 0);
}

describe('ProtoWriter', () => {
  it('writes varints up to 2^64 and fixed64 halves that protobufjs reads back', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 53n }), (n) => {
        const r = protobuf.Reader.create(new ProtoWriter(1).varint(Number(n)).finish());
        expect(u64(r.uint64())).toBe(n);
      }),
    );
    const big = protobuf.Reader.create(new ProtoWriter().varint(2 ** 63).finish());
    expect(u64(big.uint64())).toBe(2n ** 63n);
  });

  it('timestamps: epoch milliseconds to the nanosecond, as the OpenTelemetry SDK rounds them', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 4_000_000_000_000, noNaN: true }), (ms) => {
        const { lo, hi } = unixNanos(ms);
        const want = BigInt(Math.trunc(ms / 1000)) * 1_000_000_000n + BigInt(Math.round((ms % 1000) * 1e6));
        expect((BigInt(hi) << 32n) + BigInt(lo)).toBe(want);
        const r = protobuf.Reader.create(new ProtoWriter().tag(7, FIXED64).fixed64(lo, hi).finish());
        expect(r.uint32()).toBe((7 << 3) | 1);
        expect(u64(r.fixed64())).toBe(want);
      }),
    );
  });

  it('nested messages: the length written once they end, whatever room was kept for it', () => {
    for (const size of [0, 1, 127, 128, 300, 16_383, 16_384, 70_000]) {
      for (const reserved of [1, 2, 3]) {
        const text = 'é'.repeat(size >> 1) + 'x'.repeat(size & 1);
        const w = new ProtoWriter(4).tag(1, LEN);
        const at = w.begin(reserved);
        w.tag(2, LEN).string(text).tag(3, VARINT).varint(size);
        const r = protobuf.Reader.create(w.end(at, reserved).tag(4, VARINT).varint(9).finish());
        expect(r.uint32()).toBe((1 << 3) | 2);
        const inner = protobuf.Reader.create(r.bytes());
        expect(inner.uint32()).toBe((2 << 3) | 2);
        expect(inner.string()).toBe(text);
        expect(inner.uint32()).toBe((3 << 3) | 0);
        expect(inner.uint32()).toBe(size);
        expect(r.uint32()).toBe((4 << 3) | 0);
        expect(r.uint32()).toBe(9);
      }
    }
  });
});
