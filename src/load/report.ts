/** Builds the step reports of the JSON document from recorders, reads them back, and renders the final table. */
import { totalsText } from '../contract/money.js';
import type { Expr } from './expr.js';
import { LatencyHistogram, type Summary } from './histogram.js';
import { METRICS, type Metric, type Recorder } from './recorder.js';
import {
  VIDEO_METRICS,
  type RunReport,
  type StepReport,
  type VideoFigures,
  type VideoMetric,
} from './schema.js';
import { check, type StepFigures } from './slo.js';

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** A step's share of late starts above which the run says the client fell behind its schedule. */
const BEHIND_SHARE = 0.01;
/** A single start this late also makes it say so. */
const BEHIND_MAX_MS = 1000;

/** What a step's video figures say besides their distributions: counts, states, ids, bytes, spend. */
export type VideoFacts = Omit<VideoFigures, 'latency_ms' | 'download_mb_per_s' | 'histograms'>;

/**
 * The `video` object of a step of `gw load --api video` (one run's, or several merged): the facts as given, every
 * distribution summarised from its histogram, and the histograms themselves.
 */
export function videoFigures(
  facts: VideoFacts,
  hist: Readonly<Record<VideoMetric, LatencyHistogram>>,
): VideoFigures {
  const summaries = {} as Record<VideoMetric, Summary>;
  const histograms = {} as Record<VideoMetric, string>;
  for (const m of VIDEO_METRICS) {
    summaries[m] = hist[m].summary();
    histograms[m] = hist[m].encode();
  }
  return {
    ...facts,
    latency_ms: {
      create: summaries.create,
      queue_wait: summaries.queue_wait,
      completion: summaries.completion,
      download: summaries.download,
    },
    download_mb_per_s: summaries.download_mbps,
    histograms,
  };
}

/** The report of one step. */
export function stepReport(
  rec: Recorder,
  meta: { label: string; mode: 'closed' | 'open'; concurrency?: number; rate?: number },
  slo: Expr | undefined,
): StepReport {
  const secs = Math.max(0.001, (rec.endedAt - rec.startedAt) / 1000);
  const s = rec.summaries();
  const histograms = {} as Record<Metric, string>;
  for (const m of METRICS) histograms[m] = rec.hist[m].encode();
  const late = rec.late;
  const step: StepReport = {
    label: meta.label,
    mode: meta.mode,
    ...(meta.concurrency !== undefined ? { concurrency: meta.concurrency } : {}),
    ...(meta.rate !== undefined ? { rate: meta.rate } : {}),
    duration_s: r3(secs),
    requests: rec.done,
    ok: rec.ok,
    errors: rec.errors,
    cancelled: rec.cancelled,
    error_rate: rec.done === 0 ? 0 : r3(rec.errors / rec.done),
    errors_by_code: Object.fromEntries([...rec.errorsByCode].sort((a, b) => b[1] - a[1])),
    statuses: Object.fromEntries(rec.statuses),
    apis: Object.fromEntries(rec.perApi),
    requests_per_s: r3(rec.done / secs),
    ok_per_s: r3(rec.ok / secs),
    good: rec.good,
    goodput_per_s: r3(rec.good / secs),
    output_tokens: rec.outputTokens,
    output_tokens_per_s: r3(rec.outputTokens / secs),
    usage_missing: rec.usageMissing,
    ...(rec.spend !== undefined
      ? { input_tokens: rec.inputTokens, cached_tokens: rec.cachedTokens, spend: rec.spend.report() }
      : {}),
    schedule: {
      late,
      late_share: rec.done === 0 ? 0 : r3(late / rec.done),
      lag_p99_ms: s.lag.p99,
      lag_max_ms: s.lag.max,
      behind:
        meta.mode === 'open' &&
        (rec.dropped > 0 || (rec.done > 0 && (late / rec.done > BEHIND_SHARE || s.lag.max > BEHIND_MAX_MS))),
      dropped: rec.dropped,
    },
    latency_ms: s,
    cdf_ms: {
      e2e: rec.hist.e2e.cdf(),
      ttft: rec.hist.ttft.cdf(),
      itl: rec.hist.itl.cdf(),
      tpot: rec.hist.tpot.cdf(),
    },
    histograms,
    timeline: rec.timeline,
  };
  if (slo !== undefined && slo.terms.length > 0) step.slo = check(slo, figures(step));
  return step;
}

/** The figures SLO checks read, from a step report (histograms decoded on demand). */
export function figures(step: StepReport): StepFigures {
  const cache = new Map<string, LatencyHistogram>();
  return {
    requests: step.requests,
    errors: step.errors,
    requests_per_s: step.requests_per_s,
    goodput_per_s: step.goodput_per_s,
    output_tokens_per_s: step.output_tokens_per_s,
    hist: (m) => {
      let h = cache.get(m);
      if (!h) {
        h = LatencyHistogram.decode(step.histograms[m]);
        cache.set(m, h);
      }
      return h;
    },
  };
}

const ms = (x: number): string =>
  x === 0 ? '-' : x < 10 ? `${x.toFixed(2)}ms` : x < 1000 ? `${x.toFixed(1)}ms` : `${(x / 1000).toFixed(2)}s`;

/** Rows of the final table: one block per step. */
export function tableRows(report: RunReport): { head: string[]; rows: Array<Array<string | number>> } {
  const multi = report.steps.length > 1;
  const head = [...(multi ? ['step'] : []), 'metric', 'count', 'p50', 'p90', 'p95', 'p99', 'max'];
  const rows: Array<Array<string | number>> = [];
  report.steps.forEach((st, i) => {
    const label = report.steps.length > 1 ? st.label : '';
    const knee = report.sweep?.knee?.index === i ? ' (knee)' : '';
    const metrics: Array<[Metric, string]> = [
      ['ttft', 'ttft'],
      ['itl', 'inter-token'],
      ['tpot', 'time/output token'],
      ['e2e', 'end to end (ok)'],
      ['e2e_failed', 'time to failure'],
    ];
    let first = true;
    for (const [m, name] of metrics) {
      const s = st.latency_ms[m];
      if (s.count === 0) continue;
      rows.push([
        ...(multi ? [first ? `${label}${knee}` : ''] : []),
        name,
        s.count,
        ms(s.p50),
        ms(s.p90),
        ms(s.p95),
        ms(s.p99),
        ms(s.max),
      ]);
      first = false;
    }
    if (first)
      rows.push([...(multi ? [`${label}${knee}`] : []), 'end to end (ok)', 0, '-', '-', '-', '-', '-']);
    const v = st.video;
    if (v !== undefined) {
      const videoRows: Array<[string, Summary, (x: number) => string]> = [
        ['video create', v.latency_ms.create, ms],
        ['queue wait', v.latency_ms.queue_wait, ms],
        ['time to completion', v.latency_ms.completion, ms],
        ['download', v.latency_ms.download, ms],
        ['download MB/s', v.download_mb_per_s, (x) => x.toFixed(2)],
      ];
      for (const [name, s, f] of videoRows) {
        if (s.count === 0) continue;
        rows.push([...(multi ? [''] : []), name, s.count, f(s.p50), f(s.p90), f(s.p95), f(s.p99), f(s.max)]);
      }
    }
  });
  return { head, rows };
}

/** `key: value` summary lines of a step. */
export function stepLines(st: StepReport): Array<[string, string]> {
  const codes = Object.entries(st.errors_by_code)
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  const out: Array<[string, string]> = [
    [
      'requests',
      `${st.requests} in ${st.duration_s.toFixed(1)}s (${st.ok} ok, ${st.errors} failed${st.cancelled > 0 ? `, ${st.cancelled} cancelled` : ''})`,
    ],
    ['errors', `${(st.error_rate * 100).toFixed(2)}%${codes !== '' ? ` (${codes})` : ''}`],
    [
      'throughput',
      `${st.requests_per_s.toFixed(2)} req/s, ${st.output_tokens_per_s.toFixed(1)} output tokens/s`,
    ],
    ['goodput', `${st.goodput_per_s.toFixed(2)} req/s (${st.good} requests met every latency threshold)`],
  ];
  if (st.video !== undefined) {
    const v = st.video;
    out.push([
      'videos',
      `${v.created} created (${v.seconds}s ${v.resolution} ${v.model}), ${v.completed} completed, ${v.failed} failed, ${v.cancelled} cancelled; ${(v.download_bytes / 1e6).toFixed(1)} MB downloaded and discarded`,
    ]);
    out.push([
      'spend',
      `${v.spend.currency} ${v.spend.estimated.toFixed(2)} estimated at list price (${v.spend.currency} ${v.spend.unit_price.toFixed(2)} each; budget ${v.spend.budget}${v.spend.stopped_by_budget ? ', reached' : ''})`,
    ]);
  }
  if (st.usage_missing > 0) out.push(['usage missing', `${st.usage_missing} answers reported no usage`]);
  out.push(...spendLines(st));
  if (st.mode === 'open') {
    const dropped = st.schedule.dropped > 0 ? `; ${st.schedule.dropped} arrivals never sent` : '';
    out.push([
      'schedule',
      `${st.schedule.late} starts more than 10ms late (lag p99 ${ms(st.schedule.lag_p99_ms)}, max ${ms(st.schedule.lag_max_ms)})${dropped}`,
    ]);
  }
  if (st.slo) {
    const c = st.slo.checks.map(
      (x) =>
        `${x.term} ${x.pass ? 'ok' : 'MISSED'} (${x.actual === null ? '∞: failures' : measured(x.term, x.actual)})`,
    );
    out.push(['slo', `${st.slo.pass ? 'met' : 'MISSED'}: ${c.join(', ')}`]);
  }
  return out;
}

/** `--prices`: the step's tokens and spend (nothing without it). */
function spendLines(st: StepReport): Array<[string, string]> {
  const s = st.spend;
  if (s === undefined) return [];
  const unpriced = s.unpriced > 0 ? `; ${s.unpriced} successful requests unpriced` : '';
  const input = st.input_tokens ?? 0;
  // A run of videos or images reports no tokens: no line for them.
  const tokens: Array<[string, string]> =
    input > 0 || st.output_tokens > 0
      ? [['tokens', `${input} input (${st.cached_tokens ?? 0} cached), ${st.output_tokens} output`]]
      : [];
  return [
    ...tokens,
    [
      'at --prices',
      `${totalsText(s.total, '0')} spent (${s.priced} requests priced from their usage, images or seconds${unpriced})`,
    ],
  ];
}

/**
 * A term's measured value with its unit: a latency in ms or s, the error share in percent, a rate per second.
 * The term's metric decides (its text is what parseExpr accepted).
 */
export function measured(term: string, value: number): string {
  const metric = /^[a-z]+/.exec(term)?.[0] ?? '';
  if (metric === 'errors') return `${Math.round(value * 100) / 100}%`;
  if (metric === 'rps' || metric === 'goodput') return `${value.toFixed(2)} req/s`;
  if (metric === 'tps') return `${value.toFixed(1)} tokens/s`;
  return value === 0 ? '0ms' : ms(value);
}

/** Codes of requests that never reached the gateway (the client's: nothing listens, the name does not resolve). */
const NEVER_CONNECTED = new Set(['connection_refused', 'dns_failed']);

/** The warning of a run in which no request succeeded, with what to check when nothing answered at all. */
export function noSuccess(report: RunReport): string | undefined {
  const steps = report.steps;
  if (steps.length === 0 || steps.some((st) => st.ok > 0)) return undefined;
  const codes = [...new Set(steps.flatMap((st) => Object.keys(st.errors_by_code)))];
  const unreachable = codes.length > 0 && codes.every((c) => NEVER_CONNECTED.has(c));
  return unreachable
    ? `no request succeeded: nothing answered at ${report.target} (${codes.join(', ')}); is the gateway up, and the base URL right?`
    : 'no request succeeded';
}
