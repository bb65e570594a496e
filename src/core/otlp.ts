/**
 * `--otlp <url>`: each gateway request as an OTLP span, and the OpenTelemetry GenAI client metrics, sent over
 * OTLP/HTTP (protobuf) with the official OpenTelemetry JS SDK and exporters. This module is imported only when
 * telemetry was asked for, so the SDK costs nothing to a command without it.
 *
 * Spans keep gw's own ids: the trace id of the command and the span id of the request's `traceparent`, so a
 * gateway that traces shows its spans under gw's. The SDK makes the ids through its IdGenerator, which here hands
 * it the ids of the request being recorded.
 *
 * Nothing here can fail a run: export errors, a refused or slow collector and dropped spans reach the SDK's
 * diagnostic logger, which turns them into warnings (each said once). Exports run in the background; the last
 * flush when the command ends is bounded (FLUSH_MS).
 */
import {
  diag,
  DiagLogLevel,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Histogram,
} from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider, type IdGenerator } from '@opentelemetry/sdk-trace';
import type { RequestSpan } from '../client/trace.js';

/** The longest the last export waits for the collector when the command ends. */
export const FLUSH_MS = 5_000;

/** Where the traces and the metrics go (full URLs). */
export interface OtlpEndpoints {
  traces: string;
  metrics: string;
}

/** What an OTLP export needs besides its endpoints. */
export interface OtlpOptions {
  endpoints: OtlpEndpoints;
  /** service.name (default `gw`). */
  serviceName?: string | undefined;
  /** How often metrics are exported while the command runs (default 10 s). */
  metricIntervalMs?: number | undefined;
  /** Told of every problem (an export that failed, dropped spans); never thrown. */
  warn: (text: string) => void;
}

/** The GenAI operation of a request (OpenTelemetry's gen_ai.operation.name) and the wire format it speaks. */
export function genAiOperation(method: string, path: string): { name: string; provider: string } | undefined {
  if (method !== 'POST') return undefined;
  switch (path) {
    case '/v1/chat/completions':
    case '/v1/responses':
      return { name: 'chat', provider: 'openai' };
    case '/v1/messages':
      return { name: 'chat', provider: 'anthropic' };
    case '/v1/embeddings':
      return { name: 'embeddings', provider: 'openai' };
    case '/v1/images/generations':
    case '/v1/images/edits':
    case '/v1/videos':
      return { name: 'generate_content', provider: 'openai' };
    default:
      return undefined;
  }
}

// The semantic conventions' advised bucket boundaries (seconds; tokens).
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const CHUNK_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5];
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/** Attribute sets kept for reuse (paths with ids in them make new ones: past this, they are built each time). */
const MAX_COMMON = 1024;

/** Hands the SDK the ids of the request being recorded (see the module's comment). */
class GivenIds implements IdGenerator {
  traceId = '';
  spanId = '';
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.spanId;
  }
}

/** The four GenAI client histograms. */
interface GenAiMetrics {
  duration: Histogram;
  ttfc: Histogram;
  perChunk: Histogram;
  tokens: Histogram;
}

/** A running OTLP export: `record` each finished request, `close` once at the end. */
export class OtlpExport {
  readonly #ids = new GivenIds();
  readonly #tracer;
  readonly #traces: TracerProvider;
  readonly #meters: MeterProvider;
  readonly #metrics: GenAiMetrics;
  readonly #warned = new Set<string>();
  readonly #warn: (text: string) => void;
  readonly #commons = new Map<string, Attributes>();
  /** The token metric's attributes of each shared set (input and output). */
  readonly #typed = new WeakMap<Attributes, { input: Attributes; output: Attributes }>();

  constructor(o: OtlpOptions) {
    this.#warn = o.warn;
    diag.setLogger(this.#diagLogger(), DiagLogLevel.WARN);
    const resource = resourceFromAttributes({ 'service.name': o.serviceName ?? 'gw' });
    const timeoutMillis = FLUSH_MS;
    this.#traces = new TracerProvider({
      resource,
      idGenerator: this.#ids,
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: o.endpoints.traces, timeoutMillis }),
          // A load test sends thousands of requests a second: large batches, a bounded queue (past it spans are
          // dropped and a warning says how many).
          maxQueueSize: 65_536,
          maxExportBatchSize: 4_096,
          scheduledDelayMillis: 2_000,
          exportTimeoutMillis: timeoutMillis,
        }),
      ],
    });
    this.#tracer = this.#traces.getTracer('gw');
    this.#meters = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: o.endpoints.metrics, timeoutMillis }),
          exportIntervalMillis: o.metricIntervalMs ?? 10_000,
          exportTimeoutMillis: timeoutMillis,
        }),
      ],
    });
    this.#metrics = genAiMetrics(this.#meters);
  }

  /** Records one finished request: its span, and its GenAI metrics when it was a GenAI operation. */
  record(s: RequestSpan): void {
    const op = genAiOperation(s.method, s.path);
    const common = this.#common(s, op);
    this.#span(s, op?.name, common);
    if (op !== undefined) this.#measure(s, common);
  }

  /**
   * The attributes a request's span and metrics share. A load run repeats a handful of combinations thousands of
   * times a second: each is built once (no URL parsed per request), up to MAX_COMMON of them.
   */
  #common(s: RequestSpan, op: { name: string; provider: string } | undefined): Attributes {
    const key = `${s.origin} ${s.method} ${s.path} ${s.model ?? ''} ${s.errorCode ?? ''}`;
    const known = this.#commons.get(key);
    if (known !== undefined) return known;
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
    if (this.#commons.size < MAX_COMMON) this.#commons.set(key, common);
    return common;
  }

  #span(s: RequestSpan, operation: string | undefined, common: Attributes): void {
    const attributes: Attributes = { ...common, 'http.request.method': s.method, 'url.path': s.path };
    if (s.status !== undefined && s.status > 0) attributes['http.response.status_code'] = s.status;
    if (s.requestId !== undefined) attributes['gw.request_id'] = s.requestId;
    if (s.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = s.inputTokens;
    if (s.cachedInputTokens !== undefined)
      attributes['gen_ai.usage.cache_read.input_tokens'] = s.cachedInputTokens;
    if (s.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = s.outputTokens;
    this.#ids.traceId = s.traceId;
    this.#ids.spanId = s.spanId;
    // GenAI spans are named "<operation> <model>"; others by their method (a path holds ids: too many names).
    const name = operation !== undefined ? `${operation} ${s.model ?? ''}`.trim() : s.method;
    const span = this.#tracer.startSpan(name, {
      kind: SpanKind.CLIENT,
      startTime: s.startUnixMs,
      attributes,
    });
    if (s.errorCode !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: s.errorCode });
    span.end(s.startUnixMs + s.durationMs);
  }

  #measure(s: RequestSpan, common: Attributes): void {
    const m = this.#metrics;
    m.duration.record(s.durationMs / 1000, common);
    if (s.ttftMs !== undefined) m.ttfc.record(s.ttftMs / 1000, common);
    for (const gap of s.chunkGapsMs ?? []) m.perChunk.record(gap / 1000, common);
    if (s.inputTokens === undefined && s.outputTokens === undefined) return;
    let typed = this.#typed.get(common);
    if (typed === undefined) {
      typed = {
        input: { ...common, 'gen_ai.token.type': 'input' },
        output: { ...common, 'gen_ai.token.type': 'output' },
      };
      this.#typed.set(common, typed);
    }
    if (s.inputTokens !== undefined) m.tokens.record(s.inputTokens, typed.input);
    if (s.outputTokens !== undefined) m.tokens.record(s.outputTokens, typed.output);
  }

  /** Exports what is left, waiting at most FLUSH_MS for the collector; never throws. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), FLUSH_MS);
    });
    const done = Promise.all([this.#traces.shutdown(), this.#meters.shutdown()]).then(
      () => 'done' as const,
      (e: unknown) => {
        this.#once(`telemetry: the last export failed: ${(e as Error).message}`);
        return 'done' as const;
      },
    );
    const how = await Promise.race([done, late]);
    clearTimeout(timer);
    if (how === 'late')
      this.#once(
        `telemetry: the collector took the last export for longer than ${FLUSH_MS / 1000}s; gave up on it`,
      );
    diag.disable();
  }

  /** The SDK's warnings and errors as gw warnings, each said once (digits aside: "Dropped 12 spans"). */
  #diagLogger(): Parameters<typeof diag.setLogger>[0] {
    const say = (message: string, ...args: unknown[]): void => {
      const extra = args.map(messageOf).join(' ');
      this.#once(`telemetry: ${`${messageOf(message)} ${extra}`.trim()}`);
    };
    const quiet = (): void => {};
    return { error: say, warn: say, info: quiet, debug: quiet, verbose: quiet };
  }

  #once(text: string): void {
    const key = text.replace(/\d+/g, '#');
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#warn(text);
  }
}

/**
 * The text of what the SDK logs: a string, an Error, or an exception it serialised to JSON (with its stack, which
 * is not for a user's eyes).
 */
function messageOf(v: unknown): string {
  if (v instanceof Error) return v.message;
  if (typeof v !== 'string') return '';
  if (v.startsWith('{')) {
    try {
      const o = JSON.parse(v) as { message?: unknown };
      if (typeof o.message === 'string') return o.message;
    } catch {
      // not JSON after all: the text as it is
    }
  }
  return v;
}

function genAiMetrics(meters: MeterProvider): GenAiMetrics {
  const meter = meters.getMeter('gw');
  const seconds = (name: string, description: string, buckets: number[]): Histogram =>
    meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: buckets } });
  return {
    duration: seconds('gen_ai.client.operation.duration', 'GenAI operation duration', DURATION_BUCKETS),
    ttfc: seconds(
      'gen_ai.client.operation.time_to_first_chunk',
      'Time from the request until the first chunk of its stream',
      DURATION_BUCKETS,
    ),
    perChunk: seconds(
      'gen_ai.client.operation.time_per_output_chunk',
      'Time between consecutive chunks of a stream',
      CHUNK_BUCKETS,
    ),
    tokens: meter.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'Number of input and output tokens used',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
  };
}
