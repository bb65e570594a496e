/**
 * The OpenTelemetry GenAI client metrics of `--otlp`, aggregated by gw: one set of histograms per attribute set,
 * handed to the SDK's PeriodicExportingMetricReader as a MetricProducer, which collects, exports and retries on
 * its own schedule. Recording through the SDK's instruments cost ~3 µs a measurement at a load run's rate (it
 * sorts and hashes the attributes of every measurement); here the attribute set of a request is found once per
 * distinct combination and a measurement is a bucket search.
 */
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import {
  AggregationTemporality,
  DataPointType,
  type CollectionResult,
  type DataPoint,
  type Histogram as HistogramValue,
  type HistogramMetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import type { Resource } from '@opentelemetry/resources';
import { BucketHistogram } from './bucket-histogram.js';
import type { SpanRow } from './otlp-batch.js';

// The semantic conventions' advised bucket boundaries (seconds; tokens).
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const CHUNK_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5];
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

const INSTRUMENTS = {
  duration: {
    name: 'gen_ai.client.operation.duration',
    unit: 's',
    description: 'GenAI operation duration',
  },
  ttfc: {
    name: 'gen_ai.client.operation.time_to_first_chunk',
    unit: 's',
    description: 'Time from the request until the first chunk of its stream',
  },
  perChunk: {
    name: 'gen_ai.client.operation.time_per_output_chunk',
    unit: 's',
    description: 'Time between consecutive chunks of a stream',
  },
  tokens: {
    name: 'gen_ai.client.token.usage',
    unit: '{token}',
    description: 'Number of input and output tokens used',
  },
} as const;

/**
 * Attribute sets past this many share one series marked `otel.metric.overflow` (the SDK's own default limit and
 * marking): error codes come from the gateway, and a hostile one must not grow memory without end.
 */
export const MAX_SERIES = 2000;
const OVERFLOW: Attributes = { 'otel.metric.overflow': true };

/** The histograms of one attribute set. */
export class Series {
  duration = new BucketHistogram(DURATION_BUCKETS);
  ttfc = new BucketHistogram(DURATION_BUCKETS);
  perChunk = new BucketHistogram(CHUNK_BUCKETS);
  input = new BucketHistogram(TOKEN_BUCKETS);
  output = new BucketHistogram(TOKEN_BUCKETS);
  readonly inputAttributes: Attributes;
  readonly outputAttributes: Attributes;

  constructor(
    readonly attributes: Attributes,
    public startTime: HrTime,
  ) {
    this.inputAttributes = { ...attributes, 'gen_ai.token.type': 'input' };
    this.outputAttributes = { ...attributes, 'gen_ai.token.type': 'output' };
  }

  /** Delta temporality: the next export counts from `now`. */
  restart(now: HrTime): void {
    this.duration = new BucketHistogram(DURATION_BUCKETS);
    this.ttfc = new BucketHistogram(DURATION_BUCKETS);
    this.perChunk = new BucketHistogram(CHUNK_BUCKETS);
    this.input = new BucketHistogram(TOKEN_BUCKETS);
    this.output = new BucketHistogram(TOKEN_BUCKETS);
    this.startTime = now;
  }
}

/** The GenAI client histograms of every request recorded so far. */
export class GenAiMetrics implements MetricProducer {
  readonly #series = new Map<string, Series>();
  readonly #resource: Resource;
  /** What the exporter asks for (cumulative unless OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE says). */
  temporality: () => AggregationTemporality = () => AggregationTemporality.CUMULATIVE;

  constructor(resource: Resource) {
    this.#resource = resource;
  }

  /** The series of an attribute set (the same one for every set of the same attributes). */
  series(attributes: Attributes): Series {
    const key = JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : 1)));
    let s = this.#series.get(key);
    if (s === undefined) {
      const over = this.#series.size >= MAX_SERIES - 1;
      const k = over ? '' : key;
      s = this.#series.get(k) ?? new Series(over ? OVERFLOW : attributes, now());
      this.#series.set(k, s);
    }
    return s;
  }

  /** A finished GenAI request's measurements (`gaps`: its batch's chunk gaps; absent values are NaN). */
  record(r: SpanRow, gaps: Float64Array, series: Series): void {
    series.duration.record(r.durationMs / 1000);
    series.ttfc.record(r.ttftMs / 1000);
    for (let i = r.gapsFrom; i < r.gapsTo; i++) series.perChunk.record((gaps[i] as number) / 1000);
    series.input.record(r.inputTokens);
    series.output.record(r.outputTokens);
  }

  collect(): Promise<CollectionResult> {
    const temporality = this.temporality();
    const end = now();
    const points = { duration: [], ttfc: [], perChunk: [], tokens: [] } as Record<
      keyof typeof INSTRUMENTS,
      Array<DataPoint<HistogramValue>>
    >;
    for (const s of this.#series.values()) {
      point(points.duration, s.duration, s.attributes, s.startTime, end);
      point(points.ttfc, s.ttfc, s.attributes, s.startTime, end);
      point(points.perChunk, s.perChunk, s.attributes, s.startTime, end);
      point(points.tokens, s.input, s.inputAttributes, s.startTime, end);
      point(points.tokens, s.output, s.outputAttributes, s.startTime, end);
      if (temporality === AggregationTemporality.DELTA) s.restart(end);
    }
    const metrics: HistogramMetricData[] = [];
    for (const [k, i] of Object.entries(INSTRUMENTS)) {
      const dataPoints = points[k as keyof typeof INSTRUMENTS];
      if (dataPoints.length === 0) continue;
      metrics.push({
        descriptor: { name: i.name, unit: i.unit, description: i.description, valueType: ValueType.DOUBLE },
        aggregationTemporality: temporality,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints,
      });
    }
    return Promise.resolve({
      resourceMetrics: { resource: this.#resource, scopeMetrics: [{ scope: { name: 'gw' }, metrics }] },
      errors: [],
    });
  }
}

/** Now, as OpenTelemetry's [seconds, nanoseconds]. */
function now(): HrTime {
  const ms = Date.now();
  return [Math.trunc(ms / 1000), (ms % 1000) * 1e6];
}

/** A point of `h` when it holds any value (an attribute set shows only in the histograms that recorded it). */
function point(
  out: Array<DataPoint<HistogramValue>>,
  h: BucketHistogram,
  attributes: Attributes,
  startTime: HrTime,
  endTime: HrTime,
): void {
  if (h.count === 0) return;
  out.push({
    attributes,
    startTime,
    endTime,
    value: {
      buckets: { boundaries: [...h.bounds], counts: Array.from(h.counts) },
      sum: h.sum,
      count: h.count,
      min: h.min,
      max: h.max,
    },
  });
}
