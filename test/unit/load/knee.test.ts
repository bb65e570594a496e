import { describe, expect, it } from 'vitest';
import { kneeIndex, saturated, type CurvePoint } from '../../../src/load/knee.js';

/** A closed loop against a server of `capacity` slots and service time `s` ms, swept over `values`. */
function closedLoop(values: number[], capacity: number, s: number): CurvePoint[] {
  return values.map((c) => ({
    value: c,
    throughput: (Math.min(c, capacity) * 1000) / s,
    latencyMs: c <= capacity ? s : (s * c) / capacity,
  }));
}

describe('knee detection', () => {
  it('finds the capacity of a saturating server', () => {
    expect(kneeIndex(closedLoop([1, 2, 4, 8, 16, 32], 8, 100))).toBe(3);
    expect(kneeIndex(closedLoop([1, 2, 4, 8, 16, 32], 4, 50))).toBe(2);
  });

  it('takes the lighter step when two are within 2 %', () => {
    const pts: CurvePoint[] = [
      { value: 1, throughput: 10, latencyMs: 100 },
      { value: 2, throughput: 20, latencyMs: 100 },
      { value: 3, throughput: 20.2, latencyMs: 100 },
    ];
    expect(kneeIndex(pts)).toBe(1);
  });

  it('counts only successes: a step whose extra load fails is past the knee', () => {
    const pts: CurvePoint[] = [
      { value: 10, throughput: 10, latencyMs: 100 },
      { value: 20, throughput: 20, latencyMs: 100 },
      { value: 40, throughput: 20, latencyMs: 110 },
    ];
    expect(kneeIndex(pts)).toBe(1);
  });

  it('needs three points with successes', () => {
    expect(kneeIndex(closedLoop([1, 2], 8, 100))).toBeUndefined();
    expect(kneeIndex([0, 0, 0].map((v) => ({ value: v, throughput: 0, latencyMs: 0 })))).toBeUndefined();
  });

  it('calls flat throughput with climbing latency saturation', () => {
    const [a, b, c] = closedLoop([4, 8, 16], 8, 100) as [CurvePoint, CurvePoint, CurvePoint];
    expect(saturated(a, b)).toBe(false);
    expect(saturated(b, c)).toBe(true);
  });
});
