/**
 * `gw probe --baseline <probe.json|last>`: what changed since a previous run of the same gateway, cell by cell (a
 * cell is a check × model × stream mode: `chat-stream` of `chat-3.7-plus`). New failures, recoveries, latency
 * beyond the tolerance, and models that appeared or vanished, only between runs that asked for the same (the same
 * checks and planned models, or the same --all-models kinds, modes and skipped globs): otherwise a missing cell
 * would only mean "not asked", and the report says why nothing was compared instead.
 */
import type { HistoryRun } from './history.js';
import { askText, sameAsk, type ProbeAsk, type ProbeReport } from './runner.js';

/** How a cell changed. `known-failure`: failing then and now (not worse, so no regression). */
export type BaselineChange =
  'new-failure' | 'recovered' | 'slower' | 'known-failure' | 'appeared' | 'vanished';

/** A cell's verdict in one run. */
export interface CellState {
  status: string;
  latencyMs?: number;
  error?: string;
}

/** One changed cell. */
export interface BaselineCell {
  /** The id of its row in the report (`chat`, `chat-stream:m`); a vanished cell's as its row was named. */
  id: string;
  check: string;
  model: string;
  change: BaselineChange;
  /** Got worse: a new failure, a latency beyond the tolerance, a vanished model, a new model that fails. */
  regression: boolean;
  before?: CellState;
  after?: CellState;
  detail: string;
}

/** The diff against a baseline (`baseline` of the probe's JSON document). */
export interface BaselineDiff {
  /** The file, or `last` (the gateway's last comparable run in the probe history). */
  source: string;
  /** The baseline run's start (absent when there was none). */
  startedAt?: string;
  tolerancePct: number;
  /** A latency change smaller than this is never a regression, whatever the tolerance (LATENCY_FLOOR_MS). */
  latencyFloorMs: number;
  /** False when there was nothing to compare with; `reason` says why. */
  compared: boolean;
  reason?: string;
  /** Every cell that changed (unchanged and skipped cells are left out). */
  cells: BaselineCell[];
  summary: {
    regressions: number;
    newFailures: number;
    recovered: number;
    slower: number;
    knownFailures: number;
    appeared: number;
    vanished: number;
  };
}

/** A run to compare with: its gateway, what it asked for, and its cells. */
export interface BaselineRun {
  source: string;
  gateway: string;
  startedAt: string;
  asked?: ProbeAsk | undefined;
  cells: Map<string, CellState & { id: string; check: string; model: string }>;
}

/**
 * A latency counts as a regression only past the tolerance and by at least this much: a probe takes one sample
 * per cell, and a few milliseconds of a fast answer are noise, not a deployment's doing.
 */
export const LATENCY_FLOOR_MS = 50;

const cellKey = (check: string, model: string): string => `${check}\u0000${model}`;
const up = (s: string): boolean => s === 'pass' || s === 'warn';

/** The cells of a probe report: (check, model) of each row; a checklist row's check is its id. */
export function cellsOfReport(r: ProbeReport): BaselineRun['cells'] {
  const out: BaselineRun['cells'] = new Map();
  for (const c of r.checks) {
    const check = c.check ?? c.id;
    const model = c.model ?? '';
    out.set(cellKey(check, model), {
      id: c.id,
      check,
      model,
      status: c.status,
      latencyMs: c.latencyMs,
      ...(c.error !== undefined ? { error: c.error.code } : {}),
    });
  }
  return out;
}

/** A baseline from a probe report (a `--json` file). */
export function baselineOfReport(r: ProbeReport, source: string): BaselineRun {
  return { source, gateway: r.gateway, startedAt: r.startedAt, asked: r.asked, cells: cellsOfReport(r) };
}

/** A baseline from a run of the probe history. */
export function baselineOfHistory(run: HistoryRun, source: string): BaselineRun {
  const cells: BaselineRun['cells'] = new Map();
  for (const c of run.checks) {
    cells.set(cellKey(c.c, c.m), {
      // The history keeps no row ids: an --all-models row is `<check>:<model>`, a checklist row its check.
      id: run.asked?.mode === 'all-models' && c.m !== '' ? `${c.c}:${c.m}` : c.c,
      check: c.c,
      model: c.m,
      status: c.s,
      ...(c.l !== undefined ? { latencyMs: c.l } : {}),
      ...(c.e !== undefined ? { error: c.e } : {}),
    });
  }
  return { source, gateway: run.gateway, startedAt: run.at, asked: run.asked, cells };
}

/** Why a baseline cannot be compared with a run of `gateway` that asked `asked` (undefined: it can). */
export function incomparable(
  base: BaselineRun,
  gateway: string,
  asked: ProbeAsk | undefined,
): string | undefined {
  if (base.gateway !== gateway) return `the baseline is a run of ${base.gateway}, this run probes ${gateway}`;
  if (!sameAsk(base.asked, asked)) {
    return `the baseline asked for ${askText(base.asked)}; this run asks for ${askText(asked)}`;
  }
  return undefined;
}

/** The verdict on one cell present in both runs, or undefined when it did not change. */
function changeOf(
  b: CellState,
  a: CellState,
  tolerance: number,
): Omit<BaselineCell, 'id' | 'check' | 'model'> | undefined {
  if (b.status === 'skip' || a.status === 'skip') return undefined;
  const states = { before: b, after: a };
  if (up(b.status) && a.status === 'fail')
    return {
      change: 'new-failure',
      regression: true,
      ...states,
      detail: `failing now${a.error ? ` (${a.error})` : ''}`,
    };
  if (b.status === 'fail' && up(a.status))
    return { change: 'recovered', regression: false, ...states, detail: 'passing again' };
  if (b.status === 'fail' && a.status === 'fail')
    return { change: 'known-failure', regression: false, ...states, detail: `failing in the baseline too` };
  const [lb, la] = [b.latencyMs, a.latencyMs];
  if (lb !== undefined && la !== undefined && la > lb * (1 + tolerance) && la - lb >= LATENCY_FLOOR_MS) {
    const pct = lb > 0 ? `+${Math.round((la / lb - 1) * 100)}%` : 'slower';
    return {
      change: 'slower',
      regression: true,
      ...states,
      detail: `${Math.round(lb)}ms → ${Math.round(la)}ms (${pct}, beyond ${Math.round(tolerance * 100)}%)`,
    };
  }
  return undefined;
}

function summaryOf(cells: readonly BaselineCell[]): BaselineDiff['summary'] {
  const n = (c: BaselineChange): number => cells.filter((x) => x.change === c).length;
  return {
    regressions: cells.filter((x) => x.regression).length,
    newFailures: n('new-failure'),
    recovered: n('recovered'),
    slower: n('slower'),
    knownFailures: n('known-failure'),
    appeared: n('appeared'),
    vanished: n('vanished'),
  };
}

/** A diff that compared nothing, and why. */
export function notCompared(
  source: string,
  reason: string,
  tolerance: number,
  startedAt?: string,
): BaselineDiff {
  return {
    source,
    ...(startedAt !== undefined ? { startedAt } : {}),
    tolerancePct: Math.round(tolerance * 1000) / 10,
    latencyFloorMs: LATENCY_FLOOR_MS,
    compared: false,
    reason,
    cells: [],
    summary: summaryOf([]),
  };
}

/**
 * Compares a run with its baseline (`tolerance` a fraction: 0.2 is 20%). A model whose cells are all gone vanished
 * (a regression); cells of a model the baseline did not have appeared (a regression only when they fail).
 */
export function compareWithBaseline(base: BaselineRun, r: ProbeReport, tolerance: number): BaselineDiff {
  const why = incomparable(base, r.gateway, r.asked);
  if (why !== undefined) return notCompared(base.source, why, tolerance, base.startedAt);
  const now = cellsOfReport(r);
  const cells: BaselineCell[] = [];
  for (const [k, a] of now) {
    const b = base.cells.get(k);
    if (b === undefined) {
      if (a.status === 'skip') continue;
      const fails = a.status === 'fail';
      cells.push({
        id: a.id,
        check: a.check,
        model: a.model,
        change: 'appeared',
        regression: fails,
        after: state(a),
        detail: `not in the baseline${fails ? `; failing${a.error ? ` (${a.error})` : ''}` : ''}`,
      });
      continue;
    }
    const c = changeOf(state(b), state(a), tolerance);
    if (c !== undefined) cells.push({ id: a.id, check: a.check, model: a.model, ...c });
  }
  for (const [k, b] of base.cells) {
    if (now.has(k)) continue;
    cells.push({
      id: b.id,
      check: b.check,
      model: b.model,
      change: 'vanished',
      regression: true,
      before: state(b),
      detail: b.model !== '' ? `${b.model} is no longer listed` : 'no longer run',
    });
  }
  return {
    source: base.source,
    startedAt: base.startedAt,
    tolerancePct: Math.round(tolerance * 1000) / 10,
    latencyFloorMs: LATENCY_FLOOR_MS,
    compared: true,
    cells,
    summary: summaryOf(cells),
  };
}

function state(c: CellState): CellState {
  return {
    status: c.status,
    ...(c.latencyMs !== undefined ? { latencyMs: c.latencyMs } : {}),
    ...(c.error !== undefined ? { error: c.error } : {}),
  };
}

/** The latest run of `gateway` in the history that asked the same, or why there is none (`--baseline last`). */
export function lastComparable(
  runs: readonly HistoryRun[],
  gateway: string,
  asked: ProbeAsk | undefined,
): { run: HistoryRun } | { reason: string } {
  const mine = runs.filter((r) => r.gateway === gateway);
  if (mine.length === 0) return { reason: `no earlier run of ${gateway} in the probe history` };
  for (let i = mine.length - 1; i >= 0; i--) {
    const run = mine[i] as HistoryRun;
    if (sameAsk(run.asked, asked)) return { run };
  }
  const last = mine[mine.length - 1] as HistoryRun;
  return {
    reason: `no earlier run of ${gateway} asked for ${askText(asked)} (its last run, at ${last.at}, asked for ${askText(last.asked)})`,
  };
}

/** One line on the diff: `vs baseline (last, 2026-…): 2 regressions (1 new failure, 1 slower), 1 recovered`. */
export function baselineLine(d: BaselineDiff): string {
  const from = `${d.source}${d.startedAt !== undefined ? `, ${d.startedAt}` : ''}`;
  if (!d.compared) return `vs baseline (${from}): not compared: ${d.reason ?? 'no baseline'}`;
  const s = d.summary;
  const parts = [
    s.newFailures > 0 ? `${s.newFailures} new failure${s.newFailures === 1 ? '' : 's'}` : '',
    s.slower > 0 ? `${s.slower} slower` : '',
    s.vanished > 0 ? `${s.vanished} vanished` : '',
    s.appeared > 0 ? `${s.appeared} appeared` : '',
    s.recovered > 0 ? `${s.recovered} recovered` : '',
    s.knownFailures > 0 ? `${s.knownFailures} known failure${s.knownFailures === 1 ? '' : 's'}` : '',
  ].filter((p) => p !== '');
  const head = `${s.regressions} regression${s.regressions === 1 ? '' : 's'}`;
  return `vs baseline (${from}): ${head}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}
