/**
 * `--budget <amount><currency>` of `gw probe`, `gw batch run` and `gw load --api video`: repeatable, one per
 * currency, a cap on the list price of what the command creates. One parser, so the three commands take and refuse
 * the same values with the same words.
 */
import { parseBudget, type Currency } from '../contract/money.js';
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
