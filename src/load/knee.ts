/**
 * The knee of a sweep: the step where adding load stops buying throughput without costing latency. gw takes the
 * step with the highest *power* (Kleinrock): successful requests per second divided by median end-to-end latency.
 * Below capacity throughput grows with load while latency stays flat, so power rises; past it throughput is flat
 * while latency grows (queueing) or requests fail, so power falls. Ties (within 2 %) go to the lighter load.
 */

/** One step of a sweep as the knee sees it. */
export interface CurvePoint {
  /** The swept value (concurrency or rate). */
  value: number;
  /** Successful requests per second. */
  throughput: number;
  /** Median end-to-end latency (ms). */
  latencyMs: number;
}

/** Index of the knee, or undefined when fewer than three points or no point had a success. */
export function kneeIndex(points: readonly CurvePoint[]): number | undefined {
  if (points.length < 3) return undefined;
  let best: number | undefined;
  let bestPower = 0;
  points.forEach((p, i) => {
    if (p.throughput <= 0 || p.latencyMs <= 0) return;
    const power = p.throughput / p.latencyMs;
    if (best === undefined || power > bestPower * 1.02) {
      best = i;
      bestPower = power;
    }
  });
  return best;
}

/**
 * Saturation between two consecutive steps: throughput rose by less than 5 % while median latency rose by more
 * than 20 % (or the heavier step's successes fell).
 */
export function saturated(prev: CurvePoint, next: CurvePoint): boolean {
  if (prev.throughput <= 0) return false;
  const gain = next.throughput / prev.throughput;
  const cost = prev.latencyMs > 0 ? next.latencyMs / prev.latencyMs : 1;
  return gain < 1.05 && cost > 1.2;
}
