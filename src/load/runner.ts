/**
 * The schedulers of `gw load`. Closed loop: `concurrency` workers, each sending its next request when the last one
 * ended. Open loop: arrivals on a seeded schedule (Poisson, constant or gamma gaps) whatever the answers do; each
 * request's latency is measured from its *scheduled* start, so a client or gateway that falls behind cannot hide
 * the wait (no coordinated omission), and starts that left late are counted.
 *
 * A step ends at its duration (or its request count, Ctrl-C, an early stop): requests still in flight then are
 * aborted and counted as cancelled, so a gateway that never answers cannot hold the run past its duration.
 */
import { setMaxListeners } from 'node:events';
import type { PriceTable } from '../contract/prices.js';
import type { Shard } from '../core/shard.js';
import { gaps, type Arrival } from './arrivals.js';
import { exchange, Flight, type Outcome, type Sendable, type Target } from './exchange.js';
import type { Expr, Term } from './expr.js';
import { Recorder } from './recorder.js';
import { SaturationWatch } from './saturation.js';
import type { TextBudget } from './spend.js';
import type { Hold } from '../core/budget.js';
import { firstHolding, type StepFigures } from './slo.js';

/**
 * Open loop: arrivals that may wait for one of the `connections` (8 bytes each, their scheduled start); past this
 * many an arrival is dropped: counted in the report, never allocated. A gateway that never answers therefore costs
 * memory in the number of connections and this queue, not in the rate times the run's length.
 */
export const MAX_WAITING = 100_000;
/** The longest pause of a closed-loop user whose requests fail before a byte is sent (see #user). */
const MAX_BACKOFF_MS = 250;

/** One step to run. */
export interface StepPlan {
  mode: 'closed' | 'open';
  concurrency?: number;
  rate?: number;
  arrival: Arrival;
  /** Open loop: most requests in flight (one connection each); later arrivals wait for one, their wait counted. */
  connections?: number;
  /** Stop scheduling after this long (ms); requests still in flight then are cancelled. */
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
  /**
   * Open loop: this machine sends arrival i of the schedule only when i mod n = k − 1 (`requests` counts every
   * arrival of the one schedule), so the shards' union is the schedule one machine would have run.
   */
  shard?: Shard;
  /** The clock time the step starts at (default: when it is run): shards given one instant share a schedule. */
  startAt?: number;
}

/** What a step needs besides its plan. */
export interface StepContext {
  target: Target;
  /** The next request to send. */
  next: () => Sendable;
  signal: AbortSignal;
  goodTerms: ReadonlyArray<Extract<Term, { kind: 'latency' }>>;
  stopOn?: Expr | undefined;
  /** Each finished request of the step's figures (CSV rows). */
  onOutcome?: ((o: Outcome) => void) | undefined;
  /** Every request when it ended: warm-ups and cancelled ones too (telemetry). */
  onFinished?: ((o: Outcome) => void) | undefined;
  /** Called about every 250 ms with the live recorder (the warm-up's while `warming`). */
  onTick?: ((rec: Recorder, warming: boolean) => void) | undefined;
  /** A 401/403 ends the run: the token is wrong, more requests would only repeat it. */
  onAuthFailure?: ((o: Outcome) => void) | undefined;
  /** Clock time of the run's origin (Outcome.startMs is relative to it). */
  origin: number;
  /** `--prices`: each measured request is priced (the warm-up's are left out, as from every figure). */
  prices?: PriceTable | undefined;
  /** `--budget` of a text run: every request (warm-ups too) is held at its bound until its answer ends. */
  budget?: TextBudget | undefined;
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
export function runStep(plan: StepPlan, ctx: StepContext): Promise<StepResult> {
  return new StepRun(plan, ctx).run();
}

/** The state of one running step. */
class StepRun {
  readonly rec: Recorder;
  /** The warm-up's outcomes (closed loop): shown live, never reported. */
  readonly warm: Recorder | undefined;
  readonly warmup: number;
  warming: boolean;
  readonly #stepAbort = new AbortController();
  readonly signal: AbortSignal;
  readonly flight: Flight;
  stopping = false;
  stopped: string | undefined;
  /** Requests handed out so far (closed loop: warm-up included). */
  issued = 0;
  readonly watch: SaturationWatch | undefined;
  #durationTimer: ReturnType<typeof setTimeout> | undefined;
  #lastDone = 0;
  #lastTick = 0;
  readonly #recent: number[] = [];

  constructor(
    readonly plan: StepPlan,
    readonly ctx: StepContext,
  ) {
    this.rec = new Recorder(ctx.goodTerms, ctx.prices);
    this.rec.runOrigin = ctx.origin;
    this.warmup = plan.mode === 'closed' ? (plan.warmup ?? 0) : 0;
    this.warm = this.warmup > 0 ? new Recorder([]) : undefined;
    this.warming = this.warm !== undefined;
    this.signal = AbortSignal.any([ctx.signal, this.#stepAbort.signal]);
    // Every user pausing (a ramp, a back-off) listens to it: thousands of listeners are expected here.
    setMaxListeners(0, this.signal);
    this.flight = new Flight(this.signal);
    this.watch =
      plan.mode === 'closed' && ctx.stopOn?.saturation === true ? new SaturationWatch() : undefined;
  }

  get now(): number {
    return this.ctx.target.clock.now();
  }

  async run(): Promise<StepResult> {
    this.rec.startedAt = this.plan.startAt ?? this.now;
    if (this.warm !== undefined) this.warm.startedAt = this.rec.startedAt;
    this.#lastTick = this.rec.startedAt;
    if (!this.warming) this.#startClock();
    const ticker = setInterval(() => this.#tick(), 250);
    try {
      if (this.plan.mode === 'closed') await this.#closedLoop();
      else await this.#openLoop();
    } finally {
      this.flight.close();
      clearInterval(ticker);
      if (this.#durationTimer !== undefined) clearTimeout(this.#durationTimer);
    }
    this.rec.endedAt = this.now;
    this.ctx.onTick?.(this.rec, false);
    const measured = !this.warming;
    return this.stopped !== undefined
      ? { rec: this.rec, stopped: this.stopped, measured }
      : { rec: this.rec, measured };
  }

  /** Ends the step now (its duration, or an early stop naming why): requests in flight are cancelled. */
  stop(reason?: string): void {
    if (reason !== undefined && this.stopped === undefined) this.stopped = reason;
    this.stopping = true;
    this.#stepAbort.abort();
  }

  #startClock(): void {
    const ms = this.plan.durationMs;
    if (ms !== undefined) this.#durationTimer = setTimeout(() => this.stop(), ms);
  }

  /** Records a finished request (`measured`: not the closed loop's warm-up). */
  #done(o: Outcome, measured: boolean): void {
    this.ctx.onFinished?.(o);
    if ((o.status === 401 || o.status === 403) && this.stopped === undefined) {
      this.ctx.onAuthFailure?.(o);
      this.stop('auth');
    }
    if (!measured) {
      const warm = this.warm as Recorder;
      warm.inFlight--;
      warm.add(o);
      return;
    }
    const rec = this.rec;
    rec.inFlight--;
    if (this.watch !== undefined && o.ok && o.cancelled !== true)
      this.watch.add(this.now - rec.startedAt, o.e2eMs);
    rec.add(o);
    if (o.cancelled !== true) this.ctx.onOutcome?.(o);
  }

  /** Every 250 ms: the live figures, and the --stop-on checks. */
  #tick(): void {
    const now = this.now;
    const rec = this.rec;
    this.ctx.onTick?.(this.warming ? (this.warm as Recorder) : rec, this.warming);
    const stopOn = this.ctx.stopOn;
    if (stopOn !== undefined && !this.stopping && !this.warming) {
      const term = firstHolding(stopOn, liveFigures(rec, now));
      const rate = this.plan.rate;
      if (term !== undefined) this.stop(`stop-on: ${term}`);
      else if (stopOn.saturation && this.plan.mode === 'open' && rate !== undefined) {
        // Open loop: completions fall short of the offered rate while requests pile up.
        const recent = this.#recent;
        recent.push((rec.done - this.#lastDone) / ((now - this.#lastTick) / 1000));
        if (recent.length > 12) recent.shift();
        const avg = recent.reduce((a, b) => a + b, 0) / recent.length;
        if (recent.length >= 12 && avg < 0.8 * rate && rec.inFlight > rate) this.stop('saturation');
      } else if (this.watch?.saturated(now - rec.startedAt) === true) {
        // Closed loop: throughput stopped rising while latency climbed (saturation.ts).
        this.stop('saturation');
      }
    }
    this.#lastDone = rec.done;
    this.#lastTick = now;
  }

  #closedLoop(): Promise<unknown> {
    const users = this.plan.concurrency ?? 1;
    return Promise.all(Array.from({ length: users }, (_, i) => this.#user(i, users)));
  }

  /**
   * Virtual user i. A request that failed before a byte of it was sent (no file descriptor left, a refused
   * connection) took no time on the network: without a pause the loop would run on promise callbacks alone and
   * starve the event loop (no duration timer, no Ctrl-C, memory growing). So the user pauses, doubling from 1 ms
   * up to MAX_BACKOFF_MS while such failures last.
   */
  async #user(i: number, users: number): Promise<void> {
    const { plan, ctx } = this;
    const delay = plan.rampMs !== undefined && i > 0 ? (i * plan.rampMs) / users : 0;
    if (delay > 0) await sleep(delay, this.signal);
    const limit = plan.requests !== undefined ? this.warmup + plan.requests : Infinity;
    const client = (await ctx.target.lane?.(i)) ?? ctx.target.client;
    let backoff = 0;
    while (!this.stopping && !this.signal.aborted) {
      if (this.issued >= limit) return;
      const req = ctx.next();
      // No await without a budget: the loop's turn per request stays as it was.
      const hold = ctx.budget !== undefined ? await this.#admit(req) : undefined;
      if (hold === null) return;
      if (this.issued >= limit) {
        // Another user sent the last request while this one waited for room in the budget.
        if (hold !== undefined) ctx.budget?.ledger.release(hold);
        return;
      }
      const measured = ++this.issued > this.warmup;
      if (measured && this.warming) {
        // The first measured request: the step's clock starts now.
        this.warming = false;
        this.rec.startedAt = this.now;
        this.#startClock();
      }
      (measured ? this.rec : (this.warm as Recorder)).inFlight++;
      const o = await exchange(ctx.target, req, undefined, ctx.origin, this.flight, client);
      if (hold !== undefined) ctx.budget?.settle(hold, o);
      this.#done(o, measured);
      if (o.sent || o.cancelled === true) backoff = 0;
      else {
        backoff = Math.min(MAX_BACKOFF_MS, backoff === 0 ? 1 : backoff * 2);
        await sleep(backoff, this.signal);
      }
    }
  }

  /**
   * `--budget`: the request's hold (undefined without a budget); `wait` when it fits only once requests in flight
   * settle; null when it never will, and the step stops sending (`budget`; requests in flight end as they do).
   */
  #hold(req: Sendable): Hold | undefined | 'wait' | null {
    const r = this.ctx.budget?.reserve(req);
    if (r !== 'stop') return r;
    this.stopped ??= 'budget';
    this.stopping = true;
    return null;
  }

  /** Closed loop: the request's hold, waiting for room while requests in flight may make it; null: not sent. */
  async #admit(req: Sendable): Promise<Hold | undefined | null> {
    for (;;) {
      if (this.stopping || this.signal.aborted) return null;
      const hold = this.#hold(req);
      if (hold !== 'wait') return hold;
      await changedOrAborted(this.ctx.budget as TextBudget, this.signal);
    }
  }

  /**
   * The open loop: arrivals on the schedule. At most `connections` requests are in flight; a later arrival waits
   * (its scheduled start only) for one to end, and past MAX_WAITING waiting ones it is dropped. When the step ends,
   * arrivals still waiting were never sent: dropped too.
   */
  #openLoop(): Promise<void> {
    const { plan, ctx, rec } = this;
    const gap = gaps(plan.arrival, plan.rate ?? 1, plan.seed);
    const cap = plan.connections ?? Infinity;
    const deadline = plan.durationMs !== undefined ? rec.startedAt + plan.durationMs : Infinity;
    const waiting = new Waiting(MAX_WAITING);
    // Requests not yet settled: a count, not a Set of their promises (a long-lived Set with an entry added and
    // removed per request makes V8 promote garbage to the old generation, see Flight in exchange.ts).
    let pending = 0;
    let arrivals = 0;
    let next = rec.startedAt;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let finished = false;
    return new Promise<void>((resolve) => {
      const settle = (): void => {
        if (!finished) return;
        // Arrivals waiting when the step ended were never sent (those held back by --budget are not "dropped").
        if (this.stopping) {
          const never = waiting.clear();
          if (this.stopped !== 'budget') rec.dropped += never;
        }
        if (pending === 0 && waiting.size === 0) resolve();
      };
      // Sends the arrival due at t0 unless --budget makes it wait (false) for requests in flight to settle.
      const send = (t0: number): boolean => {
        const req = ctx.next();
        const hold = this.#hold(req);
        if (hold === 'wait') return false;
        if (hold === null) return true;
        pending++;
        rec.inFlight++;
        const sent = exchange(ctx.target, req, t0, ctx.origin, this.flight);
        void (hold === undefined ? sent.then(settled) : sent.then((o) => settled(o, hold)));
        return true;
      };
      const settled = (o: Outcome, hold?: Hold): void => {
        pending--;
        if (hold !== undefined) ctx.budget?.settle(hold, o);
        this.#done(o, true);
        if (!this.stopping && waiting.size > 0 && send(waiting.peek())) waiting.shift();
        if (this.stopping) finish();
        else settle();
      };
      const finish = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        finished = true;
        settle();
      };
      const max = plan.requests ?? Infinity;
      const shard = plan.shard;
      // Another shard's arrivals: drawn (the schedule is one), never waited for.
      const skipOthers = (): void => {
        if (shard === undefined) return;
        while (arrivals % shard.n !== shard.k - 1 && next < deadline && arrivals < max) {
          arrivals++;
          next += gap();
        }
      };
      const tick = (): void => {
        timer = undefined;
        const now = this.now;
        skipOthers();
        while (!this.stopping && next <= now && next < deadline && arrivals < max) {
          arrivals++;
          // In order: while arrivals wait (for a connection, or room in --budget), a new one waits behind them.
          if ((pending >= cap || waiting.size > 0 || !send(next)) && !waiting.push(next)) rec.dropped++;
          next += gap();
          skipOthers();
        }
        if (this.stopping || next >= deadline || arrivals >= max) finish();
        else timer = setTimeout(tick, Math.max(0, Math.floor(next - this.now)));
      };
      this.signal.addEventListener('abort', finish, { once: true });
      tick();
    });
  }
}

/** Scheduled starts waiting for a connection: a ring of numbers that grows up to `max` (then refuses). */
class Waiting {
  #ring = new Float64Array(1024);
  #head = 0;
  size = 0;
  constructor(readonly max: number) {}

  /** False when full: the arrival is dropped. */
  push(t: number): boolean {
    if (this.size === this.#ring.length) {
      if (this.size >= this.max) return false;
      const grown = new Float64Array(Math.min(this.max, this.size * 2));
      for (let i = 0; i < this.size; i++) grown[i] = this.#ring[(this.#head + i) % this.size] as number;
      this.#ring = grown;
      this.#head = 0;
    }
    this.#ring[(this.#head + this.size) % this.#ring.length] = t;
    this.size++;
    return true;
  }

  /** The first waiting arrival (the queue is not empty). */
  peek(): number {
    return this.#ring[this.#head] as number;
  }

  shift(): number {
    const t = this.#ring[this.#head] as number;
    this.#head = (this.#head + 1) % this.#ring.length;
    this.size--;
    return t;
  }

  /** Empties the queue; returns how many it held. */
  clear(): number {
    const n = this.size;
    this.size = 0;
    this.#head = 0;
    return n;
  }
}

/** Resolves at the budget's next release or settle, or when `signal` aborts. */
function changedOrAborted(budget: TextBudget, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void budget.ledger.changed().then(done);
  });
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects: an abort ends the wait, not the run). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
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
