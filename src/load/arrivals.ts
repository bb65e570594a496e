/**
 * Open-loop arrival processes: the gaps between scheduled request starts. Seeded, so a run's schedule can be
 * replayed. `poisson` = exponential gaps (memoryless users), `constant` = fixed gaps, `gamma:<cv>` = gamma gaps with
 * the given coefficient of variation (cv < 1 smoother than Poisson, cv > 1 burstier; cv 1 is Poisson).
 */
import { UsageError } from '../core/errors.js';

export type Arrival = { kind: 'poisson' } | { kind: 'constant' } | { kind: 'gamma'; cv: number };

/** Parses `--arrival poisson|constant|gamma:<cv>`. */
export function parseArrival(text: string): Arrival {
  if (text === 'poisson') return { kind: 'poisson' };
  if (text === 'constant') return { kind: 'constant' };
  const m = /^gamma:(\d+(?:\.\d+)?)$/.exec(text);
  if (m) {
    const cv = Number(m[1]);
    if (cv > 0 && cv <= 10) return { kind: 'gamma', cv };
    throw new UsageError(`--arrival: "${text}": the coefficient of variation must be in (0, 10]`, {
      field: '--arrival',
    });
  }
  throw new UsageError(`--arrival: "${text}" is not poisson, constant or gamma:<cv> (e.g. gamma:2)`, {
    field: '--arrival',
  });
}

/** Seeded uniform PRNG in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(random: () => number): number {
  const u1 = 1 - random();
  const u2 = random();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** Gamma(shape k, scale 1) by Marsaglia and Tsang (k < 1 via the k+1 boost). */
function gamma(k: number, random: () => number): number {
  if (k < 1) return gamma(k + 1, random) * Math.pow(1 - random(), 1 / k);
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(random);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - random();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/** A generator of gaps (ms) between arrivals at `rate` per second. */
export function gaps(arrival: Arrival, rate: number, seed: number): () => number {
  const mean = 1000 / rate;
  const random = seededRandom(seed);
  switch (arrival.kind) {
    case 'constant':
      return () => mean;
    case 'poisson':
      return () => -Math.log(1 - random()) * mean;
    case 'gamma': {
      const k = 1 / (arrival.cv * arrival.cv);
      return () => gamma(k, random) * (mean / k);
    }
  }
}
