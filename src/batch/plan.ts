/**
 * `gw batch run --dry-run` as a library function: every line checked as a run would (the same errors), the count
 * per endpoint and model, and the estimated list price. Reads the batch directory's state when there is one (what
 * is finished already); writes nothing and sends nothing.
 */
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { Currency } from '../contract/estimate.js';
import type { PriceTable } from '../contract/prices.js';
import { scan } from './scan.js';
import { recordedPrices } from './spend.js';
import { linesError } from './session.js';
import type { Shard } from './shard.js';
import { loadState } from './state.js';

/** Options of planBatch. */
export interface PlanBatchOptions {
  input: string | Readable;
  /** The batch directory a run would use (its finished items are not counted as to send). */
  out?: string | undefined;
  validate?: boolean | undefined;
  shard?: Shard | undefined;
  /** --prices (else those the batch directory's last run recorded): its models' lines at their upper bound. */
  prices?: PriceTable | undefined;
}

/** The plan of a batch (`gw batch run --dry-run --json`). */
export interface BatchPlanDoc {
  lines: number;
  in_shard: number;
  groups: Array<{
    url: string;
    model: string;
    count: number;
    pending: number;
    estimated: Partial<Record<Currency, number>>;
    unpriced: number;
  }>;
  estimated_total: Partial<Record<Currency, number>>;
  unpriced: number;
  already_finished: number;
  /**
   * With --prices: the estimates are upper bounds (the real spend never passes them), and why the first unpriced
   * line has none.
   */
  upper_bound?: true;
  unpriced_reason?: string;
}

/** Checks every line and estimates the batch; a file with bad lines is the same error a run gives. */
export async function planBatch(o: PlanBatchOptions): Promise<BatchPlanDoc> {
  const state = o.out !== undefined ? await loadState(resolve(o.out)) : undefined;
  const prices = o.prices ?? recordedPrices(state)?.prices;
  const s = await scan(o.input, { validate: o.validate ?? true, shard: o.shard, state, prices });
  if (s.badLines > 0) throw linesError(s);
  const groups = [...s.groups.values()].sort((a, b) => (a.url + a.model).localeCompare(b.url + b.model));
  return {
    lines: s.lines,
    in_shard: s.inShard,
    groups: groups.map((g) => ({
      url: g.url,
      model: g.model,
      count: g.count,
      pending: g.pending,
      estimated: g.priced,
      unpriced: g.unpriced,
    })),
    estimated_total: s.totals,
    unpriced: s.unpriced,
    already_finished: state !== undefined ? s.inShard - groups.reduce((n, g) => n + g.pending, 0) : 0,
    ...(prices !== undefined ? { upper_bound: true as const } : {}),
    ...(prices !== undefined && s.unpricedReason !== undefined ? { unpriced_reason: s.unpricedReason } : {}),
  };
}
