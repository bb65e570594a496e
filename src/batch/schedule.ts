/**
 * The order creates are sent in, under the limits of limits.ts. Fair to items refused by a rate limit:
 *
 * - a 429 pauses the item's model lane for every sender until its Retry-After (limits.ts);
 * - items waiting for a resend go before any new line of the same model, the oldest line first;
 * - a 429 does not use up an item's `--max-attempts` while its model's lane moves (another create of that model
 *   was accepted since the item's previous refusal): only refusals in a row of a lane where nothing gets through
 *   count, like a connection that never opened does. So a gateway that merely rate-limits gets every item through,
 *   and one that refuses everything ends the items after their attempts instead of retrying forever.
 *
 * A small window of new lines is read ahead, so a paused model does not hold back the lines of other models.
 */
import type { Limits, Ticket } from './limits.js';

/** What to do with an item that was not created and may be sent again. */
export interface Resend {
  /** True for a 429 (the lane was paused by `Limits.release`), false for a connection that never opened. */
  rateLimited: boolean;
  /** The least wait before the next send of this item. */
  waitMs: number;
  code: string;
  message: string;
}

/**
 * The budget's word on an item: send it; wait (items in flight may free the room: the engine wakes the scheduler
 * when one ends, and the item is asked again); or stop all submission.
 */
export type Admission = 'send' | 'wait' | 'stop';

/** What the scheduler needs from the engine. */
export interface SchedulerHooks<T> {
  model(item: T): string;
  /** The next new item of the input, or undefined at its end. */
  next(): Promise<T | undefined>;
  /** Whether the item may be submitted now (the budget). */
  admit(item: T): Admission;
  /** Sends the item holding `ticket` (released by the engine as soon as the answer is known). */
  send(item: T, ticket: Ticket): Promise<Resend | undefined>;
  /** The item was not created after its attempts. */
  giveUp(item: T, attempts: number, last: Resend): Promise<void>;
  /** True when the run stops (Ctrl-C, timeout, a fatal error). */
  stopped(): boolean;
  /** False while what follows the creates (polls, downloads) is full. */
  room(): boolean;
  /** An error of a send or give-up that is not the item's own (the state log could not be written). */
  fatal(e: unknown): void;
}

/** How submission ended. */
export interface ScheduleResult {
  /** Items read but never submitted (budget reached, run stopped). */
  unsent: number;
  /** True when `admit` refused (the budget): the rest of the input was not read. */
  refused: boolean;
}

interface Queued<T> {
  item: T;
  seq: number;
  /** Sends that counted against --max-attempts. */
  attempts: number;
  /** `acceptedOf(model)` at the item's previous refusal. */
  mark: number | undefined;
  /** True while it is among the resends (it was sent and not created). */
  resend?: boolean;
  notBefore: number;
}

/** A tiny event: promises that resolve on the next `fire()` (or after `ms`). */
export class Pulse {
  #waiters: Array<() => void> = [];
  wait(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      let t: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (t !== undefined) clearTimeout(t);
        resolve();
      };
      if (ms !== undefined) t = setTimeout(done, Math.max(0, ms));
      this.#waiters.push(done);
    });
  }
  fire(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}

/** Sends the items of one run. */
export class Scheduler<T> {
  readonly #pulse = new Pulse();
  /** Items to send again, in input order. */
  #retries: Array<Queued<T>> = [];
  /** Resends waiting, per model (new lines of that model wait behind them). */
  readonly #retryCount = new Map<string, number>();
  /** New lines read ahead, in input order. */
  #fresh: Array<Queued<T>> = [];
  #seq = 0;
  #inFlight = 0;
  #inputDone = false;

  constructor(
    private readonly limits: Limits,
    private readonly maxAttempts: number,
    private readonly hooks: SchedulerHooks<T>,
    /** New lines read ahead of the first one that can be sent. */
    private readonly lookahead = 16,
    private readonly now: () => number = Date.now,
  ) {
    limits.onChange(() => this.#pulse.fire());
  }

  /** Re-checks what can be sent (the engine calls it when a follower ends or the run stops). */
  wake(): void {
    this.#pulse.fire();
  }

  #pick(): Queued<T> | undefined {
    // At the global ceiling nothing can start: a release fires the pulse (the common case at full concurrency).
    if (this.limits.full) return undefined;
    const now = this.now();
    for (let i = 0; i < this.#retries.length; i++) {
      const r = this.#retries[i] as Queued<T>;
      if (r.notBefore <= now && this.limits.canSend(this.hooks.model(r.item))) {
        this.#retries.splice(i, 1);
        const m = this.hooks.model(r.item);
        this.#retryCount.set(m, (this.#retryCount.get(m) ?? 1) - 1);
        return r;
      }
    }
    for (let i = 0; i < this.#fresh.length; i++) {
      const f = this.#fresh[i] as Queued<T>;
      const m = this.hooks.model(f.item);
      if ((this.#retryCount.get(m) ?? 0) === 0 && this.limits.canSend(m)) {
        this.#fresh.splice(i, 1);
        return f;
      }
    }
    return undefined;
  }

  /** Milliseconds until a waiting item's lane or resend time opens (undefined: wait for a slot). */
  #nextOpening(): number | undefined {
    if (this.limits.full) return undefined;
    let soonest = Infinity;
    const now = this.now();
    for (const q of [...this.#retries, ...this.#fresh]) {
      const ms = Math.max(q.notBefore - now, this.limits.pausedFor(this.hooks.model(q.item)));
      if (ms > 0) soonest = Math.min(soonest, ms);
    }
    return Number.isFinite(soonest) ? soonest : undefined;
  }

  /** Sends until the input and the resends are done, the budget refuses, or the run stops. */
  async run(): Promise<ScheduleResult> {
    let refused = false;
    for (;;) {
      if (this.hooks.stopped()) break;
      const pick = this.hooks.room() ? this.#pick() : undefined;
      if (pick === undefined) {
        if (!this.#inputDone && this.#fresh.length < this.lookahead) {
          const item = await this.hooks.next();
          if (item === undefined) this.#inputDone = true;
          else {
            const q = { item, seq: this.#seq++, attempts: 0, mark: undefined, notBefore: 0 };
            this.#fresh.push(q);
          }
          continue;
        }
        if (this.#inputDone && this.#fresh.length === 0 && this.#retries.length === 0 && this.#inFlight === 0)
          break;
        await this.#pulse.wait(this.#nextOpening());
        continue;
      }
      const admission = this.hooks.admit(pick.item);
      if (admission === 'stop') {
        refused = true;
        this.#fresh.unshift(pick);
        break;
      }
      if (admission === 'wait') {
        // Back where it was, first of its kind again; the engine's wake (an item's spend known) asks again.
        this.#putBack(pick);
        await this.#pulse.wait();
        continue;
      }
      this.#dispatch(pick);
    }
    const queued = (): number => this.#retries.length + this.#fresh.length;
    const before = queued();
    this.#retries = [];
    this.#fresh = [];
    while (this.#inFlight > 0) await this.#pulse.wait();
    // Items refused while the last sends drained are not sent either.
    return { unsent: before + queued(), refused };
  }

  #dispatch(q: Queued<T>): void {
    const model = this.hooks.model(q.item);
    const ticket = this.limits.take(model);
    q.attempts++;
    this.#inFlight++;
    void this.#settle(q, model, ticket);
  }

  /** Sends one item and decides what follows (one async frame per send: a batch dispatches thousands a second). */
  async #settle(q: Queued<T>, model: string, ticket: Ticket): Promise<void> {
    try {
      const again = await this.hooks.send(q.item, ticket);
      if (again === undefined) return;
      if (again.rateLimited) {
        const accepted = this.limits.acceptedOf(model);
        // The lane moved since this item's previous refusal (or this is its first): not an attempt.
        if (q.mark === undefined || accepted !== q.mark) {
          q.attempts--;
        }
        q.mark = accepted;
      }
      if (q.attempts >= this.maxAttempts) {
        await this.hooks.giveUp(q.item, q.attempts, again);
        return;
      }
      q.notBefore = this.now() + again.waitMs;
      this.#requeue(q, model);
    } catch (e) {
      this.hooks.fatal(e);
    } finally {
      this.#inFlight--;
      this.#pulse.fire();
    }
  }

  /** An item picked but not sent: back among the resends or the new lines, in input order. */
  #putBack(q: Queued<T>): void {
    if (q.resend === true) {
      this.#requeue(q, this.hooks.model(q.item));
      return;
    }
    let i = 0;
    while (i < this.#fresh.length && (this.#fresh[i] as Queued<T>).seq < q.seq) i++;
    this.#fresh.splice(i, 0, q);
  }

  /** Back into the resends, in input order. */
  #requeue(q: Queued<T>, model: string): void {
    q.resend = true;
    let i = this.#retries.length;
    while (i > 0 && (this.#retries[i - 1] as Queued<T>).seq > q.seq) i--;
    this.#retries.splice(i, 0, q);
    this.#retryCount.set(model, (this.#retryCount.get(model) ?? 0) + 1);
  }
}
