/**
 * `--stop-on saturation` inside one closed-loop run, from the per-second timeline: the last WINDOW whole seconds are
 * compared with the WINDOW seconds before them; the run is saturated when successful requests per second rose by
 * less than 5 % while the mean end-to-end latency of the successes rose by more than 20 % (the same thresholds as
 * between sweep steps, see knee.ts). At a fixed concurrency a healthy gateway keeps both flat; a gateway that
 * stops keeping up shows latency climbing while throughput does not follow. No verdict before 6 whole seconds, nor
 * while the earlier window holds fewer than 10 successes.
 */

/** Seconds in each of the two compared windows. */
export const WINDOW_S = 3;
/** Successes the earlier window needs before a verdict. */
const MIN_OK = 10;

interface Bucket {
  ok: number;
  sumMs: number;
}

/** Per-second successes and their latency sums, and the saturation rule over them. */
export class SaturationWatch {
  readonly #seconds: Bucket[] = [];

  /** Records a success that ended `atMs` after the step started, after `e2eMs`. */
  add(atMs: number, e2eMs: number): void {
    const t = Math.max(0, Math.floor(atMs / 1000));
    while (this.#seconds.length <= t) this.#seconds.push({ ok: 0, sumMs: 0 });
    const b = this.#seconds[t] as Bucket;
    b.ok++;
    b.sumMs += e2eMs;
  }

  #window(from: number): { rate: number; meanMs: number } {
    let ok = 0;
    let sum = 0;
    for (let t = from; t < from + WINDOW_S; t++) {
      const b = this.#seconds[t];
      if (b === undefined) continue;
      ok += b.ok;
      sum += b.sumMs;
    }
    return { rate: ok / WINDOW_S, meanMs: ok > 0 ? sum / ok : 0 };
  }

  /** True when saturated, judged on the seconds wholly before `elapsedMs` (needs 2 × WINDOW_S of them). */
  saturated(elapsedMs: number): boolean {
    const whole = Math.floor(elapsedMs / 1000);
    if (whole < 2 * WINDOW_S) return false;
    const prev = this.#window(whole - 2 * WINDOW_S);
    const last = this.#window(whole - WINDOW_S);
    // Too few successes to judge (long requests): no verdict. No success at all is --stop-on errors' case.
    if (prev.rate * WINDOW_S < MIN_OK || last.rate === 0) return false;
    return last.rate < prev.rate * 1.05 && last.meanMs > prev.meanMs * 1.2;
  }
}
