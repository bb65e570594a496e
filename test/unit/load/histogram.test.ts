import { describe, expect, it } from 'vitest';
import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import { LatencyHistogram } from '../../../src/load/histogram.js';
import { parseExpr } from '../../../src/load/expr.js';
import { actual } from '../../../src/load/slo.js';

function filled(values: number[]): LatencyHistogram {
  const h = new LatencyHistogram();
  for (const v of values) h.recordMs(v);
  return h;
}

describe('latency histograms', () => {
  it('round-trip through the compressed base64 form with every count and percentile', () => {
    const values = Array.from({ length: 5000 }, (_, i) => 0.5 + ((i * 7919) % 3000) / 3);
    const h = filled(values);
    const text = h.encode();
    expect(text).toMatch(/^[A-Za-z0-9+/=]+$/);
    const back = LatencyHistogram.decode(text);
    expect(back.summary()).toEqual(h.summary());
    expect(back.cdf()).toEqual(h.cdf());
    // The standard HdrHistogram V2 encoding: readable by the library itself (and other ports).
    expect(decodeFromCompressedBase64(text).totalCount).toBe(5000);
  });

  it('keeps 0.1 % resolution in milliseconds', () => {
    const s = filled([50, 50, 50, 50.04]).summary();
    expect(s.p50).toBeGreaterThanOrEqual(50);
    expect(s.p50).toBeLessThan(50.05);
    expect(s.max).toBeLessThan(50.1);
  });

  it('adds exactly: counts are the sum and percentiles those of all values', () => {
    const a = filled(Array.from({ length: 300 }, (_, i) => 10 + i));
    const b = filled(Array.from({ length: 700 }, (_, i) => 500 + i));
    const merged = LatencyHistogram.decode(a.encode());
    merged.add(LatencyHistogram.decode(b.encode()));
    const all = filled([
      ...Array.from({ length: 300 }, (_, i) => 10 + i),
      ...Array.from({ length: 700 }, (_, i) => 500 + i),
    ]);
    expect(merged.count).toBe(1000);
    expect(merged.summary()).toEqual(all.summary());
  });

  it('an empty histogram encodes as "" and decodes to nothing', () => {
    const e = new LatencyHistogram();
    expect(e.encode()).toBe('');
    expect(LatencyHistogram.decode('').count).toBe(0);
    expect(e.summary().count).toBe(0);
    expect(e.cdf()).toEqual([]);
  });
});

describe('SLO figures count failures as misses', () => {
  const ok = filled(Array.from({ length: 90 }, () => 100));
  const step = (errors: number) => ({
    requests: 90 + errors,
    errors,
    requests_per_s: 1,
    goodput_per_s: 1,
    output_tokens_per_s: 1,
    hist: () => ok,
  });
  const term = (t: string) => parseExpr(t).terms[0] as Parameters<typeof actual>[0];

  it('a percentile the failures reach is infinite', () => {
    expect(actual(term('e2e.p50<1s'), step(10))).toBeCloseTo(100, 0);
    expect(actual(term('e2e.p95<1s'), step(10))).toBe(Infinity);
    expect(actual(term('e2e.p95<1s'), step(0))).toBeCloseTo(100, 0);
  });

  it('max and mean are infinite once anything failed; errors is the failed share', () => {
    expect(actual(term('e2e.max<1s'), step(1))).toBe(Infinity);
    expect(actual(term('e2e.mean<1s'), step(1))).toBe(Infinity);
    expect(actual(term('errors<1%'), step(10))).toBe(10);
  });
});
