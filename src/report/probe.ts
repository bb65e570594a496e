/**
 * `gw probe --html`: the verdict, each check's latency with its time to first token (and the SLO lines when the
 * run had an SLO), and the table of the terminal report. Every number comes from the `--json` document.
 */
import type { CheckRecord, ProbeReport } from '../probe/runner.js';
import { moneyText, spendText } from '../contract/prices.js';
import { barChart, type BarRow, type Rule } from './charts.js';
import { failureParts } from './failure.js';
import { figures, page, section, table, utc, type ReportMeta } from './page.js';
import { esc, ms } from './svg.js';

/** SLO bounds the run was judged against (`--slo` fail, `--warn-slo` warn), in ms, by measure (ttft, latency). */
export interface ProbeSlo {
  fail?: Record<string, number>;
  warn?: Record<string, number>;
}

/** The probe's JSON document, with the fields later probe features may add. */
export type ProbeDoc = Omit<ProbeReport, 'checks'> & {
  slo?: ProbeSlo;
  checks: (CheckRecord & { model?: string })[];
};

const RESULT: Record<CheckRecord['status'], string> = {
  pass: 'pass',
  fail: 'FAIL',
  warn: 'warn',
  skip: 'skip',
};
/** Tone and pattern per status: a failure is hatched, a warning dotted, so the chart reads without colour. */
const STYLE = {
  pass: { tone: 0, pattern: 'solid' },
  fail: { tone: 1, pattern: 'hatch' },
  warn: { tone: 3, pattern: 'dots' },
  skip: { tone: 7, pattern: 'none' },
} as const;

/** A check's row: its id (an --all-models row's id already names its model). */
function rowLabel(c: ProbeDoc['checks'][number]): string {
  return c.id;
}

/** Latency per check (TTFT inside), with the SLO bounds as rules; a bound far beyond every bar is named instead. */
function latencyChart(r: ProbeDoc): string {
  const ran = r.checks.filter((c) => c.status !== 'skip');
  // SLO bounds as rules; one far beyond every bar is named in the description instead of squashing the bars.
  const longest = Math.max(0, ...ran.map((c) => c.latencyMs));
  const bounds: Rule[] = [];
  for (const [level, word] of [
    ['fail', 'SLO'],
    ['warn', 'warn'],
  ] as const) {
    for (const [measure, value] of Object.entries(r.slo?.[level] ?? {})) {
      bounds.push({ value, label: `${word} ${measure === 'ttft' ? 'TTFT' : measure} ${ms(value)}` });
    }
  }
  const rules = bounds.filter((b) => b.value <= 3 * longest);
  const beyond = bounds.filter((b) => b.value > 3 * longest);
  const rows: BarRow[] = ran.map((c) => ({
    label: rowLabel(c),
    value: c.latencyMs,
    ...(c.ttftMs !== undefined ? { inner: c.ttftMs } : {}),
    note: `${ms(c.latencyMs)}${c.ttftMs !== undefined ? ` · TTFT ${ms(c.ttftMs)}` : ''}${c.status !== 'pass' ? ` · ${RESULT[c.status]}` : ''}`,
    ...STYLE[c.status],
  }));
  const hasTtft = ran.some((c) => c.ttftMs !== undefined);
  const statuses = [...new Set(ran.map((c) => c.status))];
  return rows.length > 0
    ? barChart({
        id: 'probe-latency',
        title: 'Latency per check',
        description: `End-to-end latency of each check${hasTtft ? '; the thin inner bar is the time to first token of streams' : ''}${rules.length ? '; dashed lines are the SLO bounds' : ''}${beyond.length ? `; beyond the chart: ${beyond.map((b) => b.label).join(', ')}` : ''}.`,
        x: { label: 'latency', format: (v) => ms(v) },
        rows,
        rules,
        keys: [
          ...statuses.map((st) => ({
            name:
              st === 'pass' ? 'latency (passed)' : st === 'fail' ? 'latency (failed)' : 'latency (warning)',
            ...STYLE[st],
          })),
          ...(hasTtft
            ? [{ name: 'time to first token', tone: 6, pattern: 'solid' as const, inner: true }]
            : []),
        ],
      })
    : '<p class="lead">No check ran.</p>';
}

/** What changed since the baseline: the figures and a table of the changed cells (or why nothing was compared). */
function baselineSection(r: ProbeDoc): string {
  const b = r.baseline;
  if (b === undefined) return '';
  const from = `${b.source}${b.startedAt !== undefined ? ` (run of ${utc(b.startedAt)})` : ''}`;
  if (!b.compared)
    return section(
      'Compared with the baseline',
      `<p class="lead">Not compared with ${esc(from)}: ${esc(b.reason ?? '')}.</p>`,
    );
  const s = b.summary;
  const state = (c?: { status: string; latencyMs?: number; error?: string }): string =>
    c === undefined
      ? ''
      : `${RESULT[c.status as CheckRecord['status']] ?? c.status}${c.latencyMs !== undefined && c.status !== 'skip' ? ` ${ms(c.latencyMs)}` : ''}${c.error ? ` (${c.error})` : ''}`;
  return section(
    'Compared with the baseline',
    figures([
      {
        label: 'regressions',
        value: String(s.regressions),
        ...(s.regressions > 0 ? { tone: 'bad' as const } : {}),
      },
      { label: 'new failures', value: String(s.newFailures) },
      { label: 'slower', value: String(s.slower) },
      { label: 'vanished', value: String(s.vanished) },
      { label: 'recovered', value: String(s.recovered), ...(s.recovered > 0 ? { tone: 'ok' as const } : {}) },
      { label: 'known failures', value: String(s.knownFailures) },
    ]) +
      (b.cells.length > 0
        ? table({
            head: ['cell', 'change', 'baseline', 'now', 'detail'],
            nowrap: [0, 1],
            rows: b.cells.map((c) => [
              c.id,
              c.regression ? c.change.toUpperCase() : c.change,
              state(c.before),
              state(c.after),
              c.detail,
            ]),
            rowClass: b.cells.map((c) => (c.regression ? 'fail' : undefined)),
          })
        : '<p class="lead">No cell changed.</p>'),
    `Against ${from}; latency tolerance ${b.tolerancePct}% (and at least ${b.latencyFloorMs} ms). A regression is a new failure, a cell slower beyond the tolerance, a vanished model or a failing new one; a known failure failed in the baseline too.`,
  );
}

/** The report's HTML. */
export function probeHtml(r: ProbeDoc, meta: ReportMeta): string {
  const s = r.summary;
  const verdict =
    s.failed > 0
      ? { text: `FAILED: ${s.failed} of ${r.checks.length} checks failed`, tone: 'bad' as const }
      : {
          text: `OK: every check that ran passed${s.warned ? ` (${s.warned} warned)` : ''}`,
          tone: 'ok' as const,
        };

  const withModel = r.checks.some((c) => c.model !== undefined && c.model !== '');
  const chart = latencyChart(r);
  const body =
    figures([
      { label: 'passed', value: String(s.passed), tone: 'ok' },
      { label: 'failed', value: String(s.failed), ...(s.failed > 0 ? { tone: 'bad' as const } : {}) },
      { label: 'warned', value: String(s.warned), ...(s.warned > 0 ? { tone: 'warn' as const } : {}) },
      { label: 'skipped', value: String(s.skipped) },
      { label: 'duration', value: ms(r.durationMs) },
      ...(r.spend !== undefined ? [{ label: 'spend at --prices', value: spendText(r.spend) }] : []),
    ]) +
    baselineSection(r) +
    section('Latency', chart) +
    section(
      'Checks',
      table({
        head: [
          ...(withModel ? ['check', 'model'] : ['check']),
          'result',
          'latency',
          'TTFT',
          'request id',
          'detail',
          ...(r.spend !== undefined ? ['spend'] : []),
        ],
        numeric: withModel ? [3, 4] : [2, 3],
        nowrap: withModel ? [0, 1, 2, 5] : [0, 1, 4],
        rows: r.checks.map((c) => [
          rowLabel(c),
          ...(withModel ? [c.model ?? ''] : []),
          RESULT[c.status],
          c.status === 'skip' ? '' : ms(c.latencyMs),
          c.ttftMs !== undefined ? ms(c.ttftMs) : '',
          c.requestId ?? '',
          failureParts(c, { requestId: false }).join(' — '),
          ...(r.spend !== undefined ? [c.spend !== undefined ? moneyText(c.spend) : ''] : []),
        ]),
        rowClass: r.checks.map((c) =>
          c.status === 'fail' ? 'fail' : c.status === 'warn' ? 'warn' : undefined,
        ),
      }),
    );
  return page({
    title: 'gw probe',
    meta,
    verdict,
    extraMeta: [
      { label: 'Started', value: utc(r.startedAt) },
      { label: 'Took', value: ms(r.durationMs) },
    ],
    body,
  });
}
