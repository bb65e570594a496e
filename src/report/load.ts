/**
 * `gw load --html`: latency CDFs (with the SLO's bounds), TTFT and inter-token histograms, requests/s over time,
 * the sweep's throughput-latency curve with its knee, errors by code, and the table of steps. Its size does not
 * grow with the number of requests: distributions come from the run's HDR histograms, time from per-second
 * counters (a 10 000-request run is a few tens of KB).
 */
import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import {
  failureBars,
  histogram,
  lineChart,
  type Bin,
  type LineSeries,
  type Mark,
  type Rule,
} from './charts.js';
import { figures, page, section, table, utc, type ReportMeta } from './page.js';
import { esc, ms, num, pct } from './svg.js';
import type { RunReport, StepReport } from '../load/schema.js';
import { totalsText } from '../contract/money.js';

const METRIC_NAME: Record<string, string> = {
  e2e: 'end-to-end',
  ttft: 'time to first token',
  itl: 'inter-token gap',
  tpot: 'time per output token',
};

/** A latency term of an SLO (`ttft.p95<800ms`): metric, percentile (max = 100) and bound in ms. */
export function latencyTerms(expr: string): { metric: string; p: number; ms: number; text: string }[] {
  const out: { metric: string; p: number; ms: number; text: string }[] = [];
  for (const part of expr.split(',').map((s) => s.trim())) {
    const m =
      /^(ttft|e2e|latency|itl|tpot)(?:\.(p\d+|max|mean))?\s*<=?\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m)?$/.exec(part);
    if (!m) continue;
    const stat = m[2] ?? 'max';
    if (stat === 'mean') continue;
    const p = stat === 'max' ? 100 : stat === 'p999' ? 99.9 : Number(stat.slice(1));
    const unit = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[m[4] ?? 'ms'] as number;
    out.push({
      metric: m[1] === 'latency' ? 'e2e' : (m[1] as string),
      p,
      ms: Number(m[3]) * unit,
      text: part,
    });
  }
  return out;
}

/**
 * Bins of a histogram (HdrHistogram compressed base64, microseconds) as shares of requests, from its minimum to
 * its 99.9th percentile: values are read at every 0.1 % of the distribution (the public percentile API), so the
 * bars are exact to 0.1 % of the requests whatever their number.
 */
export function binsOf(encoded: string, count = 40): { bins: Bin[]; clippedAbove: number } | undefined {
  if (encoded === '') return undefined;
  const h = decodeFromCompressedBase64(encoded);
  if (h.totalCount === 0) return undefined;
  const lo = h.minNonZeroValue / 1000;
  const hi = Math.max(lo + 0.001, h.getValueAtPercentile(99.9) / 1000);
  const width = (hi - lo) / count;
  const bins: Bin[] = Array.from({ length: count }, (_, i) => ({
    x0: lo + i * width,
    x1: lo + (i + 1) * width,
    count: 0,
  }));
  let clipped = 0;
  for (let q = 0.05; q < 100; q += 0.1) {
    const v = h.getValueAtPercentile(q) / 1000;
    if (v > hi) {
      clipped += 0.1;
      continue;
    }
    const i = Math.min(count - 1, Math.max(0, Math.floor((v - lo) / width)));
    (bins[i] as Bin).count += 0.1;
  }
  for (const b of bins) b.count = Math.round(b.count * 10) / 10;
  if (typeof (h as { destroy?: () => void }).destroy === 'function') h.destroy();
  return { bins, clippedAbove: Math.round(clipped * 10) / 10 };
}

function stepName(s: StepReport): string {
  return s.label || shortName(s);
}

/** `c=8`, `20/s`: a step's name where space is short. */
function shortName(s: StepReport): string {
  return s.concurrency !== undefined
    ? `c=${s.concurrency}`
    : s.rate !== undefined
      ? `${s.rate}/s`
      : s.label || 'run';
}

/** `--api video`: the tasks' own figures (create, queue wait, completion, download), spend and terminal states. */
function videoSection(steps: StepReport[]): string {
  const withVideo = steps.filter((s) => s.video !== undefined);
  if (withVideo.length === 0) return '';
  const rows: Array<Array<string | number>> = [];
  for (const s of withVideo) {
    const v = s.video as NonNullable<StepReport['video']>;
    const name = withVideo.length > 1 ? `${stepName(s)}: ` : '';
    const lat = v.latency_ms;
    for (const [label, x] of [
      ['create (answer to the POST)', lat.create],
      [`queue wait (±${v.poll_interval_ms} ms)`, lat.queue_wait],
      ['time to completion', lat.completion],
      ['download', lat.download],
    ] as const) {
      rows.push([`${name}${label}`, x.count, ms(x.p50), ms(x.p95), ms(x.p99), ms(x.max)]);
    }
    const d = v.download_mb_per_s;
    rows.push([`${name}download MB/s`, d.count, num(d.p50), num(d.p95), num(d.p99), num(d.max)]);
  }
  const facts = withVideo.map((s) => {
    const v = s.video as NonNullable<StepReport['video']>;
    const states = Object.entries(v.states)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    return `<p class="lead">${esc(
      `${v.model}, ${v.seconds}s ${v.resolution}: ${v.created} created, ${v.completed} completed, ${v.failed} failed, ${v.cancelled} cancelled${states ? ` (states: ${states})` : ''}; estimated spend ${v.spend.currency} ${v.spend.estimated.toFixed(2)} of a ${v.spend.currency} ${v.spend.budget} budget${v.spend.stopped_by_budget ? ', stopped by the budget' : ''}.`,
    )}</p>`;
  });
  return section(
    'Video tasks',
    facts.join('') +
      table({
        head: ['figure', 'count', 'p50', 'p95', 'p99', 'max'],
        numeric: [1, 2, 3, 4, 5],
        nowrap: [0],
        rows,
      }),
  );
}

type Term = ReturnType<typeof latencyTerms>[number];

/** Latency CDFs: one chart per metric (a sweep draws one line per step), with the SLO's bounds. */
function cdfCharts(steps: StepReport[], sloTerms: Term[]): string[] {
  const out: string[] = [];
  for (const metric of ['e2e', 'ttft', 'itl'] as const) {
    const series: LineSeries[] = steps
      .map((s) => ({ s, pts: s.cdf_ms[metric] ?? [] }))
      .filter((x) => x.pts.length > 0)
      .map(({ s, pts }) => ({
        name: steps.length > 1 ? stepName(s) : (METRIC_NAME[metric] ?? metric),
        points: pts.map(([p, v]) => [v, p] as const),
        step: true,
        markers: 'sparse' as const,
      }));
    if (series.length === 0) continue;
    const terms = sloTerms.filter((t) => t.metric === metric);
    // The bound is a dashed line; its label sits at the ring on the percentile it bounds.
    const rules: Rule[] = terms.map((t) => ({ value: t.ms, label: '' }));
    const marks: Mark[] = terms.map((t) => ({ x: t.ms, y: t.p, label: `SLO ${t.text}` }));
    out.push(
      lineChart({
        id: `load-cdf-${metric}`,
        title: `Latency distribution: ${METRIC_NAME[metric] ?? metric}`,
        description: `Share of requests at or under each latency (cumulative)${steps.length > 1 ? ', one line per step' : ''}${rules.length ? '; the dashed line is the SLO bound, the ring the percentile it bounds' : ''}.`,
        x: { label: `${METRIC_NAME[metric] ?? metric} latency`, format: ms },
        y: { label: 'percentile', min: 0, max: 100, format: (v) => `${num(v)}%` },
        series: series.slice(0, 8),
        xRules: rules,
        marks,
      }),
    );
  }
  return out;
}

/** TTFT and inter-token histograms of the last (or only) step, with its p50 and p99. */
function histCharts(steps: StepReport[]): string[] {
  const last = steps[steps.length - 1];
  if (!last) return [];
  const out: string[] = [];
  for (const metric of ['ttft', 'itl'] as const) {
    const enc = last.histograms[metric];
    const b = enc !== undefined ? binsOf(enc) : undefined;
    if (!b) continue;
    const sum = last.latency_ms[metric];
    const rules: Rule[] = sum
      ? [
          { value: sum.p50, label: `p50 ${ms(sum.p50)}` },
          { value: sum.p99, label: `p99 ${ms(sum.p99)}` },
        ]
      : [];
    out.push(
      histogram({
        id: `load-hist-${metric}`,
        title: `${metric === 'ttft' ? 'Time to first token' : 'Inter-token gaps'}${steps.length > 1 ? ` (${stepName(last)})` : ''}`,
        description: `Share of ${metric === 'ttft' ? 'requests' : 'gaps'} per latency bin, up to the 99.9th percentile${b.clippedAbove > 0 ? ` (${pct(b.clippedAbove / 100)} above it not drawn; max ${sum ? ms(sum.max) : '?'})` : ''}.`,
        x: { label: METRIC_NAME[metric] ?? metric, format: ms },
        y: { label: `% of ${metric === 'ttft' ? 'requests' : 'gaps'}`, format: (v) => `${num(v)}%` },
        bins: b.bins,
        rules,
      }),
    );
  }
  return out;
}

/** Requests per second over time, the steps one after the other (flags where each starts). */
function rpsChart(steps: StepReport[]): string {
  let offset = 0;
  const okPts: [number, number][] = [];
  const errPts: [number, number][] = [];
  const stepMarks: Mark[] = [];
  for (const s of steps) {
    if (steps.length > 1) stepMarks.push({ x: offset, label: shortName(s) });
    for (const sec of s.timeline) {
      okPts.push([offset + sec.t, sec.ok]);
      errPts.push([offset + sec.t, sec.errors]);
    }
    offset += Math.max(s.duration_s, s.timeline.length);
  }
  if (okPts.length === 0) return '';
  const anyErrors = errPts.some((p) => p[1] > 0);
  return lineChart({
    id: 'load-rps',
    title: 'Requests per second over time',
    description: `Completed requests each second${anyErrors ? ', successes and failures' : ''}${steps.length > 1 ? '; flags mark where each step starts' : ''}.`,
    x: { label: 'seconds since start' },
    y: { label: 'requests/s' },
    series: [
      { name: 'succeeded/s', points: okPts, markers: 'none', endLabel: 'ok' },
      ...(anyErrors
        ? [{ name: 'failed/s', points: errPts, markers: 'none' as const, endLabel: 'failed' }]
        : []),
    ],
    marks: stepMarks,
  });
}

/** The sweep's curve: throughput against latency, with the knee and the SLO's end-to-end bound. */
function sweepChart(r: RunReport, sloTerms: Term[]): string {
  if (!r.sweep || r.sweep.points.length === 0) return '';
  const pts = r.sweep.points;
  const p = r.sweep.parameter === 'concurrency' ? 'c' : 'rate';
  const knee = r.sweep.knee;
  const kneePt = knee !== null ? pts[knee.index] : undefined;
  const e2e = sloTerms.find((t) => t.metric === 'e2e' && (t.p === 95 || t.p === 50));
  return lineChart({
    id: 'load-sweep',
    title: 'Throughput and latency across the sweep',
    description: `Each point is a step (${r.sweep.parameter} ${pts.map((x) => x.value).join(', ')}): successful requests/s against end-to-end latency${kneePt ? `; the ring is the knee (${p}=${knee?.value}), past which more load buys latency, not throughput` : ''}.`,
    x: { label: 'throughput (requests/s)' },
    y: { label: 'latency', format: ms },
    series: [
      {
        name: 'p95 latency',
        points: pts.map((x) => [x.throughput_rps, x.latency_p95_ms] as const),
        markers: 'all',
        endLabel: 'p95',
        pointLabels: pts.map((x, i) => (knee !== null && i === knee.index ? '' : `${p}=${x.value}`)),
      },
      {
        name: 'p50 latency',
        points: pts.map((x) => [x.throughput_rps, x.latency_p50_ms] as const),
        markers: 'all',
        endLabel: 'p50',
      },
    ],
    ...(e2e ? { yRules: [{ value: e2e.ms, label: `SLO ${e2e.text}` }] } : {}),
    marks: kneePt
      ? [{ x: kneePt.throughput_rps, y: kneePt.latency_p95_ms, label: `knee ${p}=${kneePt.value}` }]
      : [],
    height: 320,
  });
}

/** Failed requests of the whole run, by error code. */
function errorsChart(steps: StepReport[]): string {
  const codes = new Map<string, number>();
  for (const s of steps)
    for (const [k, v] of Object.entries(s.errors_by_code)) codes.set(k, (codes.get(k) ?? 0) + v);
  return failureBars({
    id: 'load-errors',
    title: 'Errors by code',
    description: 'Failed requests of the whole run, by error code.',
    x: { label: 'requests' },
    counts: codes,
  });
}

/** The key figures above the charts. */
function loadFigures(r: RunReport): string {
  const steps = r.steps;
  const last = steps[steps.length - 1];
  const one = last !== undefined && steps.length === 1;
  const total = steps.reduce((t, s) => t + s.requests, 0);
  const errs = steps.reduce((t, s) => t + s.errors, 0);
  const e2e = last?.latency_ms.e2e;
  const ttft = last?.latency_ms.ttft;
  return figures([
    { label: 'requests', value: String(total) },
    {
      label: 'errors',
      value: `${errs}${one ? ` (${pct(last.error_rate)})` : ''}`,
      ...(errs ? { tone: 'bad' as const } : {}),
    },
    ...(one
      ? [
          { label: 'requests/s', value: num(last.requests_per_s) },
          { label: 'goodput/s', value: num(last.goodput_per_s) },
          { label: 'output tokens/s', value: num(last.output_tokens_per_s) },
        ]
      : []),
    ...(e2e && one ? [{ label: 'e2e p50 / p99', value: `${ms(e2e.p50)} / ${ms(e2e.p99)}` }] : []),
    ...(ttft && ttft.count > 0 && one ? [{ label: 'TTFT p95', value: ms(ttft.p95) }] : []),
    ...(r.sweep?.knee ? [{ label: 'knee', value: `${r.sweep.parameter} ${r.sweep.knee.value}` }] : []),
    ...(r.spend !== undefined ? [{ label: 'spend at --prices', value: totalsText(r.spend, '0') }] : []),
  ]);
}

/** The table of steps (a spend column with --prices). */
function stepsTable(steps: StepReport[]): string {
  const priced = steps.some((s) => s.spend !== undefined);
  return table({
    head: [
      'step',
      'requests',
      'ok',
      'errors',
      'req/s',
      'goodput/s',
      'tokens/s',
      'e2e p50',
      'e2e p95',
      'e2e p99',
      'TTFT p95',
      'SLO',
      ...(priced ? ['spend'] : []),
    ],
    numeric: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    nowrap: [0],
    rows: steps.map((s) => {
      const e = s.latency_ms.e2e;
      const t = s.latency_ms.ttft;
      const missed = s.slo?.checks.filter((c) => !c.pass).map((c) => c.term);
      return [
        stepName(s),
        s.requests,
        s.ok,
        s.errors,
        num(s.requests_per_s),
        num(s.goodput_per_s),
        num(s.output_tokens_per_s),
        e ? ms(e.p50) : '–',
        e ? ms(e.p95) : '–',
        e ? ms(e.p99) : '–',
        t && t.count > 0 ? ms(t.p95) : '–',
        s.slo ? (s.slo.pass ? 'met' : `missed: ${(missed ?? []).join(', ')}`) : '',
        ...(priced ? [totalsText(s.spend?.total ?? {}, '0')] : []),
      ];
    }),
    rowClass: steps.map((s) => (s.slo && !s.slo.pass ? 'fail' : undefined)),
  });
}

/** The report's HTML. */
export function loadHtml(r: RunReport, meta: ReportMeta): string {
  const steps = r.steps;
  const sloTerms = r.slo ? latencyTerms(r.slo.expr) : [];
  const verdict = r.slo
    ? r.slo.pass
      ? { text: `SLO met: ${r.slo.expr}`, tone: 'ok' as const }
      : { text: `SLO missed: ${r.slo.expr}`, tone: 'bad' as const }
    : r.interrupted || r.stopped
      ? { text: r.stopped ? `Stopped early: ${r.stopped}` : 'Interrupted', tone: 'warn' as const }
      : undefined;
  const curve = sweepChart(r, sloTerms);
  const cdfs = cdfCharts(steps, sloTerms);
  const hists = histCharts(steps);
  const rps = rpsChart(steps);
  const errors = errorsChart(steps);
  const body =
    loadFigures(r) +
    (r.warnings.length > 0
      ? `<ul class="lead">${r.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`
      : '') +
    (curve ? section('Sweep', curve) : '') +
    (cdfs.length ? section('Latency', cdfs.join('')) : '') +
    (hists.length ? section('Time to first token and inter-token gaps', hists.join('')) : '') +
    (rps ? section('Throughput over time', rps) : '') +
    videoSection(steps) +
    (errors ? section('Errors', errors) : '') +
    section('Steps', stepsTable(steps)) +
    // The report's own glossary (what its timings are, and their names in other tools), as gw printed it.
    (r.glossary !== undefined ? section('Timings', `<pre><code>${esc(r.glossary)}</code></pre>`) : '');
  return page({
    title: 'gw load',
    meta,
    ...(verdict ? { verdict } : {}),
    extraMeta: [
      { label: 'Run', value: utc(r.created_at) },
      ...(r.machines > 1 ? [{ label: 'Machines', value: String(r.machines) }] : []),
    ],
    body,
  });
}
