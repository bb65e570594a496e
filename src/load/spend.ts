/**
 * `gw load --prices`: each measured request is priced from what its answer reported (contract/prices.ts: its
 * usage's tokens, an images answer's images, a finished video's seconds), and a step adds the amounts up per
 * currency to a millionth (addSpend), so a step's sum and a merge of shards are exact. A successful request that
 * cannot be priced (its model is not in the file, or it reported nothing the file prices) is counted as unpriced,
 * never as a spend of 0.
 */
import { createHash } from 'node:crypto';
import { amountText, type Currency } from '../contract/money.js';
import { addSpend, type PriceTable, type Spend } from '../contract/prices.js';
import { BudgetLedger, isRefusal, type Amount, type Hold } from '../core/budget.js';
import { UsageError } from '../core/errors.js';
import type { Outcome, Sendable } from './exchange.js';
import type { Amounts, StepReport, StepSpend } from './schema.js';
import type { Prepared } from './workload.js';

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

/** What a request's answer cost at `prices`, from what it reported; undefined when it cannot be priced. */
export function spendOf(prices: PriceTable, o: Outcome): Spend | undefined {
  const tokens = { input: o.inputTokens, cached: o.cachedTokens, output: o.outputTokens };
  return prices.spend(o.model ?? '', { tokens, images: o.images, videoSeconds: o.videoSeconds });
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
    const s = spendOf(this.prices, o);
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

/**
 * The most a request can cost at `prices` (contract/prices.ts bound: its body's bytes as input tokens plus its
 * output limit), checked against the budget before anything is sent: a UsageError naming --budget when its model
 * is not priced, it has no bound, no budget is in its currency, or the budget does not cover it once.
 */
export function requestBound(p: Prepared, prices: PriceTable, caps: ReadonlyMap<Currency, number>): Amount {
  const b = prices.bound(p.path, JSON.parse(p.body.toString('utf8')) as Record<string, unknown>);
  const refuse = (rule: string): never => {
    throw new UsageError(`--budget: ${rule}`, { field: '--budget' });
  };
  if (b === undefined) return refuse(`${p.model} is not in --prices, so its requests have no price to hold`);
  if ('reason' in b) return refuse(`cannot be kept: ${b.reason}`);
  const cap = caps.get(b.currency);
  if (cap === undefined)
    return refuse(`${p.model} is priced in ${b.currency}: give a budget in ${b.currency}`);
  if (b.amount > cap) {
    refuse(
      `${amountText(cap)} ${b.currency} does not cover one request of ${p.model} (${b.currency} ${amountText(b.amount)}: ${b.basis})`,
    );
  }
  return { currency: b.currency, amount: b.amount };
}

/**
 * `--budget` of a text run at --prices, on the one ledger (core/budget.ts): a request is sent only when its upper
 * bound fits beside what the others spent or hold; its hold ends when its answer does, released when nothing was
 * billed (never written, or an error answer), else settled with the spend its answer reports (the bound stays
 * counted when that is unknown: a cut stream, a timeout).
 */
export class TextBudget {
  readonly ledger: BudgetLedger;

  constructor(
    caps: ReadonlyMap<Currency, number>,
    readonly prices: PriceTable,
  ) {
    this.ledger = new BudgetLedger(caps);
  }

  /** The request's hold; `wait` when it fits once requests in flight settle, `stop` when it never will. */
  reserve(req: Sendable): Hold | 'wait' | 'stop' {
    const b = req.bound as Amount;
    const r = this.ledger.reserve(b.currency, b.amount);
    return isRefusal(r) ? (r.later ? 'wait' : 'stop') : r;
  }

  settle(hold: Hold, o: Outcome): void {
    if (!o.sent || o.status >= 400) this.ledger.release(hold);
    else this.ledger.settle(hold, spendOf(this.prices, o));
  }
}
