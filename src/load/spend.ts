/**
 * `gw load --prices`: each measured request is priced from what its answer reported (contract/prices.ts: its
 * usage's tokens, an images answer's images, a finished video's seconds), and a step adds the amounts up per
 * currency to a millionth (addSpend), so a step's sum and a merge of shards are exact. A successful request that
 * cannot be priced (its model is not in the file, or it reported nothing the file prices) is counted as unpriced,
 * never as a spend of 0.
 */
import { createHash } from 'node:crypto';
import type { Currency } from '../contract/money.js';
import { addSpend, type PriceTable } from '../contract/prices.js';
import type { Outcome } from './exchange.js';
import type { Amounts, StepReport, StepSpend } from './schema.js';

/** Models of unpriced requests a report names, at most. */
export const MAX_UNPRICED_MODELS = 16;

/** Adds amounts per currency into `into` (contract/prices.ts addSpend: to a millionth, so sums stay exact). */
export function addAmounts(into: Amounts, amounts: Amounts | undefined): void {
  for (const [currency, amount] of Object.entries(amounts ?? {}) as Array<[Currency, number | undefined]>) {
    if (amount !== undefined) addSpend(into, { currency, amount });
  }
}

/** The identity of a prices file in a report's config: runs priced differently do not merge. */
export function pricesDigest(prices: PriceTable): string {
  return createHash('sha256').update(JSON.stringify(prices.file)).digest('hex');
}

/** What a step's requests cost at --prices. */
export class SpendTally {
  readonly total: Amounts = {};
  priced = 0;
  unpriced = 0;
  readonly unpricedModels = new Set<string>();

  constructor(readonly prices: PriceTable) {}

  /**
   * Prices a finished request from what its answer reported, sets its `spend` (the --csv row shows it) and counts
   * it; a successful one without a price is unpriced.
   */
  add(o: Outcome): void {
    const model = o.model ?? '';
    const tokens = { input: o.inputTokens, cached: o.cachedTokens, output: o.outputTokens };
    const s = this.prices.spend(model, { tokens, images: o.images, videoSeconds: o.videoSeconds });
    if (s !== undefined) {
      o.spend = s;
      this.priced++;
      addSpend(this.total, s);
      return;
    }
    if (!o.ok) return;
    this.unpriced++;
    if (this.prices.of(model) === undefined && this.unpricedModels.size < MAX_UNPRICED_MODELS)
      this.unpricedModels.add(model);
  }

  report(): StepSpend {
    return {
      total: { ...this.total },
      priced: this.priced,
      unpriced: this.unpriced,
      unpriced_models: [...this.unpricedModels].sort(),
    };
  }
}

/** The report's `spend` (every step's, per currency) when its steps were priced; nothing otherwise. */
export function runSpend(steps: readonly StepReport[]): { spend?: Amounts } {
  if (steps.every((st) => st.spend === undefined)) return {};
  const spend: Amounts = {};
  for (const st of steps) addAmounts(spend, st.spend?.total);
  return { spend };
}

/** The spend of several reports' steps (shards, machines): amounts add in millionths, counts add. */
export function mergeSpend(parts: ReadonlyArray<StepSpend | undefined>): StepSpend | undefined {
  if (parts.every((p) => p === undefined)) return undefined;
  const total: Amounts = {};
  const models = new Set<string>();
  let priced = 0;
  let unpriced = 0;
  for (const p of parts) {
    if (p === undefined) continue;
    addAmounts(total, p.total);
    priced += p.priced;
    unpriced += p.unpriced;
    for (const m of p.unpriced_models) if (models.size < MAX_UNPRICED_MODELS) models.add(m);
  }
  return { total, priced, unpriced, unpriced_models: [...models].sort() };
}

/** The warnings of a step whose successful requests were not all priced (none, or one). */
export function spendWarnings(st: StepReport): string[] {
  const w = st.spend !== undefined ? unpricedWarning(st.label, st.spend) : undefined;
  return w !== undefined ? [w] : [];
}

/** The warning of a step whose successful requests were not all priced, naming the models the file lacks. */
function unpricedWarning(label: string, s: StepSpend): string | undefined {
  if (s.unpriced === 0) return undefined;
  const why =
    s.unpriced_models.length > 0
      ? `models not in the file: ${s.unpriced_models.map((m) => (m === '' ? '(none named)' : m)).join(', ')}`
      : 'their answers reported no usage, images or seconds the file prices';
  const n = s.unpriced === 1 ? '1 successful request has' : `${s.unpriced} successful requests have`;
  return `${label !== '' ? `${label}: ` : ''}${n} no spend at --prices (${why}); the spend shown leaves them out`;
}
