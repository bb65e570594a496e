/**
 * The schedulers of `gw load`. Closed loop: `concurrency` workers, each sending its next request when the last one
 * ended. Open loop: arrivals on a seeded schedule (Poisson, constant or gamma gaps) whatever the answers do; each
 * request's latency is measured from its *scheduled* start, so a client or gateway that falls behind cannot hide
 * the wait (no coordinated omission), and starts that left late are counted.
 */
import { performance } from 'node:perf_hooks';
import { gaps, type Arrival } from './arrivals.js';
import { exchange, Flight, type Outcome, type Target } from './exchange.js';
import type { Expr, Term } from './expr.js';
import { Recorder } from './recorder.js';
import { SaturationWatch } from './saturation.js';
import { firstHolding, type StepFigures } from './slo.js';
import type { Prepared } from './workload.js';

/** One step to run. */
export interface StepPlan {
  mode: 'closed' | 'open';
  concurrency?: number;
  rate?: number;
  arrival: Arrival;
  /** Stop scheduling after this long (ms). */
  durationMs?: number;
  /** Stop after this many requests. */
  requests?: number;
  /**
   * Closed loop: the first `warmup` requests are sent by the step's own virtual users and left out of its figures;
   * the step's clock (and `durationMs`) starts when the first measured request is sent, so measuring begins in the
   * steady state the warm-up reached instead of with every user starting at once.
   */
  warmup?: number;
  /** Closed loop: virtual user i sends its first request `i × rampMs / concurrency` after the step starts. */
  rampMs?: number;
  seed: number;
}

/** What a step needs besides its plan. */
export interface StepContext {
  target: Target;
  /** The next request to send. */
  next: () => Prepared;
  signal: AbortSignal;
  goodTerms: ReadonlyArray<Extract<Term, { kind: 'latency' }>>;
  stopOn?: Expr | undefined;
  /** Each finished request (CSV rows). */
  onOutcome?: (o: Outcome) => void;
  /** Called about every 250 ms with the live recorder (the warm-up's while `warming`). */
  onTick?: (rec: Recorder, warming: boolean) => void;
  /** A 401/403 ends the run: the token is wrong, more requests would only repeat it. */
  onAuthFailure?: (o: Outcome) => void;
  /** performance.now() origin of the run (Outcome.startMs is relative to it). */
  origin: number;
}

/** The result of a step. */
export interface StepResult {
  rec: Recorder;
  /** Why it ended early (a --stop-on term, `saturation`, `auth`), if it did. */
  stopped?: string;
  /** False when the step ended before its warm-up did (nothing was measured). */
  measured: boolean;
}

function liveFigures(rec: Recorder, now: number): StepFigures {
  const secs = Math.max(0.001, (now - rec.startedAt) / 1000);
  return {
    requests: rec.done,
    errors: rec.errors,
    requests_per_s: rec.done / secs,
    goodput_per_s: rec.good / secs,
    output_tokens_per_s: rec.outputTokens / secs,
    hist: (m) => rec.hist[m],
  };
}

/** Runs one step (or a warm-up: a step whose recorder is thrown away). */
export async function runStep(plan: StepPlan, ctx: StepContext): Promise<StepResult> {
  const rec = new Recorder(ctx.goodTerms);
  rec.runOrigin = ctx.origin;
  const warmup = plan.mode === 'closed' ? (plan.warmup ?? 0) : 0;
  // The warm-up's outcomes (closed loop): shown live, never reported.
  const warm = warmup > 0 ? new Recorder([]) : undefined;
  let warming = warm !== undefined;
  const stepAbort = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stepAbort.signal]);
  const flight = new Flight(ctx.target.timeoutMs, signal);
  let stopping = false;
  let stopped: string | undefined;
  const stop = (reason?: string): void => {
    if (reason !== undefined && stopped === undefined) stopped = reason;
    stopping = true;
  };
  const abortNow = (reason: string): void => {
    stop(reason);
    stepAbort.abort();
  };
  const watch = plan.mode === 'closed' && ctx.stopOn?.saturation === true ? new SaturationWatch() : undefined;
  const onDone = (o: Outcome, measured: boolean): void => {
    if ((o.status === 401 || o.status === 403) && stopped === undefined) {
      ctx.onAuthFailure?.(o);
      abortNow('auth');
    }
    if (!measured) {
      (warm as Recorder).inFlight--;
      (warm as Recorder).add(o);
      return;
    }
    rec.inFlight--;
    if (watch !== undefined && o.ok && o.cancelled !== true)
      watch.add(performance.now() - rec.startedAt, o.e2eMs);
    rec.add(o);
    if (o.cancelled !== true) ctx.onOutcome?.(o);
  };

  rec.startedAt = performance.now();
  if (warm !== undefined) warm.startedAt = rec.startedAt;
  const deadline = plan.durationMs !== undefined ? rec.startedAt + plan.durationMs : Infinity;
  let durationTimer: ReturnType<typeof setTimeout> | undefined;
  const startClock = (): void => {
    if (plan.durationMs !== undefined) durationTimer = setTimeout(() => stop(), plan.durationMs);
  };
  if (!warming) startClock();
  let lastDone = 0;
  let lastTick = rec.startedAt;
  const recent: number[] = [];
  const ticker = setInterval(() => {
    const now = performance.now();
    ctx.onTick?.(warming ? (warm as Recorder) : rec, warming);
    if (ctx.stopOn !== undefined && !stopping && !warming) {
      const term = firstHolding(ctx.stopOn, liveFigures(rec, now));
      if (term !== undefined) abortNow(`stop-on: ${term}`);
      else if (ctx.stopOn.saturation && plan.mode === 'open' && plan.rate !== undefined) {
        // Open loop: completions fall short of the offered rate while requests pile up.
        recent.push((rec.done - lastDone) / ((now - lastTick) / 1000));
        if (recent.length > 12) recent.shift();
        const avg = recent.reduce((a, b) => a + b, 0) / recent.length;
        if (recent.length >= 12 && avg < 0.8 * plan.rate && rec.inFlight > plan.rate) abortNow('saturation');
      } else if (watch?.saturated(now - rec.startedAt) === true) {
        // Closed loop: throughput stopped rising while latency climbed (saturation.ts).
        abortNow('saturation');
      }
    }
    lastDone = rec.done;
    lastTick = now;
  }, 250);

  try {
    if (plan.mode === 'closed') {
      let issued = 0;
      const users = plan.concurrency ?? 1;
      const limit = plan.requests !== undefined ? warmup + plan.requests : Infinity;
      const worker = async (i: number): Promise<void> => {
        const dispatcher = ctx.target.lane?.(i) ?? ctx.target.dispatcher;
        const delay = plan.rampMs !== undefined && i > 0 ? (i * plan.rampMs) / users : 0;
        if (delay > 0) await sleep(delay, signal);
        while (!stopping && !signal.aborted) {
          if (issued >= limit) return;
          const measured = ++issued > warmup;
          if (measured && warming) {
            // The first measured request: the step's clock starts now.
            warming = false;
            rec.startedAt = performance.now();
            startClock();
          }
          (measured ? rec : (warm as Recorder)).inFlight++;
          const o = await exchange(ctx.target, ctx.next(), undefined, ctx.origin, flight, dispatcher);
          onDone(o, measured);
        }
      };
      await Promise.all(Array.from({ length: users }, (_, i) => worker(i)));
    } else {
      await new Promise<void>((resolve) => {
        const gap = gaps(plan.arrival, plan.rate ?? 1, plan.seed);
        // Requests not yet settled: a count, not a Set of their promises (a long-lived Set with an entry added and
        // removed per request makes V8 promote garbage to the old generation, see Flight in exchange.ts).
        let pending = 0;
        let finished = false;
        let issued = 0;
        let next = rec.startedAt;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const finish = (): void => {
          if (timer !== undefined) clearTimeout(timer);
          finished = true;
          if (pending === 0) resolve();
        };
        const settled = (o: Outcome): void => {
          onDone(o, true);
          if (--pending === 0 && finished) resolve();
        };
        const tick = (): void => {
          timer = undefined;
          const now = performance.now();
          while (!stopping && !signal.aborted && next <= now) {
            if (plan.requests !== undefined && issued >= plan.requests) break;
            if (next >= deadline) break;
            issued++;
            rec.inFlight++;
            pending++;
            void exchange(ctx.target, ctx.next(), next, ctx.origin, flight).then(settled);
            next += gap();
          }
          const over =
            stopping ||
            signal.aborted ||
            next >= deadline ||
            (plan.requests !== undefined && issued >= plan.requests);
          if (over) {
            finish();
            return;
          }
          timer = setTimeout(tick, Math.max(0, Math.floor(next - performance.now())));
        };
        signal.addEventListener('abort', () => {
          if (timer !== undefined) {
            clearTimeout(timer);
            timer = undefined;
            finish();
          }
        });
        tick();
      });
    }
  } finally {
    flight.close();
    clearInterval(ticker);
    if (durationTimer !== undefined) clearTimeout(durationTimer);
  }
  // Requests still in flight at the deadline were waited for: the step's time includes that drain.
  rec.endedAt = performance.now();
  ctx.onTick?.(rec, false);
  const measured = !warming;
  return stopped !== undefined ? { rec, stopped, measured } : { rec, measured };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
