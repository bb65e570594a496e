/**
 * `gw load compare` and `--baseline`: a regression gate. Steps are matched by position. A latency percentile
 * (p50, p90, p95, p99 of ttft, inter-token, time per output token and end to end) regresses when the new value is
 * more than `tolerance` above the baseline's
 * (and by at least 1 ms); the error rate regresses when it rose by more than `tolerance`
 * (relative) and by at least 0.1 percentage point (so 0 % → 0.01 % from one request is not a regression).
 * A video run (`--api video`) adds its own figures, by the same rule: create, queue wait, time to completion and
 * download percentiles regress when higher (the queue wait and the completion by at least the coarser poll
 * interval of the two runs, the resolution they were measured at), download throughput (p50 and mean MB/s) when
 * lower by more than `tolerance`.
 */
import type { Summary } from './histogram.js';
import type { RunReport, StepReport, VideoFigures } from './schema.js';

/** One compared figure. */
export interface ComparisonRow {
  step: string;
  what: string;
  base: number;
  next: number;
  /** Relative change (0.12 = 12 % more); null when the baseline is 0. */
  change: number | null;
  regressed: boolean;
}

/** The verdict. */
export interface Comparison {
  tolerance: number;
  pass: boolean;
  rows: ComparisonRow[];
  regressions: ComparisonRow[];
  notes: string[];
}

const LATENCY: Array<['ttft' | 'itl' | 'tpot' | 'e2e', string]> = [
  ['ttft', 'ttft'],
  ['itl', 'itl'],
  ['tpot', 'tpot'],
  ['e2e', 'e2e'],
];
const STATS = ['p50', 'p90', 'p95', 'p99'] as const;
/** A percentile must also rise by at least this much (timer noise of sub-millisecond figures is not a regression). */
const LATENCY_FLOOR_MS = 1;
/** An error rate must rise by at least this much (absolute) to regress. */
const ERROR_FLOOR = 0.001;

/**
 * The p50…p99 rows of one latency: each regresses when it is more than `tol` above the baseline's and by at least
 * `floorMs`. Nothing when either run has no value of it.
 */
function percentileRows(
  step: string,
  what: string,
  bs: Summary,
  ns: Summary,
  tol: number,
  floorMs: number,
  rows: ComparisonRow[],
): void {
  if (bs.count === 0 || ns.count === 0) return;
  for (const s of STATS) {
    const base = bs[s];
    const next = ns[s];
    const change = base > 0 ? next / base - 1 : null;
    rows.push({
      step,
      what: `${what}.${s}`,
      base,
      next,
      change,
      regressed: change !== null && change > tol && next - base >= floorMs,
    });
  }
}

function compareStep(b: StepReport, n: StepReport, tol: number, rows: ComparisonRow[]): void {
  const step = n.label;
  for (const [m, name] of LATENCY) {
    const bs = b.latency_ms[m];
    const ns = n.latency_ms[m];
    if (bs === undefined || ns === undefined) continue;
    percentileRows(step, name, bs, ns, tol, LATENCY_FLOOR_MS, rows);
  }
  const change = b.error_rate > 0 ? n.error_rate / b.error_rate - 1 : null;
  rows.push({
    step,
    what: 'errors',
    base: b.error_rate,
    next: n.error_rate,
    change,
    regressed: n.error_rate - b.error_rate >= ERROR_FLOOR && (change === null || change > tol),
  });
}

const VIDEO_LATENCY = ['create', 'queue_wait', 'completion', 'download'] as const;

function compareVideo(
  b: VideoFigures,
  n: VideoFigures,
  step: string,
  tol: number,
  rows: ComparisonRow[],
): void {
  const polled = Math.max(b.poll_interval_ms, n.poll_interval_ms, LATENCY_FLOOR_MS);
  for (const m of VIDEO_LATENCY) {
    const bs = b.latency_ms[m];
    const ns = n.latency_ms[m];
    const floor = m === 'queue_wait' || m === 'completion' ? polled : LATENCY_FLOOR_MS;
    percentileRows(step, `video.${m}`, bs, ns, tol, floor, rows);
  }
  if (b.download_mb_per_s.count > 0 && n.download_mb_per_s.count > 0) {
    for (const s of ['p50', 'mean'] as const) {
      const base = b.download_mb_per_s[s];
      const next = n.download_mb_per_s[s];
      const change = base > 0 ? next / base - 1 : null;
      rows.push({
        step,
        what: `video.download_mb_per_s.${s}`,
        base,
        next,
        change,
        regressed: change !== null && change < -tol,
      });
    }
  }
}

/** Compares `next` against `base`. */
export function compareReports(base: RunReport, next: RunReport, tolerance: number): Comparison {
  const rows: ComparisonRow[] = [];
  const notes: string[] = [];
  const n = Math.min(base.steps.length, next.steps.length);
  if (base.steps.length !== next.steps.length) {
    notes.push(
      `the reports have ${base.steps.length} and ${next.steps.length} steps; the first ${n} are compared`,
    );
  }
  for (let i = 0; i < n; i++) {
    const b = base.steps[i] as StepReport;
    const s = next.steps[i] as StepReport;
    if (b.label !== s.label) notes.push(`step ${i + 1}: ${b.label} compared with ${s.label}`);
    compareStep(b, s, tolerance, rows);
    if (b.video !== undefined && s.video !== undefined)
      compareVideo(b.video, s.video, s.label, tolerance, rows);
    else if (b.video !== undefined || s.video !== undefined) {
      notes.push(`step ${i + 1}: only one of the reports has video figures; they are not compared`);
    }
  }
  const regressions = rows.filter((r) => r.regressed);
  return { tolerance, pass: regressions.length === 0, rows, regressions, notes };
}

/** A compared figure's value with its unit. */
export function formatFigure(what: string, v: number): string {
  if (what === 'errors') return `${(v * 100).toFixed(2)}%`;
  if (what.startsWith('video.download_mb_per_s.')) return `${v.toFixed(2)}MB/s`;
  return `${v.toFixed(2)}ms`;
}

/** The comparison as a table (a step column when several steps were compared) and its one-line verdict. */
export function comparisonTable(c: Comparison): {
  head: string[];
  rows: string[][];
  verdict: string;
} {
  const multi = new Set(c.rows.map((r) => r.step)).size > 1;
  const head = [...(multi ? ['step'] : []), 'figure', 'baseline', 'new', 'change', 'verdict'];
  const rows = c.rows.map((r) => [
    ...(multi ? [r.step] : []),
    r.what,
    formatFigure(r.what, r.base),
    formatFigure(r.what, r.next),
    r.change === null ? '-' : `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(1)}%`,
    r.regressed ? 'REGRESSED' : 'ok',
  ]);
  const tol = (c.tolerance * 100).toFixed(0);
  const verdict = c.pass
    ? `no regression beyond ${tol}%`
    : `regressed beyond ${tol}%: ${c.regressions.map((r) => `${r.what}${multi ? ` (${r.step})` : ''}`).join(', ')}`;
  return { head, rows, verdict };
}
