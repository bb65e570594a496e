import { describe, expect, it } from 'vitest';
import { gaps, parseArrival } from '../../../src/load/arrivals.js';

function stats(xs: number[]): { mean: number; cv: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
  return { mean, cv: Math.sqrt(variance) / mean };
}

function sample(kind: string, rate: number, n: number, seed = 7): number[] {
  const g = gaps(parseArrival(kind), rate, seed);
  return Array.from({ length: n }, () => g());
}

describe('arrival processes', () => {
  it('are deterministic for a seed and differ between seeds', () => {
    expect(sample('poisson', 10, 50, 1)).toEqual(sample('poisson', 10, 50, 1));
    expect(sample('poisson', 10, 50, 1)).not.toEqual(sample('poisson', 10, 50, 2));
    expect(sample('gamma:2', 10, 50, 3)).toEqual(sample('gamma:2', 10, 50, 3));
  });

  it('constant gaps are exactly 1/rate', () => {
    expect(new Set(sample('constant', 50, 100))).toEqual(new Set([20]));
  });

  it('poisson gaps have mean 1/rate and a coefficient of variation of 1', () => {
    const s = stats(sample('poisson', 100, 20_000));
    expect(s.mean).toBeGreaterThan(9.6);
    expect(s.mean).toBeLessThan(10.4);
    expect(s.cv).toBeGreaterThan(0.95);
    expect(s.cv).toBeLessThan(1.05);
  });

  it.each([0.5, 2])('gamma:%s gaps have mean 1/rate and the asked coefficient of variation', (cv) => {
    const s = stats(sample(`gamma:${cv}`, 20, 40_000));
    expect(s.mean).toBeGreaterThan(50 * 0.95);
    expect(s.mean).toBeLessThan(50 * 1.05);
    expect(s.cv).toBeGreaterThan(cv * 0.92);
    expect(s.cv).toBeLessThan(cv * 1.08);
    expect(Math.min(...sample(`gamma:${cv}`, 20, 1000))).toBeGreaterThanOrEqual(0);
  });

  it.each(['uniform', 'gamma:', 'gamma:0', 'gamma:-1', 'gamma:11'])('rejects --arrival %j', (text) => {
    expect(() => parseArrival(text)).toThrow(/^--arrival: /);
  });
});
