/**
 * gw encodes its spans and aggregates its GenAI metrics itself (the SDK's tracer and instruments cost a load run a
 * tenth of its CPU): what reaches the collector must be what the OpenTelemetry SDK would have sent for the same
 * requests. The reference here is the SDK's own path, as gw used it before: a tracer whose spans carry the
 * request's ids, times and attributes, the four GenAI histograms, and the SDK's protobuf serializers.
 */
import { SpanKind, SpanStatusCode, ValueType, type Attributes } from '@opentelemetry/api';
import { ProtobufMetricsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type IdGenerator,
} from '@opentelemetry/sdk-trace';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RequestSpan } from '../../../src/client/trace.js';
import { genAiOperation } from '../../../src/core/otlp.js';
import { startOtlpExport } from '../../../src/core/otlp-thread.js';
import { decodeMetrics, decodeTraces, startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp.js';
import { until } from '../../helpers/prometheus.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const OTHER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CHAT = '/v1/chat/completions';

/** Requests of every shape a span can take, in a seeded order, with times down to the microsecond. */
function requests(n: number): RequestSpan[] {
  let seed = 7;
  const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const kinds: Array<Partial<RequestSpan>> = [
    { requestId: 'req_1', inputTokens: 12, cachedInputTokens: 8, outputTokens: 30, status: 200 },
    { ttftMs: 41.25, chunkGapsMs: [3.5, 0.25, 120, 9000], inputTokens: 5, outputTokens: 7, status: 200 },
    { status: 429, errorCode: 'rate_limited', requestId: 'req_2' },
    { status: undefined, errorCode: 'connection_refused' },
    { method: 'GET', path: '/v1/videos/vid_123', model: undefined, status: 200 },
    { path: '/v1/messages', inputTokens: 1.5, outputTokens: 2 ** 40, status: 200 },
    { model: 'модель-✓', status: 200 },
    { requestId: `req_${'x'.repeat(300)}`, status: 200 },
    { origin: 'https://gateway.example', status: 200, path: '/v1/embeddings', inputTokens: 3 },
    { status: 500, errorCode: '' },
    { traceId: OTHER_TRACE, status: 200, path: '/v1/responses', outputTokens: 0 },
    { model: undefined, status: 400, errorCode: 'invalid_request' },
  ];
  return Array.from({ length: n }, (_, i) => ({
    traceId: TRACE,
    spanId: (0x1000 + i).toString(16).padStart(16, '0'),
    method: 'POST',
    path: CHAT,
    origin: 'http://127.0.0.1:8787',
    startUnixMs: 1_764_000_000_000 + i * 997.123457 + random(),
    durationMs: random() * 30_000,
    model: 'chat-3.7-plus',
    ...kinds[i % kinds.length],
  }));
}

/** What the SDK made of the same requests (the way gw recorded them through it before). */
async function throughTheSdk(spans: RequestSpan[]): Promise<{ traces: Buffer; metrics: Buffer }> {
  const resource = resourceFromAttributes({ 'service.name': 'gw' });
  const ids = { traceId: '', spanId: '' };
  const idGenerator: IdGenerator = { generateTraceId: () => ids.traceId, generateSpanId: () => ids.spanId };
  const finished = new InMemorySpanExporter();
  const tracer = new TracerProvider({
    resource,
    idGenerator,
    spanProcessors: [new SimpleSpanProcessor({ exporter: finished })],
  }).getTracer('gw');
  const collected = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: collected, exportIntervalMillis: 3_600_000 });
  const meters = new MeterProvider({ resource, readers: [reader] });
  const meter = meters.getMeter('gw');
  const histogram = (name: string, unit: string, description: string, buckets: number[]) =>
    meter.createHistogram(name, {
      unit,
      description,
      valueType: ValueType.DOUBLE,
      advice: { explicitBucketBoundaries: buckets },
    });
  const seconds = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
  const duration = histogram('gen_ai.client.operation.duration', 's', 'GenAI operation duration', seconds);
  const ttfc = histogram(
    'gen_ai.client.operation.time_to_first_chunk',
    's',
    'Time from the request until the first chunk of its stream',
    seconds,
  );
  const perChunk = histogram(
    'gen_ai.client.operation.time_per_output_chunk',
    's',
    'Time between consecutive chunks of a stream',
    [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5],
  );
  const tokens = histogram(
    'gen_ai.client.token.usage',
    '{token}',
    'Number of input and output tokens used',
    [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  );
  for (const s of spans) {
    const op = genAiOperation(s.method, s.path);
    const url = new URL(s.origin);
    const common: Attributes = {
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    };
    if (op !== undefined) {
      common['gen_ai.operation.name'] = op.name;
      common['gen_ai.provider.name'] = op.provider;
    }
    if (s.model !== undefined) common['gen_ai.request.model'] = s.model;
    if (s.errorCode !== undefined) common['error.type'] = s.errorCode;
    const attributes: Attributes = { ...common, 'http.request.method': s.method, 'url.path': s.path };
    if (s.status !== undefined && s.status > 0) attributes['http.response.status_code'] = s.status;
    if (s.requestId !== undefined) attributes['gw.request_id'] = s.requestId;
    if (s.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = s.inputTokens;
    if (s.cachedInputTokens !== undefined)
      attributes['gen_ai.usage.cache_read.input_tokens'] = s.cachedInputTokens;
    if (s.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = s.outputTokens;
    ids.traceId = s.traceId;
    ids.spanId = s.spanId;
    const name = op !== undefined ? `${op.name} ${s.model ?? ''}`.trim() : s.method;
    const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, startTime: s.startUnixMs, attributes });
    if (s.errorCode !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: s.errorCode });
    span.end(s.startUnixMs + s.durationMs);
    if (op === undefined) continue;
    duration.record(s.durationMs / 1000, common);
    if (s.ttftMs !== undefined) ttfc.record(s.ttftMs / 1000, common);
    for (const gap of s.chunkGapsMs ?? []) perChunk.record(gap / 1000, common);
    if (s.inputTokens !== undefined)
      tokens.record(s.inputTokens, { ...common, 'gen_ai.token.type': 'input' });
    if (s.outputTokens !== undefined)
      tokens.record(s.outputTokens, { ...common, 'gen_ai.token.type': 'output' });
  }
  await reader.forceFlush();
  const [metrics] = collected.getMetrics();
  await meters.shutdown();
  return {
    traces: Buffer.from(ProtobufTraceSerializer.serializeRequest(finished.getFinishedSpans()) as Uint8Array),
    metrics: Buffer.from(ProtobufMetricsSerializer.serializeRequest(metrics!) as Uint8Array),
  };
}

/** A decoded metrics export without its timestamps (when each was taken differs by the run). */
function timeless(body: Buffer): unknown {
  return JSON.parse(
    JSON.stringify(decodeMetrics(body), (k, v: unknown) => (/timeUnixNano$/i.test(k) ? undefined : v)),
  );
}

const WORKER = join(import.meta.dirname, '..', '..', '..', 'dist', 'otlp-worker.js');

/** Records `spans` through an export on a worker thread or this one, to a receiver; what it received. */
async function exported(
  spans: RequestSpan[],
  file: string | undefined,
  metricIntervalMs?: number,
): Promise<OtlpReceiver> {
  const rx = await startOtlpReceiver();
  const warnings: string[] = [];
  const otlp = startOtlpExport(
    {
      endpoints: { traces: `${rx.url}/v1/traces`, metrics: `${rx.url}/v1/metrics` },
      warn: (t) => warnings.push(t),
      metricIntervalMs,
    },
    file,
  );
  for (const s of spans) otlp.record(s);
  await otlp.close();
  expect(warnings).toEqual([]);
  return rx;
}

describe('the OTLP export', () => {
  it.each([
    ['on a worker thread', WORKER],
    ['on this thread', undefined],
  ])(
    '%s: the spans byte for byte as the SDK serialises them, and the same GenAI histograms',
    async (_, file) => {
      if (file !== undefined) expect(existsSync(file), 'npm run build writes dist/otlp-worker.js').toBe(true);
      const spans = requests(600);
      const want = await throughTheSdk(spans);
      const rx = await exported(spans, file);
      const traces = rx.bodies.filter((b) => b.path === '/v1/traces');
      expect(traces).toHaveLength(1);
      expect(decodeTraces(traces[0]!.body)).toEqual(decodeTraces(want.traces));
      expect(traces[0]?.body.equals(want.traces)).toBe(true);
      const metrics = rx.bodies.filter((b) => b.path === '/v1/metrics');
      expect(metrics).toHaveLength(1);
      expect(timeless(metrics[0]!.body)).toEqual(timeless(want.metrics));
    },
  );

  it('keeps every span right across batches, when the table of strings starts again, and with chunk gaps', async () => {
    // Polls of distinct paths (a video task's) and streams of distinct models pass the table's limit (4096
    // strings) in the second batch of 2048; streams carry their gaps.
    const spans = requests(6000).map((s, i) =>
      i % 2 === 0
        ? { ...s, method: 'GET', path: `/v1/videos/vid_${i}`, model: undefined }
        : { ...s, method: 'POST', path: CHAT, model: `m-${i}`, ttftMs: 5, chunkGapsMs: [i, i + 0.5] },
    );
    const rx = await exported(spans, WORKER);
    expect(
      rx.spans.map((s) => [
        s.spanId,
        s.attributes['url.path'],
        s.attributes['gen_ai.request.model'],
        s.traceId,
      ]),
    ).toEqual(spans.map((s) => [s.spanId, s.path, s.model, s.traceId]));
    const last = rx.points.at(-1) ?? [];
    const gaps = last.filter((p) => p.name === 'gen_ai.client.operation.time_per_output_chunk');
    const streams = spans.filter((s) => s.chunkGapsMs !== undefined);
    expect(gaps.reduce((n, p) => n + p.count, 0)).toBe(streams.length * 2);
    const sum = streams.reduce((n, s) => n + (s.chunkGapsMs ?? []).reduce((a, g) => a + g / 1000, 0), 0);
    expect(gaps.reduce((n, p) => n + p.sum, 0)).toBeCloseTo(sum, 6);
  });

  it('past 2000 attribute sets (error codes from a hostile gateway), the rest go to one overflow series', async () => {
    const spans = requests(3000).map((s, i) => ({
      ...s,
      method: 'POST',
      path: CHAT,
      errorCode: `code_${i}`,
      status: 500,
    }));
    const rx = await exported(spans, undefined);
    const duration = (rx.points.at(-1) ?? []).filter((p) => p.name === 'gen_ai.client.operation.duration');
    expect(duration).toHaveLength(2000);
    expect(duration.reduce((n, p) => n + p.count, 0)).toBe(3000);
    const overflow = duration.filter((p) => p.attributes['otel.metric.overflow'] === true);
    expect(overflow.map((p) => p.count)).toEqual([1001]);
  });

  it('with OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta, each export counts its own requests only', async () => {
    process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE = 'delta';
    try {
      const rx = await startOtlpReceiver();
      const otlp = startOtlpExport(
        {
          endpoints: { traces: `${rx.url}/v1/traces`, metrics: `${rx.url}/v1/metrics` },
          warn: () => {},
          metricIntervalMs: 100,
        },
        undefined,
      );
      const spans = requests(24).map((s) => ({ ...s, method: 'POST', path: CHAT, errorCode: undefined }));
      const durations = (): number[] =>
        rx.points.map((points) =>
          points
            .filter((p) => p.name === 'gen_ai.client.operation.duration')
            .reduce((n, p) => n + p.count, 0),
        );
      for (const s of spans.slice(0, 12)) otlp.record(s);
      await until('an export of the first requests', () =>
        Promise.resolve(durations().some((n) => n > 0) ? true : undefined),
      );
      for (const s of spans.slice(12)) otlp.record(s);
      await otlp.close();
      const counts = durations().filter((n) => n > 0);
      expect(counts.length).toBeGreaterThanOrEqual(2);
      expect(counts.reduce((a, n) => a + n, 0)).toBe(24);
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE;
    }
  });
});
