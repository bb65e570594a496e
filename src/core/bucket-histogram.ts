/**
 * A histogram over explicit bucket bounds, the kind OpenTelemetry (`--otlp`) and Prometheus (`--remote-write`)
 * both export: a count per bucket, with the sum, count, min and max of what was recorded.
 */
export class BucketHistogram {
  /**
   * `counts[i]` holds the values above `bounds[i - 1]` and at most `bounds[i]` (a bound is inclusive, as in both
   * formats); the last count, the values above every bound.
   */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  min = Infinity;
  max = -Infinity;

  /** `bounds`: increasing upper bounds. */
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Counts `value` (NaN is no value: left out, as OpenTelemetry's SDK does). */
  record(value: number): void {
    if (Number.isNaN(value)) return;
    this.sum += value;
    this.count++;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    // The first bound at or above the value (binary search); above the last one, the last count.
    const b = this.bounds;
    let lo = 0;
    let hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((b[mid] as number) < value) lo = mid + 1;
      else hi = mid;
    }
    this.counts[lo] = (this.counts[lo] as number) + 1;
  }
}
