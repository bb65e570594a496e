/**
 * What a batch line costs: its estimate before it is sent (the `--dry-run` figure `--budget` counts) and the spend
 * its answer implies. With `--prices`, a model the file prices is priced from it (an upper bound before, the
 * reported usage, images or seconds after: contract/prices.ts); any other model keeps the documents' list prices.
 */
import { estimateRequest, impliedSpend } from '../contract/estimate.js';
import { PriceTable, producedOf } from '../contract/prices.js';
import type { BatchState, Money } from './state.js';

/** A line's estimate, or why it has none. */
export function lineEstimate(
  url: string,
  body: Record<string, unknown>,
  prices: PriceTable | undefined,
): { est: Money | undefined; reason?: string } {
  const b = prices?.bound(url, body);
  if (b !== undefined)
    return 'reason' in b ? { est: undefined, reason: b.reason } : { est: { c: b.currency, a: b.amount } };
  const e = estimateRequest(url, body);
  return e.priced ? { est: { c: e.currency, a: e.amount } } : { est: undefined, reason: e.reason };
}

/** The spend a finished item's answer (a sync answer, a task's final record) implies, where it can be priced. */
export function impliedBy(
  url: string,
  model: string,
  body: Record<string, unknown> | undefined,
  answer: unknown,
  prices: PriceTable | undefined,
): Money | undefined {
  if (prices?.of(model) !== undefined) {
    const s = prices.spend(model, producedOf(url, answer));
    return s !== undefined ? { c: s.currency, a: s.amount } : undefined;
  }
  const task =
    answer !== null && typeof answer === 'object' ? (answer as Record<string, unknown>) : undefined;
  const m = impliedSpend(url, body, task);
  return m !== undefined ? { c: m.currency, a: m.amount } : undefined;
}

/** The prices the directory's last run recorded (a retry, a resume or a --dry-run without --prices uses them). */
export function recordedPrices(
  state: BatchState | undefined,
): { prices: PriceTable; path: string | undefined } | undefined {
  const p = state?.runs.at(-1)?.opts?.prices;
  return p !== undefined ? { prices: new PriceTable(p.file), path: p.path } : undefined;
}
