/**
 * The JSON document of `gw load --json` / `--out` (schema `gw.load.v1`, documented in docs/load-report.md). Every
 * latency is in milliseconds; histograms are HdrHistogram compressed base64 in microseconds (histogram.ts), so
 * `gw load merge` adds runs exactly and a report renderer can redraw any percentile.
 */
import type { Summary } from './histogram.js';
import type { ApiCount, Metric, Second } from './recorder.js';

export const SCHEMA = 'gw.load.v1';

/** One term of an SLO as checked. `actual` null = infinite (a failed request holds the percentile). */
export interface SloCheck {
  term: string;
  actual: number | null;
  pass: boolean;
}

/** One step of a run (a run without --sweep has one). */
export interface StepReport {
  label: string;
  mode: 'closed' | 'open';
  concurrency?: number;
  rate?: number;
  duration_s: number;
  requests: number;
  ok: number;
  errors: number;
  /** In flight when the run was interrupted or stopped early: not counted anywhere else. */
  cancelled: number;
  error_rate: number;
  errors_by_code: Record<string, number>;
  statuses: Record<string, number>;
  apis: Record<string, ApiCount>;
  requests_per_s: number;
  ok_per_s: number;
  /** Requests meeting every latency threshold of --slo, per second (all successes when no --slo). */
  good: number;
  goodput_per_s: number;
  output_tokens: number;
  output_tokens_per_s: number;
  /** Successful text requests whose answer reported no usage (their tokens are unknown, never guessed). */
  usage_missing: number;
  /** Open loop: how far starts fell behind their schedule. */
  schedule: { late: number; late_share: number; lag_p99_ms: number; lag_max_ms: number; behind: boolean };
  latency_ms: Record<Metric, Summary>;
  /** [percentile, ms] points of each distribution, for charts. */
  cdf_ms: Record<'e2e' | 'ttft' | 'itl' | 'tpot', Array<[number, number]>>;
  histograms: Record<Metric, string>;
  /** Completions per second of the step (by completion time). */
  timeline: Second[];
  slo?: { pass: boolean; checks: SloCheck[] };
  /** `--api video` only: the figures of the video tasks (requests/ok/errors above count the tasks). */
  video?: VideoFigures;
}

/** The video figures' histograms (create, queue wait, completion, download in ms; throughput in kB/s). */
export const VIDEO_METRICS = ['create', 'queue_wait', 'completion', 'download', 'download_mbps'] as const;
export type VideoMetric = (typeof VIDEO_METRICS)[number];

/** The video figures of a step of `gw load --api video`. */
export interface VideoFigures {
  model: string;
  seconds: number;
  resolution: string;
  /** Tasks the gateway accepted (each journaled before it was polled). */
  created: number;
  /** Tasks that ended completed/success and whose result downloaded. */
  completed: number;
  failed: number;
  cancelled: number;
  /** Terminal states seen, by name. */
  states: Record<string, number>;
  /** The ids of the created tasks. */
  ids: string[];
  download_bytes: number;
  /** Estimated spend at list price of the created tasks (plus creates left in doubt). */
  spend: {
    currency: string;
    estimated: number;
    unit_price: number;
    budget: number;
    stopped_by_budget: boolean;
  };
  /** The queue wait is known to within this interval. */
  poll_interval_ms: number;
  latency_ms: Record<'create' | 'queue_wait' | 'completion' | 'download', Summary>;
  /** Download throughput per item, in MB/s (10^6 bytes). */
  download_mb_per_s: Summary;
  /** HdrHistogram compressed base64: durations in µs; download_mbps in kB/s. */
  histograms: Record<VideoMetric, string>;
}

/** A sweep's curve. */
export interface SweepReport {
  parameter: 'concurrency' | 'rate';
  points: Array<{
    value: number;
    throughput_rps: number;
    latency_p50_ms: number;
    latency_p95_ms: number;
    ttft_p95_ms: number;
    error_rate: number;
  }>;
  knee: { index: number; value: number } | null;
  /** The heaviest step meeting --slo (null without --slo or when none does). */
  best_within_slo: { index: number; value: number } | null;
}

/** The whole document. */
export interface RunReport {
  schema: typeof SCHEMA;
  created_at: string;
  gw_version: string;
  /** Origin of the gateway (never the token). */
  target: string;
  /** Runs merged into this one (1 for a single machine). */
  machines: number;
  /**
   * Unix time (ms, to the microsecond) of the run's origin: the `start_ms` of each `--csv` row is relative to it,
   * so a request's start can be lined up with a gateway's logs. Absent from merged reports.
   */
  origin_unix_ms?: number;
  config: Record<string, unknown>;
  interrupted: boolean;
  /** Why the run or sweep ended early (`stop-on: errors>5%`, `saturation`), or null. */
  stopped: string | null;
  warnings: string[];
  steps: StepReport[];
  sweep: SweepReport | null;
  slo: { expr: string; pass: boolean } | null;
}
