/**
 * Concurrency of a batch: a global ceiling (`--concurrency`) and an adaptive limit per model — additive increase
 * while answers succeed, multiplicative decrease on 429 (once per round: the 429s of requests sent before the
 * last decrease do not halve it again), and a pause of the model's whole lane honouring Retry-After: no create
 * and no poll of that model starts before it ends. Pure state and promises: the clock is injected so tests need
 * no real time.
 */

/** The longest pause a Retry-After may impose (a gateway asking for an hour is capped). */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The pause after a 429 that gave no Retry-After. */
export const DEFAULT_PAUSE_MS = 1000;

interface ModelState {
  limit: number;
  inFlight: number;
  successes: number;
  pausedUntil: number;
  /** Decreases so far: a 429 of a request sent before the latest one does not halve the limit again. */
  round: number;
  /** Creates of this model accepted so far (the lane moves while this grows). */
  accepted: number;
}

/** One slot taken by a request; give it back with `release`. */
export interface Ticket {
  readonly model: string;
  readonly round: number;
}

/** How a request went, for its lane. */
export type Outcome = 'ok' | 'rate-limited' | 'other';

/** A counting gate shared by every model, plus one adaptive limit per model. */
export class Limits {
  readonly #models = new Map<string, ModelState>();
  #inFlight = 0;
  #waiters: Array<() => void> = [];
  readonly #listeners: Array<() => void> = [];

  constructor(
    readonly ceiling: number,
    private readonly now: () => number = Date.now,
  ) {}

  #model(m: string): ModelState {
    let s = this.#models.get(m);
    if (s === undefined) {
      s = { limit: this.ceiling, inFlight: 0, successes: 0, pausedUntil: 0, round: 0, accepted: 0 };
      this.#models.set(m, s);
    }
    return s;
  }

  /** Calls `f` whenever a slot is given back or a lane is paused (schedulers re-check then). */
  onChange(f: () => void): void {
    this.#listeners.push(f);
  }

  /** The current limit of a model. */
  limitOf(model: string): number {
    return this.#model(model).limit;
  }

  /** Decreases of `model`'s limit so far (a 429 of a request started before the latest one does not halve it). */
  roundOf(model: string): number {
    return this.#model(model).round;
  }

  /** Creates of `model` accepted so far. */
  acceptedOf(model: string): number {
    return this.#model(model).accepted;
  }

  /** Requests in flight, all models. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Milliseconds until `model`'s lane is open again (0 when it is open). */
  pausedFor(model: string): number {
    return Math.max(0, this.#model(model).pausedUntil - this.now());
  }

  /** True when every slot of the global ceiling is taken (no model can start a request now). */
  get full(): boolean {
    return this.#inFlight >= this.ceiling;
  }

  /** True when a request of `model` may start now (a slot is free and its lane is not paused). */
  canSend(model: string): boolean {
    const s = this.#model(model);
    return this.#inFlight < this.ceiling && s.inFlight < s.limit && s.pausedUntil <= this.now();
  }

  /** Takes a slot of `model` now; only after `canSend(model)` said yes. */
  take(model: string): Ticket {
    const s = this.#model(model);
    s.inFlight++;
    this.#inFlight++;
    return { model, round: s.round };
  }

  /** Waits for a slot of `model` (and of the global ceiling), then takes it. */
  async acquire(model: string, signal?: AbortSignal): Promise<Ticket> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      if (this.canSend(model)) return this.take(model);
      await this.#wait(this.pausedFor(model), signal);
    }
  }

  /** Waits until `model`'s lane is not paused (no slot is taken: polls wait for the pause, not for a slot). */
  async whenOpen(model: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const ms = this.pausedFor(model);
      if (ms === 0) return;
      await this.#wait(ms, signal);
    }
  }

  #wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const wake = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      this.#waiters.push(wake);
      signal?.addEventListener('abort', wake, { once: true });
      if (ms > 0) timer = setTimeout(wake, ms);
    });
  }

  /**
   * A 429 for `model` (a create's or a poll's): the lane pauses for everyone until Retry-After, and the limit
   * halves unless it already did for a request sent at the same time (`round` of its ticket).
   */
  refused(model: string, retryAfterMs: number | undefined, round?: number): void {
    const s = this.#model(model);
    if (round === undefined || round === s.round) {
      s.limit = Math.max(1, Math.floor(s.limit / 2));
      s.round++;
    }
    s.successes = 0;
    const pause = Math.min(MAX_RETRY_AFTER_MS, Math.max(0, retryAfterMs ?? DEFAULT_PAUSE_MS));
    s.pausedUntil = Math.max(s.pausedUntil, this.now() + pause);
    this.#changed();
  }

  /** Gives a slot back, telling how the request went. */
  release(ticket: Ticket, outcome: Outcome, retryAfterMs?: number): void {
    const s = this.#model(ticket.model);
    s.inFlight--;
    this.#inFlight--;
    if (outcome === 'rate-limited') {
      this.refused(ticket.model, retryAfterMs, ticket.round);
      return;
    }
    if (outcome === 'ok') {
      s.accepted++;
      if (s.limit < this.ceiling) {
        s.successes++;
        if (s.successes >= s.limit) {
          s.limit++;
          s.successes = 0;
        }
      }
    }
    this.#changed();
  }

  #changed(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const wake of w) wake();
    for (const f of this.#listeners) f();
  }
}
