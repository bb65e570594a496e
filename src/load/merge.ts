/**
 * `gw load merge`: runs of the same test driven from several machines at once become one report. Steps are matched
 * by position and label; counts add up, histograms are added bucket by bucket (so every percentile of the merged
 * report is the percentile of all requests, not an average of percentiles), timelines add second by second, and a
 * step's duration is the longest of its parts (the machines ran side by side), so rates add up too.
 */
import { UsageError } from '../core/errors.js';
import { joinShards, parseShard } from '../core/shard.js';
import { mergeGroups } from './groups.js';
import { mergeSpend, runSpend } from './spend.js';
import { LatencyHistogram } from './histogram.js';
import { METRICS, type Metric, type Second } from './recorder.js';
import { kneeIndex } from './knee.js';
import { figures, videoFigures, type VideoFacts } from './report.js';
import { parseExpr } from './expr.js';
import { check } from './slo.js';
import {
  VIDEO_METRICS,
  type RunReport,
  type StepReport,
  type VideoFigures,
  type VideoMetric,
} from './schema.js';

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

function addCounts<T extends Record<string, number>>(
  a: Record<string, T | number>,
  b: Record<string, T | number>,
): void {
  for (const [k, v] of Object.entries(b)) {
    const cur = a[k];
    if (typeof v === 'number') a[k] = ((cur as number | undefined) ?? 0) + v;
    else {
      const into = (cur as Record<string, number> | undefined) ?? {};
      for (const [kk, vv] of Object.entries(v)) into[kk] = (into[kk] ?? 0) + vv;
      a[k] = into as T;
    }
  }
}

/** --prices (every part has it, or none: checkPrices): tokens add up, amounts add in millionths. */
function mergedSpend(parts: StepReport[]): Pick<StepReport, 'input_tokens' | 'cached_tokens' | 'spend'> {
  const spend = mergeSpend(parts.map((p) => p.spend));
  if (spend === undefined) return {};
  const sum = (f: (s: StepReport) => number | undefined): number =>
    parts.reduce((a, s) => a + (f(s) ?? 0), 0);
  return { input_tokens: sum((s) => s.input_tokens), cached_tokens: sum((s) => s.cached_tokens), spend };
}

function mergeSteps(parts: StepReport[], sloText: string | undefined): StepReport {
  const first = parts[0] as StepReport;
  const hist = {} as Record<Metric, LatencyHistogram>;
  for (const m of METRICS) {
    hist[m] = new LatencyHistogram();
    for (const p of parts) hist[m].add(LatencyHistogram.decode(p.histograms[m] ?? ''));
  }
  const sum = (f: (s: StepReport) => number): number => parts.reduce((a, s) => a + f(s), 0);
  const secs = Math.max(...parts.map((p) => p.duration_s), 0.001);
  const requests = sum((s) => s.requests);
  const errors = sum((s) => s.errors);
  const ok = sum((s) => s.ok);
  const good = sum((s) => s.good);
  const outputTokens = sum((s) => s.output_tokens);
  const late = sum((s) => s.schedule.late);
  const timeline: Second[] = [];
  for (const p of parts) {
    for (const s of p.timeline) {
      while (timeline.length <= s.t)
        timeline.push({ t: timeline.length, done: 0, ok: 0, errors: 0, output_tokens: 0 });
      const into = timeline[s.t] as Second;
      into.done += s.done;
      into.ok += s.ok;
      into.errors += s.errors;
      into.output_tokens += s.output_tokens;
    }
  }
  const errorsByCode: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  const apis: Record<string, { requests: number; ok: number; errors: number }> = {};
  for (const p of parts) {
    addCounts(errorsByCode, p.errors_by_code);
    addCounts(statuses, p.statuses);
    for (const [api, c] of Object.entries(p.apis)) {
      const into = (apis[api] ??= { requests: 0, ok: 0, errors: 0 });
      into.requests += c.requests;
      into.ok += c.ok;
      into.errors += c.errors;
    }
  }
  const latency = {} as StepReport['latency_ms'];
  const histograms = {} as Record<Metric, string>;
  for (const m of METRICS) {
    latency[m] = hist[m].summary();
    histograms[m] = hist[m].encode();
  }
  const labels = [...new Set(parts.map((p) => p.label))];
  const step: StepReport = {
    ...first,
    label: labels.join(' + '),
    duration_s: r3(secs),
    requests,
    ok,
    errors,
    cancelled: sum((s) => s.cancelled),
    error_rate: requests === 0 ? 0 : r3(errors / requests),
    errors_by_code: errorsByCode,
    statuses,
    apis,
    requests_per_s: r3(requests / secs),
    ok_per_s: r3(ok / secs),
    good,
    goodput_per_s: r3(good / secs),
    output_tokens: outputTokens,
    output_tokens_per_s: r3(outputTokens / secs),
    usage_missing: sum((s) => s.usage_missing),
    ...mergedSpend(parts),
    schedule: {
      late,
      late_share: requests === 0 ? 0 : r3(late / requests),
      lag_p99_ms: latency.lag.p99,
      lag_max_ms: latency.lag.max,
      behind: parts.some((p) => p.schedule.behind),
      dropped: sum((s) => s.schedule.dropped),
    },
    latency_ms: latency,
    cdf_ms: { e2e: hist.e2e.cdf(), ttft: hist.ttft.cdf(), itl: hist.itl.cdf(), tpot: hist.tpot.cdf() },
    histograms,
    timeline,
  };
  const groups = mergeGroups(parts.map((p) => p.by_api_model));
  if (groups !== undefined) step.by_api_model = groups;
  const videos = parts.map((p) => p.video).filter((v): v is VideoFigures => v !== undefined);
  if (videos.length > 0) step.video = mergeVideo(videos);
  if (first.rate !== undefined) step.rate = sum((s) => s.rate ?? 0);
  if (first.concurrency !== undefined) step.concurrency = sum((s) => s.concurrency ?? 0);
  delete step.slo;
  if (sloText !== undefined) {
    const expr = parseExpr(sloText, '--slo');
    if (expr.terms.length > 0) step.slo = check(expr, figures(step));
  }
  return step;
}

/**
 * The video figures of machines that ran the same video test side by side: counts, states, ids, bytes and spend
 * add up (each machine kept to its own budget, so the budgets add up too), the queue wait is known to within the
 * coarsest poll interval, and every distribution comes from the summed histograms.
 */
function mergeVideo(parts: VideoFigures[]): VideoFigures {
  const first = parts[0] as VideoFigures;
  const sum = (f: (v: VideoFigures) => number): number => parts.reduce((a, v) => a + f(v), 0);
  const states: Record<string, number> = {};
  for (const p of parts) addCounts(states, p.states);
  const hist = {} as Record<VideoMetric, LatencyHistogram>;
  for (const m of VIDEO_METRICS) {
    hist[m] = new LatencyHistogram();
    for (const p of parts) hist[m].add(LatencyHistogram.decode(p.histograms[m] ?? ''));
  }
  const facts: VideoFacts = {
    model: first.model,
    seconds: first.seconds,
    resolution: first.resolution,
    created: sum((v) => v.created),
    completed: sum((v) => v.completed),
    failed: sum((v) => v.failed),
    cancelled: sum((v) => v.cancelled),
    states,
    ids: parts.flatMap((v) => v.ids),
    download_bytes: sum((v) => v.download_bytes),
    spend: {
      currency: first.spend.currency,
      estimated: Math.round(sum((v) => v.spend.estimated) * 100) / 100,
      unit_price: first.spend.unit_price,
      budget: Math.round(sum((v) => v.spend.budget) * 100) / 100,
      stopped_by_budget: parts.some((v) => v.spend.stopped_by_budget),
    },
    poll_interval_ms: Math.max(...parts.map((v) => v.poll_interval_ms)),
  };
  return videoFigures(facts, hist);
}

/** Why two steps are not parts of the same test (video against text, another model or price), if they are not. */
function mismatch(a: StepReport, b: StepReport): string | undefined {
  const va = a.video;
  const vb = b.video;
  if ((va === undefined) !== (vb === undefined)) return 'a video run and a text run';
  if (va === undefined || vb === undefined) return undefined;
  if (va.model !== vb.model || va.seconds !== vb.seconds || va.resolution !== vb.resolution)
    return `videos of ${va.model} ${va.seconds}s ${va.resolution} and of ${vb.model} ${vb.seconds}s ${vb.resolution}`;
  if (va.spend.currency !== vb.spend.currency)
    return `spend in ${va.spend.currency} and in ${vb.spend.currency}`;
  return undefined;
}

/**
 * Refuses a report given twice (the same file twice, or a copy of it): merged, every request would count twice.
 * Two runs never write the same document (each has its own creation time and origin).
 */
function refuseTwice(reports: ReadonlyArray<Given>): void {
  const seen = new Map<string, string>();
  for (const { path, report } of reports) {
    const key = JSON.stringify(report);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      const what = earlier === path ? `${path} is given twice` : `${earlier} and ${path} are the same report`;
      throw new UsageError(`merge: ${what}; merging it twice would count every request twice`, {
        field: 'run.json',
      });
    }
    seen.set(key, path);
  }
}

/** A report given to a merge, named by its file. */
type Given = { path: string; report: RunReport };

/**
 * The shards among the reports: none when no report is a shard (runs driven side by side, merged as they are);
 * else every report must be a shard of one run (exit 2), each shard is taken once (of two reports of one shard,
 * a scheduler's retry, the finished one, then the one with more requests, then the later one), and missing
 * shards are exit 1 unless `allowMissing` (core/shard.ts joinShards).
 */
function shardsOf(
  reports: readonly Given[],
  allowMissing: boolean,
): { kept: Given[]; shards?: NonNullable<RunReport['shards']> } {
  const sharded = reports.filter((r) => r.report.shard !== undefined);
  if (sharded.length === 0) return { kept: [...reports] };
  const plain = reports.find((r) => r.report.shard === undefined);
  if (plain !== undefined) {
    throw new UsageError(
      `merge: ${plain.path} is no shard and ${sharded[0]?.path} is shard ${sharded[0]?.report.shard?.shard}: only the shards of one run merge`,
      { field: 'run.json' },
    );
  }
  const parts = reports.map((g) => {
    const s = parseShard(g.report.shard?.shard ?? '', `${g.path}: shard`);
    const requests = g.report.steps.reduce((a, st) => a + st.requests, 0);
    const score = [g.report.interrupted ? 0 : 1, requests, Date.parse(g.report.created_at) || 0];
    return { ...g, where: g.path, run: g.report.shard?.run, n: s.n, ks: [s.k], score };
  });
  const set = joinShards(parts, allowMissing, 'run.json');
  const late: Record<string, number> = {};
  for (const p of set.kept) if (p.report.start_at) late[`${p.ks[0]}/${p.n}`] = p.report.start_at.late_ms;
  const shards = {
    run: set.run ?? '',
    n: set.n,
    merged: set.merged,
    missing: set.missing,
    skipped: set.skipped.map((x) => ({ shard: x.shard, file: x.where })),
    late_start_ms: late,
  };
  return { kept: set.kept.map(({ path, report }) => ({ path, report })), shards };
}

/** The prices a report's run was priced at (`config.prices`), as a comparable text; `none` without --prices. */
function pricesOf(r: RunReport): string {
  return r.config.prices !== undefined ? JSON.stringify(r.config.prices) : 'none';
}

/**
 * Exit 2 unless every report was priced at the same --prices, or none was: the spend of runs priced differently,
 * or of a run priced and one not, does not add up to a spend of the whole.
 */
function checkPrices(reports: readonly Given[]): void {
  const first = reports[0] as Given;
  for (const r of reports.slice(1)) {
    if (pricesOf(r.report) === pricesOf(first.report)) continue;
    const how = (g: Given): string =>
      g.report.config.prices === undefined ? 'without --prices' : 'with --prices';
    const what =
      how(r) === how(first)
        ? `${first.path} and ${r.path} were priced with different --prices files`
        : `${first.path} ran ${how(first)} and ${r.path} ${how(r)}`;
    throw new UsageError(`merge: ${what}; their spend would not add up (run every part with the same file)`, {
      field: 'run.json',
    });
  }
}

/** Exit 2 unless every report has the first's steps, each of the same kind (text or the same videos). */
function checkSteps(reports: readonly Given[], first: RunReport): void {
  for (const { path, report } of reports) {
    if (report.steps.length !== first.steps.length) {
      throw new UsageError(
        `merge: ${path} has ${report.steps.length} steps, the first report ${first.steps.length}: only runs of the same test merge`,
        { field: 'run.json' },
      );
    }
  }
  for (const { path, report } of reports.slice(1)) {
    report.steps.forEach((st, i) => {
      const why = mismatch(first.steps[i] as StepReport, st);
      if (why !== undefined) {
        throw new UsageError(
          `merge: ${path} and the first report are ${why}: only runs of the same test merge`,
          {
            field: 'run.json',
          },
        );
      }
    });
  }
}

/** The merged sweep: its points from the merged steps, its knee and the heaviest step meeting the SLO. */
function mergedSweep(
  given: RunReport['sweep'],
  steps: StepReport[],
  sloText: string | undefined,
): RunReport['sweep'] {
  let sweep = given;
  if (sweep !== null) {
    sweep = {
      ...sweep,
      points: steps.map((st, i) => ({
        value: sweep?.points[i]?.value ?? i,
        throughput_rps: st.ok_per_s,
        latency_p50_ms: st.latency_ms.e2e.p50,
        latency_p95_ms: st.latency_ms.e2e.p95,
        ttft_p95_ms: st.latency_ms.ttft.p95,
        error_rate: st.error_rate,
      })),
    };
  }
  if (sweep !== null) {
    const k = kneeIndex(
      sweep.points.map((p) => ({
        value: p.value,
        throughput: p.throughput_rps,
        latencyMs: p.latency_p50_ms,
      })),
    );
    sweep.knee = k !== undefined ? { index: k, value: sweep.points[k]?.value ?? k } : null;
    let best: { index: number; value: number } | null = null;
    steps.forEach((st, i) => {
      if (st.slo?.pass === true) best = { index: i, value: sweep?.points[i]?.value ?? i };
    });
    sweep.best_within_slo = sloText !== undefined ? best : null;
  }
  return sweep;
}

/**
 * Merges reports (in the order given); exit 2 when their steps do not line up, one is given twice, or shards of
 * different runs are mixed; exit 1 when shards of the run are missing, unless `allowMissing`.
 */
export function mergeReports(given: Given[], o: { allowMissing?: boolean } = {}): RunReport {
  if (given[0] === undefined) throw new UsageError('merge: needs at least one report', { field: 'run.json' });
  refuseTwice(given);
  checkPrices(given);
  const { kept: reports, shards } = shardsOf(given, o.allowMissing === true);
  const first = (reports[0] as Given).report;
  checkSteps(reports, first);
  const sloText = typeof first.config.slo === 'string' ? first.config.slo : undefined;
  const steps = first.steps.map((_, i) =>
    mergeSteps(
      reports.map((r) => r.report.steps[i] as StepReport),
      sloText,
    ),
  );
  const sweep = mergedSweep(first.sweep, steps, sloText);
  const sloPass =
    first.sweep !== null
      ? steps.some((s) => s.slo?.pass === true)
      : steps.every((s) => s.slo?.pass !== false);
  const warnings = reports.flatMap((r) => r.report.warnings);
  if (shards !== undefined && shards.missing.length > 0) {
    warnings.push(
      `shard${shards.missing.length === 1 ? '' : 's'} ${shards.missing.join(', ')} of the run missing (--allow-missing): the figures are the other shards' only`,
    );
  }
  const merged: RunReport = {
    ...first,
    created_at: new Date().toISOString(),
    machines: reports.reduce((a, r) => a + (r.report.machines || 1), 0),
    interrupted: reports.some((r) => r.report.interrupted),
    stopped: reports.map((r) => r.report.stopped).find((s) => s !== null) ?? null,
    warnings,
    ...(shards !== undefined ? { shards } : {}),
    steps,
    ...runSpend(steps),
    sweep,
    slo: first.slo !== null ? { expr: first.slo.expr, pass: sloPass } : null,
  };
  // Each machine had its own origin and shard: none of them is the merged run's.
  delete merged.origin_unix_ms;
  delete merged.shard;
  delete merged.start_at;
  return merged;
}
