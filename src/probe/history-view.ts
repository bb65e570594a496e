/**
 * `gw probe history`: uptime per gateway, check and model over 5m / 1h / 1d / 7d, latency percentiles, and what
 * changed between the last two runs of each gateway (a model that appeared or vanished, a check that started or
 * stopped failing). Two gateways are never averaged together, and two runs are compared like with like: a cell
 * only when both ran it, a model as appeared or vanished only when both runs asked for the same.
 */
import type { HistoryCheck, HistoryRun } from './history.js';
import { sameAsk } from './runner.js';

/** The uptime windows, ms. */
export const WINDOWS: ReadonlyArray<readonly [string, number]> = [
  ['5m', 5 * 60_000],
  ['1h', 3_600_000],
  ['1d', 86_400_000],
  ['7d', 7 * 86_400_000],
];

/** One check and model of one gateway over the runs. */
export interface SeriesSummary {
  gateway: string;
  check: string;
  model: string;
  /** Runs in which it ran (skips excluded), within --since. */
  runs: number;
  /** Share of runs that passed or warned, per window (null: no run in that window). */
  uptime: Record<string, number | null>;
  latencyMs: { p50: number; p90: number; p99: number; max: number } | null;
  ttftMs: { p50: number; p90: number; p99: number; max: number } | null;
  last: { at: string; status: string; error?: string; class?: string };
  /** Consecutive failures up to the last run. */
  failingFor: number;
  /** Every run (for uptime bars): [time ms, status, latency ms or null]. */
  points: Array<[number, string, number | null]>;
}

/** A change between the last two runs of a gateway. */
export interface HistoryChange {
  kind: 'appeared' | 'vanished' | 'started-failing' | 'stopped-failing';
  gateway: string;
  check: string;
  model: string;
  detail: string;
}

/** What `gw probe history --json` prints. */
export interface HistoryView {
  generatedAt: string;
  since: string | null;
  filters: { check?: string; model?: string; gateway?: string };
  /** Every run within --since: its gateway, start, duration, and the outcome counts. */
  runs: Array<{
    gateway: string;
    at: string;
    durationMs: number;
    ok: boolean;
    passed: number;
    failed: number;
    warned: number;
  }>;
  series: SeriesSummary[];
  /** Between the last run of each gateway and the one before it. */
  changes: HistoryChange[];
  /** Every change between consecutive runs of a gateway within --since (markers on a timeline; the latest 1 000). */
  markers: Array<HistoryChange & { at: string }>;
}

/** Most markers a view carries. */
export const MAX_MARKERS = 1000;

/** The nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

function spread(values: number[]): SeriesSummary['latencyMs'] {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  return {
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s[s.length - 1] as number,
  };
}

const up = (s: string): boolean => s === 'pass' || s === 'warn';
const keyOf = (c: HistoryCheck): string => `${c.c}\u0000${c.m}`;

/** The runs of each gateway, oldest first, in the order gateways first appear. */
function byGateway(runs: readonly HistoryRun[]): Map<string, HistoryRun[]> {
  const out = new Map<string, HistoryRun[]>();
  for (const r of runs) {
    let list = out.get(r.gateway);
    if (list === undefined) out.set(r.gateway, (list = []));
    list.push(r);
  }
  return out;
}

/** One gateway's series being gathered: every run's record of one check and model. */
interface Gathered {
  gateway: string;
  check: string;
  model: string;
  items: Array<[number, HistoryCheck]>;
}

/** The summary of one gathered series at `now`. */
function summarizeSeries(s: Gathered, now: number): SeriesSummary {
  const ran = s.items.filter(([, c]) => c.s !== 'skip');
  const uptime: Record<string, number | null> = {};
  for (const [name, ms] of WINDOWS) {
    const w = ran.filter(([t]) => t >= now - ms);
    uptime[name] = w.length === 0 ? null : w.filter(([, c]) => up(c.s)).length / w.length;
  }
  const lastItem = s.items[s.items.length - 1] as [number, HistoryCheck];
  let failingFor = 0;
  for (let i = ran.length - 1; i >= 0 && (ran[i] as [number, HistoryCheck])[1].s === 'fail'; i--)
    failingFor++;
  const last: SeriesSummary['last'] = { at: new Date(lastItem[0]).toISOString(), status: lastItem[1].s };
  if (lastItem[1].e !== undefined) last.error = lastItem[1].e;
  if (lastItem[1].k !== undefined) last.class = lastItem[1].k;
  return {
    gateway: s.gateway,
    check: s.check,
    model: s.model,
    runs: ran.length,
    uptime,
    latencyMs: spread(ran.filter(([, c]) => up(c.s) && c.l !== undefined).map(([, c]) => c.l as number)),
    ttftMs: spread(ran.filter(([, c]) => c.t !== undefined).map(([, c]) => c.t as number)),
    last,
    failingFor,
    points: s.items.map(([t, c]) => [t, c.s, c.l ?? null]),
  };
}

/** A gateway URL as the history compares it: no trailing slash or `/v1`. */
export function gatewayKey(url: string): string {
  return url.trim().replace(/\/+$/, '').replace(/\/v1$/, '').replace(/\/+$/, '');
}

/** Builds the view of `runs` (oldest first) at `now`. */
export function viewHistory(
  all: readonly HistoryRun[],
  o: {
    now: number;
    sinceMs?: number | undefined;
    check?: string | undefined;
    model?: string | undefined;
    gateway?: string | undefined;
  },
): HistoryView {
  const from = o.sinceMs !== undefined ? o.now - o.sinceMs : -Infinity;
  const keep = (c: HistoryCheck): boolean =>
    (o.check === undefined || c.c === o.check) && (o.model === undefined || c.m === o.model);
  const wanted = o.gateway !== undefined ? gatewayKey(o.gateway) : undefined;
  const runs = wanted !== undefined ? all.filter((r) => gatewayKey(r.gateway) === wanted) : all;
  const within = runs.filter((r) => Date.parse(r.at) >= from);
  const series = new Map<string, Gathered>();
  for (const r of within) {
    const t = Date.parse(r.at);
    for (const c of r.checks) {
      if (!keep(c)) continue;
      const k = `${r.gateway}\u0000${keyOf(c)}`;
      let s = series.get(k);
      if (s === undefined) series.set(k, (s = { gateway: r.gateway, check: c.c, model: c.m, items: [] }));
      s.items.push([t, c]);
    }
  }
  const out = [...series.values()].map((s) => summarizeSeries(s, o.now));
  out.sort(
    (a, b) =>
      a.gateway.localeCompare(b.gateway) || a.check.localeCompare(b.check) || a.model.localeCompare(b.model),
  );
  const gateways = byGateway(runs);
  return {
    generatedAt: new Date(o.now).toISOString(),
    since: o.sinceMs !== undefined ? new Date(from).toISOString() : null,
    filters: {
      ...(o.check !== undefined ? { check: o.check } : {}),
      ...(o.model !== undefined ? { model: o.model } : {}),
      ...(wanted !== undefined ? { gateway: wanted } : {}),
    },
    runs: within.map((r) => ({
      gateway: r.gateway,
      at: r.at,
      durationMs: r.d,
      ok: r.ok,
      passed: r.checks.filter((c) => c.s === 'pass').length,
      failed: r.checks.filter((c) => c.s === 'fail').length,
      warned: r.checks.filter((c) => c.s === 'warn').length,
    })),
    series: out,
    changes: [...gateways.values()].flatMap((list) =>
      changesBetween(previousOf(list, list.length - 1), list.at(-1), keep),
    ),
    markers: markersOf(gateways, from, keep),
  };
}

/**
 * The run a gateway's run `i` is compared with: its latest earlier run that asked the same, else the run just
 * before it (then only cells both ran are compared).
 */
function previousOf(runs: readonly HistoryRun[], i: number): HistoryRun | undefined {
  const run = runs[i];
  for (let j = i - 1; j >= 0; j--) if (sameAsk(runs[j]?.asked, run?.asked)) return runs[j];
  return runs[i - 1];
}

/** The changes between each run within the window and its gateway's run before it, by time, at most MAX_MARKERS. */
function markersOf(
  gateways: ReadonlyMap<string, readonly HistoryRun[]>,
  from: number,
  keep: (c: HistoryCheck) => boolean,
): HistoryView['markers'] {
  const out: HistoryView['markers'] = [];
  for (const runs of gateways.values()) {
    for (let i = 1; i < runs.length; i++) {
      const run = runs[i] as HistoryRun;
      if (Date.parse(run.at) < from) continue;
      for (const c of changesBetween(previousOf(runs, i), run, keep)) out.push({ ...c, at: run.at });
    }
  }
  out.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  return out.slice(-MAX_MARKERS);
}

/**
 * What changed from `prev` to `last` (two runs of one gateway). A cell is compared only when both runs ran it (a
 * skip is no verdict); a model counts as appeared or vanished only when both runs asked for the same, so a run
 * that merely asked for other checks or kinds makes no model appear or vanish.
 */
export function changesBetween(
  prev: HistoryRun | undefined,
  last: HistoryRun | undefined,
  keep: (c: HistoryCheck) => boolean = () => true,
): HistoryChange[] {
  if (prev === undefined || last === undefined) return [];
  const gateway = last.gateway;
  const before = new Map(prev.checks.filter(keep).map((c) => [keyOf(c), c]));
  const after = new Map(last.checks.filter(keep).map((c) => [keyOf(c), c]));
  const out: HistoryChange[] = [];
  for (const [k, c] of after) {
    const b = before.get(k);
    if (b === undefined || b.s === 'skip' || c.s === 'skip') continue;
    if (b.s !== 'fail' && c.s === 'fail') {
      const detail = `${c.c} ${c.m} started failing${c.e !== undefined ? ` (${c.e})` : ''}`;
      out.push({ kind: 'started-failing', gateway, check: c.c, model: c.m, detail });
    } else if (b.s === 'fail' && up(c.s)) {
      out.push({
        kind: 'stopped-failing',
        gateway,
        check: c.c,
        model: c.m,
        detail: `${c.c} ${c.m} recovered`,
      });
    }
  }
  if (!sameAsk(prev.asked, last.asked)) return out;
  const modelsOf = (r: HistoryRun): Map<string, HistoryCheck> =>
    new Map(r.checks.filter((c) => c.m !== '' && keep(c)).map((c) => [c.m, c]));
  const [had, has] = [modelsOf(prev), modelsOf(last)];
  // One appeared/vanished line per model, not per check of it.
  for (const [m, c] of has) {
    if (!had.has(m)) out.push({ kind: 'appeared', gateway, check: c.c, model: m, detail: `${m} appeared` });
  }
  for (const [m, c] of had) {
    if (!has.has(m)) out.push({ kind: 'vanished', gateway, check: c.c, model: m, detail: `${m} vanished` });
  }
  return out;
}
