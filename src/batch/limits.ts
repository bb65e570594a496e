/**
 * Concurrency of a batch: a global ceiling (`--concurrency`) and an adaptive limit per model — additive increase
 * while answers succeed, multiplicative decrease on 429, and a pause honouring Retry-After. Pure state and
 * promises: the clock is injected so tests need no real time.
 */

/** The longest pause a Retry-After may impose (a gateway asking for an hour is capped). */
export const MAX_RETRY_AFTER_MS = 60_000;

interface ModelState {
  limit: number;
  inFlight: number;
  successes: number;
  pausedUntil: number;
}

/** A counting gate shared by every model, plus one adaptive limit per model. */
export class Limits {
  readonly #models = new Map<string, ModelState>();
  #inFlight = 0;
  #waiters: Array<() => void> = [];

  constructor(
    readonly ceiling: number,
    private readonly now: () => number = Date.now,
  ) {}

  #model(m: string): ModelState {
    let s = this.#models.get(m);
    if (s === undefined) {
      s = { limit: this.ceiling, inFlight: 0, successes: 0, pausedUntil: 0 };
      this.#models.set(m, s);
    }
    return s;
  }

  /** The current limit of a model. */
  limitOf(model: string): number {
    return this.#model(model).limit;
  }

  /** Requests in flight, all models. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Milliseconds until `model` may send again (0 when it may now). */
  #blockedFor(s: ModelState): number {
    if (this.#inFlight >= this.ceiling || s.inFlight >= s.limit) return -1;
    return Math.max(0, s.pausedUntil - this.now());
  }

  /** Waits for a slot of `model` (and of the global ceiling); returns the release function. */
  async acquire(model: string, signal?: AbortSignal): Promise<void> {
    const s = this.#model(model);
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const blocked = this.#blockedFor(s);
      if (blocked === 0) {
        s.inFlight++;
        this.#inFlight++;
        return;
      }
      await new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const wake = (): void => {
          if (timer !== undefined) clearTimeout(timer);
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        this.#waiters.push(wake);
        signal?.addEventListener('abort', wake, { once: true });
        if (blocked > 0) timer = setTimeout(wake, blocked);
      });
    }
  }

  /** Gives a slot back, telling how the request went. */
  release(model: string, outcome: 'ok' | 'rate-limited' | 'other', retryAfterMs?: number): void {
    const s = this.#model(model);
    s.inFlight--;
    this.#inFlight--;
    if (outcome === 'rate-limited') {
      s.limit = Math.max(1, Math.floor(s.limit / 2));
      s.successes = 0;
      const pause = Math.min(MAX_RETRY_AFTER_MS, Math.max(0, retryAfterMs ?? 1000));
      s.pausedUntil = Math.max(s.pausedUntil, this.now() + pause);
    } else if (outcome === 'ok' && s.limit < this.ceiling) {
      s.successes++;
      if (s.successes >= s.limit) {
        s.limit++;
        s.successes = 0;
      }
    }
    const w = this.#waiters;
    this.#waiters = [];
    for (const wake of w) wake();
  }
}
