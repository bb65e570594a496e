/**
 * Figures per api and model (a replay sends many of each): counts and the end-to-end, time-to-first-token and
 * schedule-lag histograms of every (api, model) pair, stored encoded so merged shards add up exactly. The pairs
 * are bounded: past MAX_GROUPS, requests count under `other`, so a trace naming a million models costs no more.
 */
import { addSpend } from '../contract/prices.js';
import type { Outcome } from './exchange.js';
import { LatencyHistogram } from './histogram.js';
import type { Amounts, ApiModelFigures } from './schema.js';
import { addAmounts } from './spend.js';

/** Most (api, model) pairs kept apart. */
export const MAX_GROUPS = 64;
const GROUP_METRICS = ['e2e', 'ttft', 'lag'] as const;
type GroupMetric = (typeof GROUP_METRICS)[number];

interface Group {
  api: string;
  model: string;
  requests: number;
  ok: number;
  errors: number;
  hist: Record<GroupMetric, LatencyHistogram>;
  /** --prices: the pair's spend per currency (undefined without --prices). */
  spend: Amounts | undefined;
}

function newGroup(api: string, model: string): Group {
  const hist = {} as Record<GroupMetric, LatencyHistogram>;
  for (const m of GROUP_METRICS) hist[m] = new LatencyHistogram();
  return { api, model, requests: 0, ok: 0, errors: 0, hist, spend: undefined };
}

/** The figures of one group as the report stores them. */
function figuresOf(g: Group): ApiModelFigures {
  const latency = {} as ApiModelFigures['latency_ms'];
  const histograms = {} as ApiModelFigures['histograms'];
  for (const m of GROUP_METRICS) {
    latency[m] = g.hist[m].summary();
    histograms[m] = g.hist[m].encode();
  }
  return {
    api: g.api,
    model: g.model,
    requests: g.requests,
    ok: g.ok,
    errors: g.errors,
    latency_ms: latency,
    histograms,
    ...(g.spend !== undefined ? { spend: { ...g.spend } } : {}),
  };
}

/** Counts finished requests by api and model. */
export class ApiModelGroups {
  readonly #groups = new Map<string, Group>();

  /** `priced`: the run has --prices (each outcome's `spend` is then set by the recorder, before this). */
  constructor(readonly priced = false) {}

  add(o: Outcome, model: string): void {
    if (o.cancelled === true) return;
    let key = `${o.api} ${model}`;
    let g = this.#groups.get(key);
    if (g === undefined) {
      if (this.#groups.size >= MAX_GROUPS) key = `${o.api} other`;
      g = this.#groups.get(key) ?? newGroup(o.api, this.#groups.size >= MAX_GROUPS ? 'other' : model);
      this.#groups.set(key, g);
    }
    g.requests++;
    g.hist.lag.recordMs(o.lagMs);
    if (this.priced) {
      g.spend ??= {};
      if (o.spend !== undefined) addSpend(g.spend, o.spend);
    }
    if (!o.ok) {
      g.errors++;
      return;
    }
    g.ok++;
    g.hist.e2e.recordMs(o.e2eMs);
    if (o.ttftMs !== undefined) g.hist.ttft.recordMs(o.ttftMs);
  }

  /** The report's `by_api_model` (keys `<api> <model>`, sorted). */
  report(): Record<string, ApiModelFigures> {
    const keys = [...this.#groups.keys()].sort();
    return Object.fromEntries(keys.map((k) => [k, figuresOf(this.#groups.get(k) as Group)]));
  }
}

/** The `by_api_model` of several reports of one run (shards, machines): counts add, histograms add bucket-wise. */
export function mergeGroups(
  parts: ReadonlyArray<Record<string, ApiModelFigures> | undefined>,
): Record<string, ApiModelFigures> | undefined {
  if (parts.every((p) => p === undefined)) return undefined;
  const groups = new Map<string, Group>();
  for (const p of parts) {
    for (const [key, f] of Object.entries(p ?? {})) {
      let g = groups.get(key);
      if (g === undefined) groups.set(key, (g = newGroup(f.api, f.model)));
      g.requests += f.requests;
      g.ok += f.ok;
      g.errors += f.errors;
      if (f.spend !== undefined) addAmounts((g.spend ??= {}), f.spend);
      for (const m of GROUP_METRICS) g.hist[m].add(LatencyHistogram.decode(f.histograms[m]));
    }
  }
  const keys = [...groups.keys()].sort();
  return Object.fromEntries(keys.map((k) => [k, figuresOf(groups.get(k) as Group)]));
}
