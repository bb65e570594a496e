import { describe, expect, it } from 'vitest';
import { SaturationWatch } from '../../../src/load/saturation.js';

/** Feeds `perSecond` successes of `latency(t)` ms in each second t of [0, seconds). */
function feed(
  w: SaturationWatch,
  seconds: number,
  perSecond: (t: number) => number,
  latency: (t: number) => number,
) {
  for (let t = 0; t < seconds; t++) {
    const n = perSecond(t);
    for (let i = 0; i < n; i++) w.add(t * 1000 + (i * 1000) / n, latency(t));
  }
}

describe('closed-loop saturation from the per-second timeline', () => {
  it('holds when throughput stays flat while latency climbs by more than 20 %', () => {
    const w = new SaturationWatch();
    feed(
      w,
      6,
      () => 20,
      (t) => 100 + 30 * t,
    );
    expect(w.saturated(6000)).toBe(true);
  });

  it('does not hold on a steady run, nor while throughput rises with the latency', () => {
    const steady = new SaturationWatch();
    feed(
      steady,
      10,
      () => 20,
      () => 100,
    );
    for (let s = 0; s <= 10; s++) expect(steady.saturated(s * 1000)).toBe(false);
    const rising = new SaturationWatch();
    feed(
      rising,
      6,
      (t) => (t < 3 ? 20 : 30),
      (t) => (t < 3 ? 100 : 130),
    );
    expect(rising.saturated(6000)).toBe(false);
  });

  it('gives no verdict before six whole seconds or on too few successes', () => {
    const early = new SaturationWatch();
    feed(
      early,
      6,
      () => 20,
      (t) => 100 + 50 * t,
    );
    expect(early.saturated(5999)).toBe(false);
    const few = new SaturationWatch();
    feed(
      few,
      6,
      () => 3,
      (t) => 1000 + 500 * t,
    );
    expect(few.saturated(6000)).toBe(false);
  });
});
