/**
 * `gw probe history --html`: uptime bars over time per check and model (each run a segment, patterned by its
 * result), the changes between the last two runs as flags, latency over time, and the summary table.
 */
import {
  failureBars,
  lineChart,
  timeline,
  type LineSeries,
  type StateStyle,
  type TimelineRow,
} from './charts.js';
import { figures, page, safeUrl, section, table, utc, type ReportMeta } from './page.js';
import { ms, pct } from './svg.js';
import type { HistoryView } from '../probe/history-view.js';

const STATES: StateStyle[] = [
  { id: 'pass', label: 'passed', tone: 2, pattern: 'solid' },
  { id: 'warn', label: 'degraded (warn)', tone: 3, pattern: 'dots' },
  { id: 'fail', label: 'failed', tone: 1, pattern: 'hatch' },
  { id: 'skip', label: 'skipped', tone: 7, pattern: 'none' },
];

/** Most rows the charts draw (the table lists every series). */
const MAX_ROWS = 40;
const MAX_LINES = 6;

/** Whether the view holds runs of more than one gateway (then every label names its gateway). */
function several(h: HistoryView): boolean {
  return new Set(h.series.map((s) => s.gateway)).size > 1;
}

function name(s: { check: string; model: string; gateway?: string }, withGateway = false): string {
  const what = s.model ? `${s.check} · ${s.model}` : s.check;
  return withGateway && s.gateway !== undefined ? `${safeUrl(s.gateway)} · ${what}` : what;
}

/** The widest uptime window that has runs, e.g. `1h 98.5%`. */
function uptimeNote(u: Record<string, number | null>): string {
  const entries = Object.entries(u).filter((e): e is [string, number] => e[1] !== null);
  const last = entries[entries.length - 1];
  return last ? `${last[0]} ${pct(last[1])}` : '';
}

/**
 * Segments of one series: each run lasts until the next run (the last one as long as the median gap, but never
 * past `now`, when the view was made).
 */
function segments(points: readonly [number, string, number | null][], now: number): TimelineRow['segments'] {
  const sorted = [...points].sort((a, b) => a[0] - b[0]);
  const gaps = sorted.slice(1).map((p, i) => p[0] - (sorted[i] as [number, string, number | null])[0]);
  const median = gaps.length
    ? ([...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] as number)
    : 60_000;
  return sorted.map((p, i) => {
    const next = sorted[i + 1];
    // A gap far longer than usual (the prober was off) is left empty instead of stretching the run over it.
    const end = next !== undefined && next[0] - p[0] <= 3 * median ? next[0] : p[0] + median;
    return { start: p[0], end: Math.max(p[0], Math.min(end, now)), state: p[1] };
  });
}

/** Uptime bars per check and model, the changes of the last run flagged. */
function uptimeChart(h: HistoryView, now: number): string {
  const rows = h.series.slice(0, MAX_ROWS).map((s): TimelineRow => ({
    label: name(s, several(h)),
    note: uptimeNote(s.uptime),
    segments: segments(s.points, now),
  }));
  if (rows.length === 0) return '';
  const lastRun = h.runs[h.runs.length - 1];
  const lastAt = lastRun ? Date.parse(lastRun.at) : undefined;
  const marks =
    lastAt !== undefined && h.changes.length > 0
      ? [
          {
            x: lastAt,
            label:
              h.changes.length === 1
                ? `${h.changes[0]?.kind}: ${name(h.changes[0] as HistoryView['changes'][number], several(h))}`
                : `${h.changes.length} changes`,
          },
        ]
      : [];
  return timeline({
    id: 'history-uptime',
    title: 'Uptime over time',
    description: `One bar per check and model; each run is a segment until the next run. At the right: uptime over the longest window with runs.${h.series.length > MAX_ROWS ? ` The first ${MAX_ROWS} of ${h.series.length} are drawn; the table lists all.` : ''}`,
    x: { label: 'time (UTC)', time: true, max: now },
    states: STATES,
    rows,
    marks,
  });
}

/**
 * Latency over time of the series that ran most (lines beyond a handful stop being readable): small multiples on
 * one time axis (to "Made"), each on its own latency scale (on a shared one a fast check, the model list, was a
 * flat line at zero under the slow ones). Returns the charts and how many series they draw.
 */
function latencyCharts(h: HistoryView, now: number): { svg: string; drawn: number } {
  const busiest = [...h.series]
    .filter((s) => s.points.some((p) => p[2] !== null))
    .sort((a, b) => b.runs - a.runs)
    .slice(0, MAX_LINES);
  const lines: LineSeries[] = busiest.map((s) => ({
    name: name(s, several(h)),
    points: s.points
      .filter((p): p is [number, string, number] => p[2] !== null)
      .map((p) => [p[0], p[2]] as const),
    markers: 'sparse',
  }));
  const allX = lines.flatMap((l) => l.points.map((p) => p[0]));
  const xDomain = allX.length ? { min: Math.min(...allX), max: now } : {};
  const svg = lines
    .map((l, i) => {
      const s = busiest[i] as HistoryView['series'][number];
      return lineChart({
        id: `history-latency-${i}`,
        title: l.name,
        description: s.latencyMs
          ? `p50 ${ms(s.latencyMs.p50)}, p90 ${ms(s.latencyMs.p90)}, p99 ${ms(s.latencyMs.p99)} over ${s.runs} runs.`
          : `${s.runs} runs.`,
        x: { label: 'time (UTC)', time: true, ...xDomain },
        y: { label: 'latency', format: ms, min: 0 },
        series: [{ ...l, markers: 'none' }],
        ...(s.latencyMs ? { yRules: [{ value: s.latencyMs.p50, label: `p50 ${ms(s.latencyMs.p50)}` }] } : {}),
        height: 170,
      });
    })
    .join('');
  return { svg, drawn: lines.length };
}

/** Checks whose last run failed, by error code. */
function failuresChart(failingNow: HistoryView['series']): string {
  const codes = new Map<string, number>();
  for (const s of failingNow) {
    const code = s.last.error ?? s.last.class ?? 'failed';
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  return failureBars({
    id: 'history-failures',
    title: 'Failing now, by error',
    description: 'Checks whose last run failed, by error code.',
    x: { label: 'checks' },
    counts: codes,
  });
}

/** The table: one row per check and model. */
function seriesTable(h: HistoryView): string {
  const windows = Object.keys(h.series[0]?.uptime ?? {});
  return table({
    head: [
      'gateway',
      'check',
      'model',
      'runs',
      ...windows.map((w) => `up ${w}`),
      'p50',
      'p90',
      'p99',
      'last',
    ],
    numeric: [3, ...windows.map((_, i) => 4 + i), 4 + windows.length, 5 + windows.length, 6 + windows.length],
    nowrap: [1, 2],
    rows: h.series.map((s) => [
      safeUrl(s.gateway),
      s.check,
      s.model,
      s.runs,
      ...windows.map((w) => (s.uptime[w] === null || s.uptime[w] === undefined ? '–' : pct(s.uptime[w]))),
      s.latencyMs ? ms(s.latencyMs.p50) : '–',
      s.latencyMs ? ms(s.latencyMs.p90) : '–',
      s.latencyMs ? ms(s.latencyMs.p99) : '–',
      `${s.last.status}${s.last.error ? ` (${s.last.error})` : ''}${s.failingFor > 1 ? ` ×${s.failingFor}` : ''}`,
    ]),
    rowClass: h.series.map((s) =>
      s.last.status === 'fail' ? 'fail' : s.last.status === 'warn' ? 'warn' : undefined,
    ),
  });
}

/** The report's HTML. */
export function historyHtml(h: HistoryView, meta: ReportMeta): string {
  const lastRun = h.runs[h.runs.length - 1];
  // The view's own now: every time axis ends there ("Made"), the last run's segment included.
  const now = Date.parse(h.generatedAt);
  const failingNow = h.series.filter((s) => s.last.status === 'fail');
  const verdict =
    h.runs.length === 0
      ? { text: 'No probe runs recorded yet', tone: 'warn' as const }
      : failingNow.length > 0
        ? {
            text: `FAILING: ${failingNow.length} of ${h.series.length} checks failed in the last run`,
            tone: 'bad' as const,
          }
        : { text: `OK: every check passed in the last run`, tone: 'ok' as const };
  const uptime = uptimeChart(h, now);
  const latency = latencyCharts(h, now);
  const failures = failuresChart(failingNow);
  const body =
    figures([
      { label: 'runs', value: String(h.runs.length) },
      { label: 'cells (gateway × check × model)', value: String(h.series.length) },
      {
        label: 'failing now',
        value: String(failingNow.length),
        ...(failingNow.length ? { tone: 'bad' as const } : {}),
      },
      {
        label: 'changes in last run',
        value: String(h.changes.length),
        ...(h.changes.length ? { tone: 'warn' as const } : {}),
      },
    ]) +
    section('Uptime', uptime || '<p class="lead">No runs in this window.</p>') +
    (h.changes.length > 0
      ? section(
          'What changed since the previous run',
          table({
            head: ['gateway', 'change', 'check', 'model', 'detail'],
            rows: h.changes.map((c) => [safeUrl(c.gateway), c.kind, c.check, c.model, c.detail]),
            nowrap: [1, 2],
          }),
        )
      : '') +
    (latency.svg
      ? section(
          'Latency over time',
          latency.svg,
          `Each run's latency, per check and model, each on its own scale${h.series.length > latency.drawn ? ` (the ${latency.drawn} with the most runs)` : ''}; the dashed line is the median.`,
        )
      : '') +
    (failures ? section('Failures', failures) : '') +
    section('Per gateway, check and model', seriesTable(h));
  return page({
    title: 'gw probe history',
    meta,
    verdict,
    extraMeta: [
      ...(h.since !== null ? [{ label: 'Since', value: utc(h.since) }] : []),
      ...(lastRun ? [{ label: 'Last run', value: utc(lastRun.at) }] : []),
      ...(h.filters.check ? [{ label: 'Check', value: h.filters.check }] : []),
      ...(h.filters.model ? [{ label: 'Model', value: h.filters.model }] : []),
      ...(h.filters.gateway ? [{ label: 'Gateway', value: safeUrl(h.filters.gateway) }] : []),
    ],
    body,
  });
}
