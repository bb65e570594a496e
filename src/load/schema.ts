/**
 * The JSON document of `gw load --json` / `--out` (schema `gw.load.v1`, documented in docs/load-report.md), declared
 * once as zod schemas from which the types come: the report builders write these types, and every report read back
 * (`gw load merge`, `compare`, `--baseline`) is parsed with the same schemas, so a damaged or hand-edited file is
 * refused naming its field instead of being merged or compared as numbers it does not hold. Every latency is in
 * milliseconds; histograms are HdrHistogram compressed base64 in microseconds (histogram.ts), so `gw load merge`
 * adds runs exactly and a report renderer can redraw any percentile.
 */
import * as z from 'zod';
import { LatencyHistogram } from './histogram.js';

export const SCHEMA = 'gw.load.v1';

const count = z.number().int().nonnegative();
const figure = z.number().nonnegative();

/** Summary statistics of one histogram, in milliseconds (histogram.ts). */
const summarySchema = z.object({
  count,
  mean: figure,
  p50: figure,
  p90: figure,
  p95: figure,
  p99: figure,
  p999: figure,
  max: figure,
});

/** An HdrHistogram in compressed base64 (`""` when empty), checked by decoding it. */
const histogramSchema = z.string().refine(
  (text) => {
    if (text === '') return true;
    try {
      LatencyHistogram.decode(text);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'is not an HdrHistogram in compressed base64' },
);

function byMetric<K extends string, T extends z.ZodType>(keys: readonly K[], value: T) {
  return z.object(Object.fromEntries(keys.map((k) => [k, value])) as Record<K, T>);
}

const METRIC_KEYS = ['e2e', 'ttft', 'itl', 'tpot', 'e2e_failed', 'lag'] as const;
const CDF_KEYS = ['e2e', 'ttft', 'itl', 'tpot'] as const;

/** One term of an SLO as checked. `actual` null = infinite (a failed request holds the percentile). */
const sloCheckSchema = z.object({ term: z.string(), actual: z.number().nullable(), pass: z.boolean() });

const secondSchema = z.object({ t: count, done: count, ok: count, errors: count, output_tokens: count });

/** The video figures' histograms (create, queue wait, completion, download in ms; throughput in kB/s). */
export const VIDEO_METRICS = ['create', 'queue_wait', 'completion', 'download', 'download_mbps'] as const;
export type VideoMetric = (typeof VIDEO_METRICS)[number];

/** The video figures of a step of `gw load --api video`. */
const videoFiguresSchema = z.object({
  model: z.string(),
  seconds: figure,
  resolution: z.string(),
  /** Tasks the gateway accepted (each journaled before it was polled). */
  created: count,
  /** Tasks that ended completed/success and whose result downloaded. */
  completed: count,
  failed: count,
  cancelled: count,
  /** Terminal states seen, by name. */
  states: z.record(z.string(), count),
  /** The ids of the created tasks. */
  ids: z.array(z.string()),
  download_bytes: count,
  /** Estimated spend at list price of the created tasks (plus creates left in doubt). */
  spend: z.object({
    currency: z.string(),
    estimated: figure,
    unit_price: figure,
    budget: figure,
    stopped_by_budget: z.boolean(),
  }),
  /** The queue wait is known to within this interval. */
  poll_interval_ms: figure,
  latency_ms: byMetric(['create', 'queue_wait', 'completion', 'download'] as const, summarySchema),
  /** Download throughput per item, in MB/s (10^6 bytes). */
  download_mb_per_s: summarySchema,
  /** HdrHistogram compressed base64: durations in µs; download_mbps in kB/s. */
  histograms: byMetric(VIDEO_METRICS, histogramSchema),
});

/** Amounts per currency (CNY, USD), each to a millionth. */
const amountsSchema = z.partialRecord(z.enum(['CNY', 'USD']), figure);

/**
 * `--prices`: what a step's requests cost at the operator's prices, from what their answers reported (usage,
 * images, a finished video's seconds). Absent without --prices.
 */
const stepSpendSchema = z.object({
  total: amountsSchema,
  /** Requests whose answer reported something the file prices (failed ones too: a stream cut after its usage). */
  priced: count,
  /** Successful requests without a price: their model is not in the file, or they reported nothing it prices. */
  unpriced: count,
  /** Models of unpriced requests that the file does not name (the first 16). */
  unpriced_models: z.array(z.string()),
});

/** The figures of one api and model of a step (`gw load --replay`): counts, latency and schedule lag. */
const apiModelSchema = z.object({
  api: z.string(),
  model: z.string(),
  requests: count,
  ok: count,
  errors: count,
  /** `--prices`: the pair's spend per currency. */
  spend: amountsSchema.optional(),
  latency_ms: byMetric(['e2e', 'ttft', 'lag'] as const, summarySchema),
  histograms: byMetric(['e2e', 'ttft', 'lag'] as const, histogramSchema),
});

/** One step of a run (a run without --sweep has one). */
const stepReportSchema = z.object({
  label: z.string(),
  mode: z.enum(['closed', 'open']),
  concurrency: count.optional(),
  rate: figure.optional(),
  duration_s: figure,
  requests: count,
  ok: count,
  errors: count,
  /** In flight when the step ended (its duration, Ctrl-C, an early stop): aborted, counted nowhere else. */
  cancelled: count,
  error_rate: z.number().min(0).max(1),
  errors_by_code: z.record(z.string(), count),
  statuses: z.record(z.string(), count),
  apis: z.record(z.string(), z.object({ requests: count, ok: count, errors: count })),
  requests_per_s: figure,
  ok_per_s: figure,
  /** Requests meeting every latency threshold of --slo, per second (all successes when no --slo). */
  good: count,
  goodput_per_s: figure,
  output_tokens: count,
  output_tokens_per_s: figure,
  /** Successful text requests whose answer reported no usage (their tokens are unknown, never guessed). */
  usage_missing: count,
  /**
   * `--prices` only (a report without it is as before): the input tokens of successful requests' usage, those
   * read from a cache included, and of them the cached ones.
   */
  input_tokens: count.optional(),
  cached_tokens: count.optional(),
  /** `--prices` only: the step's spend at those prices. */
  spend: stepSpendSchema.optional(),
  /**
   * Open loop: how far starts fell behind their schedule, and arrivals never sent (`dropped`: past the cap of
   * requests waiting for a connection, or still waiting when the step ended; absent from reports before it).
   */
  schedule: z.object({
    late: count,
    late_share: figure,
    lag_p99_ms: figure,
    lag_max_ms: figure,
    behind: z.boolean(),
    dropped: count.default(0),
  }),
  latency_ms: byMetric(METRIC_KEYS, summarySchema),
  /** [percentile, ms] points of each distribution, for charts. */
  cdf_ms: byMetric(CDF_KEYS, z.array(z.tuple([z.number(), z.number()]))),
  histograms: byMetric(METRIC_KEYS, histogramSchema),
  /** Completions per second of the step (by completion time). */
  timeline: z.array(secondSchema),
  slo: z.object({ pass: z.boolean(), checks: z.array(sloCheckSchema) }).optional(),
  /** `--api video` only: the figures of the video tasks (requests/ok/errors above count the tasks). */
  video: videoFiguresSchema.optional(),
  /** `--replay` only: the figures per api and model, keyed `<api> <model>`. */
  by_api_model: z.record(z.string(), apiModelSchema).optional(),
});

const sweepPointSchema = z.object({ index: count, value: figure });

/** A sweep's curve. */
const sweepReportSchema = z.object({
  parameter: z.enum(['concurrency', 'rate']),
  points: z.array(
    z.object({
      value: figure,
      throughput_rps: figure,
      latency_p50_ms: figure,
      latency_p95_ms: figure,
      ttft_p95_ms: figure,
      error_rate: figure,
    }),
  ),
  knee: sweepPointSchema.nullable(),
  /** The heaviest step meeting --slo (null without --slo or when none does). */
  best_within_slo: sweepPointSchema.nullable(),
});

/** The whole document. */
export const runReportSchema = z.object({
  schema: z.literal(SCHEMA),
  created_at: z.string(),
  gw_version: z.string(),
  /** Origin of the gateway (never the token). */
  target: z.string(),
  /** Runs merged into this one (1 for a single machine). */
  machines: z.number().int().positive(),
  /**
   * Unix time (ms, to the microsecond) of the run's origin: the `start_ms` of each `--csv` row is relative to it,
   * so a request's start can be lined up with a gateway's logs. Absent from merged reports.
   */
  origin_unix_ms: figure.optional(),
  /** A shard's report (`--shard`): which shard, of which run (core/shard.ts runId). Absent from merged reports. */
  shard: z.object({ shard: z.string().regex(/^\d+\/\d+$/, 'must be k/n'), run: z.string() }).optional(),
  /** `--start-at`: the instant (Unix ms) and how late this machine started after it (ms). */
  start_at: z.object({ unix_ms: figure, late_ms: figure }).optional(),
  /**
   * A merge of shards: their run, the shards merged and missing (k/n), the reports left out as copies of a shard
   * another report gave (a scheduler that ran an index twice), and each merged shard's late start (ms).
   */
  shards: z
    .object({
      run: z.string(),
      n: z.number().int().positive(),
      merged: z.array(z.string()),
      missing: z.array(z.string()),
      skipped: z.array(z.object({ shard: z.string(), file: z.string() })),
      late_start_ms: z.record(z.string(), figure),
    })
    .optional(),
  config: z.record(z.string(), z.unknown()),
  interrupted: z.boolean(),
  /** Why the run or sweep ended early (`stop-on: errors>5%`, `saturation`), or null. */
  stopped: z.string().nullable(),
  warnings: z.array(z.string()),
  steps: z.array(stepReportSchema),
  /** `--prices` only: the spend of every step, per currency. */
  spend: amountsSchema.optional(),
  sweep: sweepReportSchema.nullable(),
  slo: z.object({ expr: z.string(), pass: z.boolean() }).nullable(),
  /** Text runs: what ttft, itl, tpot and e2e measure and their names in vLLM, AIPerf and OpenTelemetry. */
  glossary: z.string().optional(),
});

export type SloCheck = z.infer<typeof sloCheckSchema>;
export type Amounts = z.infer<typeof amountsSchema>;
export type StepSpend = z.infer<typeof stepSpendSchema>;
export type VideoFigures = z.infer<typeof videoFiguresSchema>;
export type ApiModelFigures = z.infer<typeof apiModelSchema>;
export type StepReport = z.infer<typeof stepReportSchema>;
export type SweepReport = z.infer<typeof sweepReportSchema>;
export type RunReport = z.infer<typeof runReportSchema>;

/**
 * Reads a parsed JSON document as a load report: the report, or the first field that breaks the schema and the
 * rule it breaks.
 */
export function checkReport(
  doc: unknown,
): { ok: true; report: RunReport } | { ok: false; field: string; rule: string } {
  const r = runReportSchema.safeParse(doc);
  if (r.success) return { ok: true, report: r.data };
  const issue = r.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? '(the document)' : fieldPath(issue.path);
  return { ok: false, field, rule: issue?.message ?? 'is invalid' };
}

function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i > 0 ? '.' : ''}${String(p)}`)).join('');
}
