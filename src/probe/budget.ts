/** `--budget <amount><currency>` (repeatable, one per currency): a cap on the list price of what a probe creates. */

import { amountText } from '../contract/money.js';

/** Amount allowed per currency (upper-case ISO code). */
export type Budget = Map<string, number>;

/** Spend so far against a budget: `take` reserves an amount when it fits. */
export class BudgetLedger {
  readonly #spent = new Map<string, number>();
  constructor(readonly budget: Budget) {}

  /** The amount spent in `currency`. */
  spent(currency: string): number {
    return this.#spent.get(currency) ?? 0;
  }

  /** Reserves `amount` when the budget of `currency` allows it; returns why not otherwise. */
  take(currency: string, amount: number): string | undefined {
    const cap = this.budget.get(currency);
    if (cap === undefined) return `no --budget in ${currency}`;
    // A millionth: a text row's bound at --prices is a fraction of a cent.
    const after = Math.round((this.spent(currency) + amount) * 1e6) / 1e6;
    if (after > cap + 1e-9) {
      return `${currency} ${amountText(amount)} would pass --budget ${currency} ${amountText(cap)} (${amountText(this.spent(currency))} taken)`;
    }
    this.#spent.set(currency, after);
    return undefined;
  }
}
