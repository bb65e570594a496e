/**
 * What a load test runs: the plan `runLoad` takes. Only the model is required; every other field has the
 * default `gw load` documents. A plan is trusted to be consistent (the CLI's flag schemas check combinations);
 * `resolvePlan` fills the defaults and parses expressions given as text.
 */
import type { Currency } from '../contract/money.js';
import type { PriceTable } from '../contract/prices.js';
import { UsageError } from '../core/errors.js';
import type { Shard } from '../core/shard.js';
import type { Arrival } from './arrivals.js';
import { parseExpr, type Expr } from './expr.js';
import { generatedPrompts, type MixEntry, type Prompt } from './workload.js';

/** Defaults where the plan (or the flags) are silent. */
export const DEFAULTS = {
  concurrency: 10,
  durationMs: 30_000,
  promptWords: 32,
  maxTokens: 64,
  /** Open loop: most requests in flight, one connection each. */
  connections: 4096,
  seed: 1,
};

/** A load test as given: the model, and whatever departs from the defaults. */
export interface LoadPlanInput {
  model: string;
  /** The apis and their weights (default chat only). */
  mix?: MixEntry[] | undefined;
  /** Stream answers (default true; embeddings never stream). */
  stream?: boolean | undefined;
  /** Closed loop: requests in flight (default 10 without `rate`). */
  concurrency?: number | undefined;
  /** Open loop: arrivals per second. */
  rate?: number | undefined;
  arrival?: Arrival | undefined;
  /** Length of each step (default 30 s unless `requests` is given). */
  durationMs?: number | undefined;
  requests?: number | undefined;
  sweep?: { parameter: 'concurrency' | 'rate'; values: number[] } | undefined;
  /** Requests sent first and left out of every figure. */
  warmup?: number | undefined;
  /** Closed loop: the virtual users start evenly over this long. */
  rampUpMs?: number | undefined;
  /** Open loop: most requests in flight (connections); later arrivals wait for one. */
  connections?: number | undefined;
  /** The prompts (default: generated ones of `promptWords` words). */
  prompts?: Prompt[] | undefined;
  promptWords?: number | undefined;
  /** Where the prompts came from, as the report says it. */
  promptSource?: string | undefined;
  maxTokens?: number | undefined;
  /** The pass mark, e.g. `ttft.p95<800ms,errors<1%`. */
  slo?: Expr | string | undefined;
  /** An early end, e.g. `errors>5%` or `saturation`. */
  stopOn?: Expr | string | undefined;
  seed?: number | undefined;
  /**
   * This machine's part of a run driven from n machines: the open loop sends every n-th arrival of the one seeded
   * schedule (from arrival k − 1), the closed loop ⌊c/n⌋ of the users (one more on the first c mod n shards) and
   * its share of `requests` the same way. Each shard's report records it, so `gw load merge` joins the shards.
   */
  shard?: Shard | undefined;
  /**
   * Unix time (ms) at which the run sends its first request: every shard given the same instant starts together
   * without talking to the others. The report records how late this machine started.
   */
  startAt?: number | undefined;
  /** The operator's prices (`--prices`): every step's report then has its spend. */
  prices?: PriceTable | undefined;
  /**
   * `--budget` (needs `prices`): the cap per currency on the spend of the whole run, warm-up included. A request is
   * sent only when its upper bound at the prices fits; the run stops (`stopped: "budget"`) when one never will.
   */
  budgets?: ReadonlyMap<Currency, number> | undefined;
}

/** A plan with every default filled in. */
export interface LoadPlan {
  model: string;
  mix: MixEntry[];
  stream: boolean;
  mode: 'closed' | 'open';
  concurrency?: number;
  rate?: number;
  arrival: Arrival;
  durationMs?: number;
  requests?: number;
  sweep?: { parameter: 'concurrency' | 'rate'; values: number[] };
  warmup: number;
  rampUpMs?: number;
  connections: number;
  prompts: Prompt[];
  promptSource: string;
  maxTokens: number;
  slo?: Expr;
  stopOn?: Expr;
  seed: number;
  shard?: Shard;
  startAt?: number;
  prices?: PriceTable;
  budgets?: ReadonlyMap<Currency, number>;
}

/** Fills the defaults of a plan. */
export function resolvePlan(p: LoadPlanInput): LoadPlan {
  const open = p.rate !== undefined || p.sweep?.parameter === 'rate';
  const words = p.promptWords ?? DEFAULTS.promptWords;
  const plan: LoadPlan = {
    model: p.model,
    mix: p.mix ?? [{ api: 'chat', weight: 1 }],
    stream: p.stream ?? true,
    mode: open ? 'open' : 'closed',
    arrival: p.arrival ?? { kind: 'poisson' },
    warmup: p.warmup ?? 0,
    connections: p.connections ?? DEFAULTS.connections,
    prompts: p.prompts ?? generatedPrompts(words),
    promptSource: p.promptSource ?? (p.prompts !== undefined ? 'given' : `${words} generated words`),
    maxTokens: p.maxTokens ?? DEFAULTS.maxTokens,
    seed: p.seed ?? DEFAULTS.seed,
  };
  if (!open) plan.concurrency = p.concurrency ?? DEFAULTS.concurrency;
  if (p.rate !== undefined) plan.rate = p.rate;
  if (p.rampUpMs !== undefined && p.rampUpMs > 0) plan.rampUpMs = p.rampUpMs;
  if (p.requests !== undefined) plan.requests = p.requests;
  else plan.durationMs = p.durationMs ?? DEFAULTS.durationMs;
  if (p.sweep !== undefined) plan.sweep = p.sweep;
  const slo = typeof p.slo === 'string' ? parseExpr(p.slo, '--slo') : p.slo;
  const stopOn = typeof p.stopOn === 'string' ? parseExpr(p.stopOn, '--stop-on') : p.stopOn;
  if (slo !== undefined) plan.slo = slo;
  if (stopOn !== undefined) plan.stopOn = stopOn;
  if (p.shard !== undefined) plan.shard = { k: p.shard.k, n: p.shard.n };
  if (p.startAt !== undefined) plan.startAt = p.startAt;
  if (p.prices !== undefined) plan.prices = p.prices;
  if (p.budgets !== undefined) {
    if (p.prices === undefined)
      throw new UsageError('--budget: text requests are priced only at --prices <prices.json>', {
        field: '--budget',
      });
    plan.budgets = p.budgets;
  }
  checkShares(plan);
  return plan;
}

/** Shard k's part of `total` split over n: ⌊total/n⌋, one more for the first total mod n shards. */
export function shareOf(total: number, shard: Shard | undefined): number {
  if (shard === undefined) return total;
  return Math.floor(total / shard.n) + (shard.k <= total % shard.n ? 1 : 0);
}

/** A closed loop split over n shards needs a user (and a request) on each: exit 2 otherwise, nothing sent. */
function checkShares(plan: LoadPlan): void {
  const s = plan.shard;
  if (s === undefined || plan.mode !== 'closed') return;
  const users = plan.sweep?.values ?? [plan.concurrency ?? DEFAULTS.concurrency];
  const few = users.find((c) => c < s.n);
  if (few !== undefined) {
    throw new UsageError(`--concurrency: ${few} users cannot be split into ${s.n} shards (each needs one)`, {
      field: plan.sweep !== undefined ? '--sweep' : '--concurrency',
    });
  }
  if (plan.requests !== undefined && plan.requests < s.n) {
    throw new UsageError(`--requests: ${plan.requests} requests cannot be split into ${s.n} shards`, {
      field: '--requests',
    });
  }
}
