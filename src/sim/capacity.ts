/**
 * The simulator's capacity model (docs/simulator.md "Capacity"): at most `maxConcurrent` text requests are served
 * at once, up to `queue` more wait in line, and any beyond get 429 with Retry-After in the route's error envelope.
 * A served request's first token comes after a time drawn from a log-normal distribution fitted to `ttftMs`
 * (`p50`, `p99`; equal values = fixed), then one token every `1000 / tokensPerSecond` ms. Draws use their own
 * seeded generator, so a given `seed` replays the same times.
 */
import { performance } from 'node:perf_hooks';
import type { ServerResponse } from 'node:http';
import type { SimCapacity } from './config.js';
import type { ErrorShape, SimReply, SseOut } from './http.js';
import { rng } from './rng.js';

/** Routes the capacity model applies to. */
export const CAPACITY_ROUTES: ReadonlySet<string> = new Set([
  'POST /v1/chat/completions',
  'POST /v1/responses',
  'POST /v1/messages',
  'POST /v1/embeddings',
]);

/** At most this many TTFT stamps are kept (the oldest are dropped). */
const MAX_STAMPS = 200_000;

/** z of the 99th percentile of the standard normal distribution. */
const Z99 = 2.3263478740408408;

/** What `GET /sim/capacity` answers. */
export interface CapacityStats {
  maxConcurrent: number;
  queue: number;
  active: number;
  /** The most requests served at once since the start (or the last reset). */
  peakActive: number;
  waiting: number;
  admitted: number;
  rejected: number;
  /** Time from a request's arrival to the write of its first token (streams), as the simulator stamped it. */
  ttftMs: { count: number; p50: number; p90: number; p99: number; mean: number };
  /**
   * With `?stamps=1`: each stamped stream (after `since`) with its request id, and the Unix times (ms, to the
   * microsecond: `performance.timeOrigin + performance.now()`, comparable across processes of one machine) of its
   * arrival and of the write of its first token.
   */
  stamps?: Array<{ request_id: string; arrived_unix_ms: number; first_token_unix_ms: number }>;
}

/** One stream's stamp: its request id, arrival and first-token write (performance.now() of this process). */
interface Stamp {
  id: string;
  arrived: number;
  first: number;
}

/** True when a stream frame carries an output token (a text delta of chat, responses or messages). */
export function isTokenFrame(e: SseOut): boolean {
  if (e.event === 'response.output_text.delta') return true;
  return e.data.includes('"delta":{"content"') || e.data.includes('"type":"text_delta"');
}

/** The capacity model of one simulator. */
export class Capacity {
  readonly #cfg: SimCapacity;
  readonly #random: () => number;
  readonly #waiters: Array<() => void> = [];
  readonly #stamps: Stamp[] = [];
  #active = 0;
  #peak = 0;
  #admitted = 0;
  #rejected = 0;

  constructor(cfg: SimCapacity, seed: number) {
    this.#cfg = cfg;
    this.#random = rng(seed ^ 0x5eed);
  }

  /** A first-token time in ms: log-normal with the configured median and 99th percentile. */
  drawTtft(): number {
    const t = this.#cfg.ttftMs;
    const { p50, p99 } = typeof t === 'number' ? { p50: t, p99: t } : t;
    if (p99 <= p50) return p50;
    const sigma = Math.log(p99 / p50) / Z99;
    // Box-Muller from two uniforms in (0, 1].
    const u1 = 1 - this.#random();
    const u2 = this.#random();
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    return p50 * Math.exp(sigma * z);
  }

  /**
   * Admits one request: returns when it may be served (at once, or after waiting in the queue), or answers 429
   * and returns false when the queue is full. The slot is released when the response closes.
   */
  async admit(
    reply: SimReply,
    res: ServerResponse,
    shape: ErrorShape,
    arrived: number,
    requestId = '',
  ): Promise<boolean> {
    if (this.#active >= this.#cfg.maxConcurrent) {
      if (this.#waiters.length >= this.#cfg.queue) {
        this.#rejected++;
        reply.error(429, 'rate_limit_exceeded', 'the gateway is at capacity (simulated)', shape, {
          headers: { 'retry-after': this.#cfg.retryAfter ?? 1 },
        });
        return false;
      }
      let gone = false;
      const wake = await new Promise<boolean>((resolve) => {
        const go = (): void => resolve(true);
        this.#waiters.push(go);
        res.once('close', () => {
          gone = true;
          const i = this.#waiters.indexOf(go);
          if (i >= 0) this.#waiters.splice(i, 1);
          resolve(false);
        });
      });
      if (!wake || gone) {
        // The client left while waiting; if the slot was already handed over, pass it on.
        if (wake) this.#release();
        return false;
      }
    } else this.#active++;
    this.#peak = Math.max(this.#peak, this.#active);
    this.#admitted++;
    res.once('close', () => this.#release());
    const ttft = this.drawTtft();
    const startedAt = performance.now();
    const msPerToken = 1000 / this.#cfg.tokensPerSecond;
    let tokens = 0;
    let firstAt = 0;
    reply.pacer = async (e) => {
      if (!isTokenFrame(e)) return;
      const due = tokens === 0 ? startedAt + ttft : firstAt + tokens * msPerToken;
      await sleepUntil(due);
      if (tokens === 0) {
        firstAt = performance.now();
        this.#stamp({ id: requestId, arrived, first: firstAt });
      }
      tokens++;
    };
    reply.hold = (body) => ttft + outputTokens(body) * msPerToken - (performance.now() - startedAt);
    return true;
  }

  #release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#active--;
  }

  #stamp(ms: Stamp): void {
    if (this.#stamps.length >= MAX_STAMPS) this.#stamps.shift();
    this.#stamps.push(ms);
  }

  /** Counters and the stamped first-token times (of the stamps after the first `since`, e.g. a warm-up). */
  stats(since = 0, withStamps = false): CapacityStats {
    const kept = this.#stamps.slice(since);
    const s = kept.map((x) => x.first - x.arrived).sort((a, b) => a - b);
    const q = (p: number): number =>
      s.length === 0 ? 0 : (s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0);
    const mean = s.length === 0 ? 0 : s.reduce((a, b) => a + b, 0) / s.length;
    const r = (x: number): number => Math.round(x * 1000) / 1000;
    const out: CapacityStats = {
      maxConcurrent: this.#cfg.maxConcurrent,
      queue: this.#cfg.queue,
      active: this.#active,
      peakActive: this.#peak,
      waiting: this.#waiters.length,
      admitted: this.#admitted,
      rejected: this.#rejected,
      ttftMs: { count: s.length, p50: r(q(0.5)), p90: r(q(0.9)), p99: r(q(0.99)), mean: r(mean) },
    };
    if (withStamps) {
      const o = performance.timeOrigin;
      out.stamps = kept.map((x) => ({
        request_id: x.id,
        arrived_unix_ms: r(o + x.arrived),
        first_token_unix_ms: r(o + x.first),
      }));
    }
    return out;
  }

  /** Forgets the stamps and counters (between bench runs). */
  reset(): void {
    this.#stamps.length = 0;
    this.#peak = this.#active;
    this.#admitted = 0;
    this.#rejected = 0;
  }
}

/** Output tokens a non-streamed answer reports in its usage (0 when it has none). */
function outputTokens(body: Buffer): number {
  if (body.length > 1_000_000) return 0;
  try {
    const u = (JSON.parse(body.toString('utf8')) as { usage?: Record<string, unknown> }).usage;
    const n = u?.completion_tokens ?? u?.output_tokens;
    return typeof n === 'number' ? n : 0;
  } catch {
    return 0;
  }
}

/** Waits until `performance.now()` reaches `due` (timers for the bulk, then a short spin-free re-check). */
async function sleepUntil(due: number): Promise<void> {
  for (;;) {
    const left = due - performance.now();
    if (left <= 0) return;
    await new Promise((r) => setTimeout(r, Math.max(1, Math.ceil(left))));
  }
}
