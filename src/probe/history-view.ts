/**
 * `gw probe history`: uptime per check and model over 5m / 1h / 1d / 7d, latency percentiles, and what changed
 * between the last two runs (a model that appeared or vanished, a check that started or stopped failing).
 */
import type { HistoryCheck, HistoryRun } from './history.js';

/** The uptime windows, ms. */
export const WINDOWS: ReadonlyArray<readonly [string, number]> = [
  ['5m', 5 * 60_000],
  ['1h', 3_600_000],
  ['1d', 86_400_000],
  ['7d', 7 * 86_400_000],
];

/** One check and model over the runs. */
export interface SeriesSummary {
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

/** A change between the last two runs. */
export interface HistoryChange {
  kind: 'appeared' | 'vanished' | 'started-failing' | 'stopped-failing';
  check: string;
  model: string;
  detail: string;
}

/** What `gw probe history --json` prints. */
export interface HistoryView {
  generatedAt: string;
  since: string | null;
  filters: { check?: string; model?: string };
  /** Every run within --since: start, duration, and the outcome counts. */
  runs: Array<{
    at: string;
    durationMs: number;
    ok: boolean;
    passed: number;
    failed: number;
    warned: number;
  }>;
  series: SeriesSummary[];
  /** Between the last run and the one before it. */
  changes: HistoryChange[];
  /** Every change between consecutive runs within --since (markers on a timeline; the latest 1 000). */
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

/** Builds the view of `runs` (oldest first) at `now`. */
export function viewHistory(
  runs: readonly HistoryRun[],
  o: { now: number; sinceMs?: number | undefined; check?: string | undefined; model?: string | undefined },
): HistoryView {
  const from = o.sinceMs !== undefined ? o.now - o.sinceMs : -Infinity;
  const keep = (c: HistoryCheck): boolean =>
    (o.check === undefined || c.c === o.check) && (o.model === undefined || c.m === o.model);
  const within = runs.filter((r) => Date.parse(r.at) >= from);
  const series = new Map<string, { check: string; model: string; items: Array<[number, HistoryCheck]> }>();
  for (const r of within) {
    const t = Date.parse(r.at);
    for (const c of r.checks) {
      if (!keep(c)) continue;
      const k = keyOf(c);
      let s = series.get(k);
      if (s === undefined) series.set(k, (s = { check: c.c, model: c.m, items: [] }));
      s.items.push([t, c]);
    }
  }
  const out: SeriesSummary[] = [];
  for (const s of series.values()) {
    const ran = s.items.filter(([, c]) => c.s !== 'skip');
    const uptime: Record<string, number | null> = {};
    for (const [name, ms] of WINDOWS) {
      const w = ran.filter(([t]) => t >= o.now - ms);
      uptime[name] = w.length === 0 ? null : w.filter(([, c]) => up(c.s)).length / w.length;
    }
    const lastItem = s.items[s.items.length - 1] as [number, HistoryCheck];
    let failingFor = 0;
    for (let i = ran.length - 1; i >= 0 && (ran[i] as [number, HistoryCheck])[1].s === 'fail'; i--)
      failingFor++;
    const last: SeriesSummary['last'] = { at: new Date(lastItem[0]).toISOString(), status: lastItem[1].s };
    if (lastItem[1].e !== undefined) last.error = lastItem[1].e;
    if (lastItem[1].k !== undefined) last.class = lastItem[1].k;
    out.push({
      check: s.check,
      model: s.model,
      runs: ran.length,
      uptime,
      latencyMs: spread(ran.filter(([, c]) => up(c.s) && c.l !== undefined).map(([, c]) => c.l as number)),
      ttftMs: spread(ran.filter(([, c]) => c.t !== undefined).map(([, c]) => c.t as number)),
      last,
      failingFor,
      points: s.items.map(([t, c]) => [t, c.s, c.l ?? null]),
    });
  }
  out.sort((a, b) => a.check.localeCompare(b.check) || a.model.localeCompare(b.model));
  return {
    generatedAt: new Date(o.now).toISOString(),
    since: o.sinceMs !== undefined ? new Date(from).toISOString() : null,
    filters: {
      ...(o.check !== undefined ? { check: o.check } : {}),
      ...(o.model !== undefined ? { model: o.model } : {}),
    },
    runs: within.map((r) => ({
      at: r.at,
      durationMs: r.d,
      ok: r.ok,
      passed: r.checks.filter((c) => c.s === 'pass').length,
      failed: r.checks.filter((c) => c.s === 'fail').length,
      warned: r.checks.filter((c) => c.s === 'warn').length,
    })),
    series: out,
    changes: changesBetween(runs.at(-2), runs.at(-1), keep),
    markers: markersOf(runs, from, keep),
  };
}

/** The changes between each run within the window and the run before it, newest last, at most MAX_MARKERS. */
function markersOf(
  runs: readonly HistoryRun[],
  from: number,
  keep: (c: HistoryCheck) => boolean,
): HistoryView['markers'] {
  const out: HistoryView['markers'] = [];
  for (let i = 1; i < runs.length; i++) {
    const run = runs[i] as HistoryRun;
    if (Date.parse(run.at) < from) continue;
    for (const c of changesBetween(runs[i - 1], run, keep)) out.push({ ...c, at: run.at });
  }
  return out.slice(-MAX_MARKERS);
}

/** What changed from `prev` to `last`. */
export function changesBetween(
  prev: HistoryRun | undefined,
  last: HistoryRun | undefined,
  keep: (c: HistoryCheck) => boolean = () => true,
): HistoryChange[] {
  if (prev === undefined || last === undefined) return [];
  const before = new Map(prev.checks.filter(keep).map((c) => [keyOf(c), c]));
  const after = new Map(last.checks.filter(keep).map((c) => [keyOf(c), c]));
  const out: HistoryChange[] = [];
  const modelsBefore = new Set(prev.checks.map((c) => c.m).filter((m) => m !== ''));
  const modelsAfter = new Set(last.checks.map((c) => c.m).filter((m) => m !== ''));
  for (const [k, c] of after) {
    const b = before.get(k);
    if (b === undefined) {
      if (c.m !== '' && !modelsBefore.has(c.m))
        out.push({ kind: 'appeared', check: c.c, model: c.m, detail: `${c.m} appeared` });
      continue;
    }
    if (b.s !== 'fail' && c.s === 'fail') {
      out.push({
        kind: 'started-failing',
        check: c.c,
        model: c.m,
        detail: `${c.c} ${c.m} started failing${c.e !== undefined ? ` (${c.e})` : ''}`,
      });
    } else if (b.s === 'fail' && (c.s === 'pass' || c.s === 'warn')) {
      out.push({ kind: 'stopped-failing', check: c.c, model: c.m, detail: `${c.c} ${c.m} recovered` });
    }
  }
  for (const [k, c] of before) {
    if (!after.has(k) && c.m !== '' && !modelsAfter.has(c.m)) {
      out.push({ kind: 'vanished', check: c.c, model: c.m, detail: `${c.m} vanished` });
    }
  }
  // One appeared/vanished line per model, not per check of it.
  const seen = new Set<string>();
  return out.filter((ch) => {
    if (ch.kind !== 'appeared' && ch.kind !== 'vanished') return true;
    const k = `${ch.kind}:${ch.model}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
