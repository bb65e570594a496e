/**
 * Aggregates the outcomes of one load step into counts, histograms and a per-second timeline, in memory that does
 * not grow with the number of requests (histograms, counters; the timeline grows with the run's seconds). Failed
 * requests are never dropped: they are counted (by code, status and api), their time to failure has its own
 * histogram, and every SLO check counts them as misses (see slo.ts).
 */
import type { PriceTable } from '../contract/prices.js';
import type { Term } from './expr.js';
import type { Outcome } from './exchange.js';
import { LatencyHistogram, type Summary } from './histogram.js';
import { SpendTally } from './spend.js';

/** The histograms of a step. */
export const METRICS = ['e2e', 'ttft', 'itl', 'tpot', 'e2e_failed', 'lag'] as const;
export type Metric = (typeof METRICS)[number];

/** A start later than this behind its schedule counts as late (open loop). */
export const LATE_MS = 10;

/** Counters of one second of the timeline. */
export interface Second {
  /** Seconds since the step started. */
  t: number;
  done: number;
  ok: number;
  errors: number;
  output_tokens: number;
}

/** Requests of one api in a step. */
export interface ApiCount {
  requests: number;
  ok: number;
  errors: number;
}

/** The live figures of a step (progress line, stop-on). */
export interface Live {
  inFlight: number;
  done: number;
  errors: number;
  p50: number;
  p95: number;
  rps: number;
}

/** Aggregates one step. */
export class Recorder {
  readonly hist: Record<Metric, LatencyHistogram> = {
    e2e: new LatencyHistogram(),
    ttft: new LatencyHistogram(),
    itl: new LatencyHistogram(),
    tpot: new LatencyHistogram(),
    e2e_failed: new LatencyHistogram(),
    lag: new LatencyHistogram(),
  };
  done = 0;
  ok = 0;
  errors = 0;
  cancelled = 0;
  late = 0;
  good = 0;
  outputTokens = 0;
  /** Input tokens of successful requests (cached ones included), and of them the cached ones. */
  inputTokens = 0;
  cachedTokens = 0;
  usageMissing = 0;
  /** With --prices: what the requests cost. */
  readonly spend: SpendTally | undefined;
  #inFlight = 0;
  /** The most requests in flight at once. */
  peakInFlight = 0;
  /** Open loop: arrivals never sent (past the waiting queue's cap, or still waiting when the step ended). */
  dropped = 0;
  /** Requests that failed because this process had no file descriptor left (EMFILE, ENFILE). */
  localFailures = 0;
  readonly errorsByCode = new Map<string, number>();
  /** Requests by HTTP status (0: no answer). */
  readonly statuses = new Map<number, number>();
  readonly perApi = new Map<string, ApiCount>();
  readonly timeline: Second[] = [];
  /** performance.now() of the step's start; set by the runner. */
  startedAt = 0;
  endedAt = 0;
  /** `goodTerms`: the latency thresholds a request must meet to count as good (goodput). */
  constructor(
    private readonly goodTerms: ReadonlyArray<Extract<Term, { kind: 'latency' }>> = [],
    prices?: PriceTable,
  ) {
    this.spend = prices !== undefined ? new SpendTally(prices) : undefined;
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  set inFlight(n: number) {
    this.#inFlight = n;
    if (n > this.peakInFlight) this.peakInFlight = n;
  }

  /** Records one finished request. */
  add(o: Outcome): void {
    if (o.localLimit === true) this.localFailures++;
    if (o.cancelled === true) {
      this.cancelled++;
      return;
    }
    this.done++;
    let api = this.perApi.get(o.api);
    if (api === undefined) this.perApi.set(o.api, (api = { requests: 0, ok: 0, errors: 0 }));
    api.requests++;
    this.statuses.set(o.status, (this.statuses.get(o.status) ?? 0) + 1);
    this.hist.lag.recordMs(o.lagMs);
    if (o.lagMs > LATE_MS) this.late++;
    const sec = Math.max(0, Math.floor((o.startMs + o.e2eMs - (this.startedAt - this.runOrigin)) / 1000));
    const slot = this.#second(sec);
    slot.done++;
    this.spend?.add(o);
    if (!o.ok) {
      this.errors++;
      api.errors++;
      slot.errors++;
      const code = o.code ?? 'error';
      this.errorsByCode.set(code, (this.errorsByCode.get(code) ?? 0) + 1);
      this.hist.e2e_failed.recordMs(o.e2eMs);
      return;
    }
    this.ok++;
    api.ok++;
    slot.ok++;
    this.hist.e2e.recordMs(o.e2eMs);
    if (o.ttftMs !== undefined) this.hist.ttft.recordMs(o.ttftMs);
    for (const g of o.itlMs) this.hist.itl.recordMs(g);
    let tpot: number | undefined;
    if (o.outputTokens !== undefined) {
      this.outputTokens += o.outputTokens;
      slot.output_tokens += o.outputTokens;
      if (o.ttftMs !== undefined && o.outputTokens > 1) {
        tpot = (o.e2eMs - o.ttftMs) / (o.outputTokens - 1);
        this.hist.tpot.recordMs(tpot);
      }
    } else if (o.api !== 'embeddings' && o.api !== 'video' && o.api !== 'images') this.usageMissing++;
    if (o.inputTokens !== undefined) this.inputTokens += o.inputTokens;
    if (o.cachedTokens !== undefined) this.cachedTokens += o.cachedTokens;
    if (this.#meets(o, tpot)) this.good++;
  }

  /** performance.now() of the run's origin (Outcome.startMs is relative to it); set by the runner. */
  runOrigin = 0;

  #meets(o: Outcome, tpot: number | undefined): boolean {
    for (const t of this.goodTerms) {
      let v: number | undefined;
      if (t.metric === 'e2e') v = o.e2eMs;
      else if (t.metric === 'ttft') v = o.ttftMs;
      else if (t.metric === 'tpot') v = tpot;
      else v = o.itlMaxMs;
      if (v === undefined) continue;
      if (t.op === '<' ? !(v < t.ms) : !(v <= t.ms)) return false;
    }
    return true;
  }

  #second(t: number): Second {
    while (this.timeline.length <= t) {
      this.timeline.push({ t: this.timeline.length, done: 0, ok: 0, errors: 0, output_tokens: 0 });
    }
    return this.timeline[t] as Second;
  }

  /** Figures for the progress line and --stop-on. */
  live(now: number): Live {
    const secs = Math.max(0.001, (now - this.startedAt) / 1000);
    return {
      inFlight: this.inFlight,
      done: this.done,
      errors: this.errors,
      p50: this.hist.e2e.percentileMs(50),
      p95: this.hist.e2e.percentileMs(95),
      rps: this.done / secs,
    };
  }

  /** Summaries of every histogram. */
  summaries(): Record<Metric, Summary> {
    const out = {} as Record<Metric, Summary>;
    for (const m of METRICS) out[m] = this.hist[m].summary();
    return out;
  }
}
