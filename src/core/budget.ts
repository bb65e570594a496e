/**
 * `--budget <amount><currency>` of `gw probe`, `gw batch run` and `gw load` (video lines): repeatable, one per
 * currency, a cap on the spend of what the command sends. One parser, so the commands take and refuse the same
 * values with the same words, and one ledger (below), so they count the same way.
 */
import { amountText, parseBudget, type Currency } from '../contract/money.js';
import { UsageError } from './errors.js';

/** The amount allowed per currency; a value that is not an amount and a currency, or a currency given twice, is a UsageError (exit 2). */
export function parseBudgets(values: readonly string[]): Map<Currency, number> {
  const out = new Map<Currency, number>();
  for (const v of values) {
    const p = parseBudget(v);
    if (p === undefined) {
      throw new UsageError(`--budget: "${v}" must be an amount and a currency, e.g. 50CNY or 10USD`, {
        field: '--budget',
      });
    }
    if (out.has(p.currency)) {
      throw new UsageError(`--budget: ${p.currency} is given twice (one --budget per currency)`, {
        field: '--budget',
      });
    }
    out.set(p.currency, p.amount);
  }
  return out;
}

/** An amount in a currency (a spend an answer reports, priced). */
export interface Amount {
  currency: Currency;
  amount: number;
}

/**
 * An amount held against the budget for one request: its upper bound (or list price) until the request ends.
 * Every hold ends once, in `release` (nothing was billed) or `settle` (the real spend, or the bound when it is not
 * known); the ledger ignores a second ending.
 */
export interface Hold {
  readonly currency: Currency;
  /** The amount held, in the currency's units. */
  readonly amount: number;
}

/** Why an amount does not fit its budget. */
export interface Refusal {
  /** `CNY 2.70 would pass --budget CNY 5.00 (2.70 taken)`, or `no --budget in USD`. */
  reason: string;
  currency: Currency;
  amount: number;
  /** The cap of the currency (undefined: no --budget in it). */
  cap: number | undefined;
  /** What is counted in the currency: spends settled plus the holds still open. */
  spent: number;
  /**
   * True when holds still open in the currency could make the room: the amount would fit were they to settle
   * for nothing. Waiting for them (`changed`) may then admit it; otherwise it will never fit in this run.
   */
  later: boolean;
}

/** Millionths: a text request's bound at --prices is a fraction of a cent; list prices in cents stay exact. */
const UNIT = 1e6;
const toUnits = (a: number): number => Math.round(a * UNIT);

class OpenHold implements Hold {
  open = true;
  constructor(
    readonly currency: Currency,
    readonly units: number,
  ) {}
  get amount(): number {
    return this.units / UNIT;
  }
}

interface Tally {
  /** Settled spends plus open holds, in millionths. */
  counted: number;
  /** Open holds, in millionths, and how many. */
  held: number;
  holds: number;
}

/**
 * The spend of one run against its --budget, per currency, in whole millionths (no drift however many requests).
 * A request is admitted by `reserve` (its upper bound must fit beside everything counted), and its hold ends with
 * `release` (refused create, request never sent) or `settle` (the spend its answer reports replaces the bound, so
 * later requests may use the room; an answer whose spend is unknown keeps its bound). `carry` counts what earlier
 * runs spent or left in flight, cap or not.
 */
export class BudgetLedger {
  readonly #tally = new Map<Currency, Tally>();
  readonly #totals = new Map<Currency, number>();
  #waiters: Array<() => void> = [];

  constructor(readonly caps: ReadonlyMap<Currency, number>) {}

  /** What is counted per currency (settled spends plus open holds), in the currency's units; live. */
  get totals(): ReadonlyMap<Currency, number> {
    return this.#totals;
  }

  /** What is counted in `currency`. */
  spent(currency: Currency): number {
    return (this.#tally.get(currency)?.counted ?? 0) / UNIT;
  }

  /** Holds `amount` when it fits the cap of `currency` beside everything counted; why not otherwise. */
  reserve(currency: Currency, amount: number): Hold | Refusal {
    const units = toUnits(amount);
    const t = this.#of(currency);
    const cap = this.caps.get(currency);
    const room = cap !== undefined ? toUnits(cap) : undefined;
    if (room !== undefined && t.counted + units <= room) return this.#hold(currency, units);
    const spent = t.counted / UNIT;
    const a = units / UNIT;
    return {
      reason:
        cap === undefined
          ? `no --budget in ${currency}`
          : `${currency} ${amountText(a)} would pass --budget ${currency} ${amountText(cap)} (${amountText(spent)} taken)`,
      currency,
      amount: a,
      cap,
      spent,
      later: room !== undefined && t.holds > 0 && t.counted - t.held + units <= room,
    };
  }

  /** Holds `amount` whatever the cap: the spend of earlier runs, or their requests still in flight. */
  carry(currency: Currency, amount: number): Hold {
    return this.#hold(currency, toUnits(amount));
  }

  /** Ends a hold whose request billed nothing (a create the gateway refused, a request never sent). */
  release(hold: Hold): void {
    this.#end(hold, 0);
  }

  /**
   * Ends a hold with the spend its answer reports, which replaces the bound (more than the bound counts in full);
   * undefined, or a spend in another currency, keeps the bound.
   */
  settle(hold: Hold, real: Amount | undefined): void {
    const h = hold as OpenHold;
    this.#end(hold, real !== undefined && real.currency === h.currency ? toUnits(real.amount) : h.units);
  }

  /** Resolves at the next release or settle (a refusal that may fit `later` waits for it). */
  changed(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #of(currency: Currency): Tally {
    let t = this.#tally.get(currency);
    if (t === undefined) this.#tally.set(currency, (t = { counted: 0, held: 0, holds: 0 }));
    return t;
  }

  #hold(currency: Currency, units: number): Hold {
    const t = this.#of(currency);
    t.counted += units;
    t.held += units;
    t.holds++;
    this.#totals.set(currency, t.counted / UNIT);
    return new OpenHold(currency, units);
  }

  #end(hold: Hold, units: number): void {
    const h = hold as OpenHold;
    if (!h.open) return;
    h.open = false;
    const t = this.#of(h.currency);
    t.counted += units - h.units;
    t.held -= h.units;
    t.holds--;
    this.#totals.set(h.currency, t.counted / UNIT);
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}

/** True when `reserve` refused. */
export function isRefusal(r: Hold | Refusal): r is Refusal {
  return 'reason' in r;
}
