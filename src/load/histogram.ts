/**
 * Latency histograms: HdrHistogram (hdr-histogram-js), values in microseconds, 3 significant digits (0.1 %
 * resolution), serialised in the HdrHistogram compressed base64 format (V2, readable by every HdrHistogram port),
 * so runs from several machines merge exactly: counts add up, percentiles come from the summed buckets.
 */
import {
  build,
  decodeFromCompressedBase64,
  encodeIntoCompressedBase64,
  type Histogram,
} from 'hdr-histogram-js';

/** Summary statistics of one histogram, in milliseconds. */
export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
}

/**
 * A latency histogram in microseconds. The HdrHistogram it wraps is private: the library's declarations (the load
 * engine is exported) then name no type of hdr-histogram-js, which the package bundles and does not install.
 */
export class LatencyHistogram {
  readonly #h: Histogram = build({
    numberOfSignificantValueDigits: 3,
    lowestDiscernibleValue: 1,
    autoResize: true,
  });

  /** Records one value in milliseconds (negative values count as 0). */
  recordMs(ms: number): void {
    this.#h.recordValue(Math.max(0, Math.round(ms * 1000)));
  }

  get count(): number {
    return this.#h.totalCount;
  }

  /** The value at a percentile (0..100), in ms. */
  percentileMs(p: number): number {
    if (this.#h.totalCount === 0) return 0;
    return this.#h.getValueAtPercentile(p) / 1000;
  }

  /** count, mean, p50 … p99.9, max (ms, three decimals). */
  summary(): Summary {
    const r = (us: number): number => Math.round(us) / 1000;
    if (this.#h.totalCount === 0)
      return { count: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, max: 0 };
    return {
      count: this.#h.totalCount,
      mean: r(this.#h.mean),
      p50: r(this.#h.getValueAtPercentile(50)),
      p90: r(this.#h.getValueAtPercentile(90)),
      p95: r(this.#h.getValueAtPercentile(95)),
      p99: r(this.#h.getValueAtPercentile(99)),
      p999: r(this.#h.getValueAtPercentile(99.9)),
      // As the buckets hold it (what a decoded or merged histogram knows too, within 0.1 %), so percentiles,
      // which are their bucket's highest equivalent value, never exceed it.
      max: r(this.#h.getValueAtPercentile(100)),
    };
  }

  /** Adds another histogram's counts into this one. */
  add(other: LatencyHistogram): void {
    if (other.count > 0) this.#h.add(other.#h);
  }

  /** The compressed base64 form (empty string for an empty histogram). */
  encode(): string {
    return this.#h.totalCount === 0 ? '' : encodeIntoCompressedBase64(this.#h);
  }

  /** Reads the compressed base64 form written by encode(). */
  static decode(text: string): LatencyHistogram {
    const out = new LatencyHistogram();
    if (text !== '') out.#h.add(decodeFromCompressedBase64(text));
    return out;
  }

  /**
   * Points of the cumulative distribution for charts: [percentile, ms] at a fixed ladder of percentiles (dense in
   * the tail: 0, 10 … 90, 95, 99, 99.9, 99.99, 100).
   */
  cdf(): Array<[number, number]> {
    if (this.#h.totalCount === 0) return [];
    const ladder = [
      0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 97.5, 99, 99.5, 99.9, 99.99, 100,
    ];
    return ladder.map((p) => [
      p,
      Math.round(p === 0 ? this.#h.minNonZeroValue : this.#h.getValueAtPercentile(p)) / 1000,
    ]);
  }
}
