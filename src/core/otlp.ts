/**
 * `--otlp <url>`: each gateway request as an OTLP span, and the OpenTelemetry GenAI client metrics, sent over
 * OTLP/HTTP (protobuf) with the OpenTelemetry JS exporters. This module is imported only when telemetry was asked
 * for, so none of it costs a command without it.
 *
 * Requests arrive finished, in batches of columns (otlp-batch.ts). A finished request is already a span (its ids,
 * times and attributes are known), so none goes through the SDK's tracer, which would create, sample, check and
 * end a live span for it, nor through the SDK's metric instruments, which sort and hash the attributes of every
 * measurement (together ~40 µs of CPU a request, a third of a core at a load run's rate): spans are encoded from
 * the columns (otlp-spans.ts) and the GenAI metrics aggregated by gw (otlp-metrics.ts), both once per distinct
 * combination of what requests share, and sent by the OpenTelemetry exporters. The spans keep gw's ids: the trace
 * id of the command and the span id of the request's `traceparent`.
 *
 * Nothing here can fail a run: export errors, a refused or slow collector and dropped spans become warnings
 * (each said once), also what the SDK tells its diagnostic logger. Exports run in the background; the last flush
 * when the command ends is bounded (FLUSH_MS).
 */
import { diag, DiagLogLevel, type Attributes } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InstrumentType, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { newSpanRow, readSpanRow, SpanStrings, type SpanBatch, type SpanRow } from './otlp-batch.js';
import { GenAiMetrics, type Series } from './otlp-metrics.js';
import { SpanExport, spanCommon, type SpanCommon } from './otlp-spans.js';

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
  /** Told how many requests left the export's queue (sent or given up on). */
  done?: ((requests: number) => void) | undefined;
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

/** Combinations of what requests share kept for reuse (paths with ids make new ones: past this, built again). */
const MAX_COMMON = 1024;

/** What the spans and metrics of requests alike share, built once per combination. */
interface Common {
  span: SpanCommon;
  /** The GenAI metrics' series (GenAI operations only). */
  series: Series | undefined;
}

/** A running OTLP export: `add` each batch of finished requests, `close` once at the end. */
export class OtlpExport {
  readonly #spans: SpanExport;
  readonly #meters: MeterProvider;
  readonly #metrics: GenAiMetrics;
  readonly #warned = new Set<string>();
  readonly #warn: (text: string) => void;
  readonly #strings = new SpanStrings();
  /** By the row's numbers into the table of strings (cleared when the table starts again). */
  readonly #commons = new Map<string, Common>();
  readonly #row = newSpanRow();

  constructor(o: OtlpOptions) {
    this.#warn = o.warn;
    diag.setLogger(this.#diagLogger(), DiagLogLevel.WARN);
    const serviceName = o.serviceName ?? 'gw';
    const resource = resourceFromAttributes({ 'service.name': serviceName });
    const timeoutMillis = FLUSH_MS;
    this.#spans = new SpanExport({
      url: o.endpoints.traces,
      serviceName,
      timeoutMillis,
      failed: (message) => this.#once(`telemetry: spans not exported: ${message}`),
      done: o.done ?? (() => {}),
    });
    this.#metrics = new GenAiMetrics(resource);
    const interval = o.metricIntervalMs ?? 10_000;
    const reader = new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: o.endpoints.metrics, timeoutMillis }),
      exportIntervalMillis: interval,
      // The reader refuses a timeout longer than its interval.
      exportTimeoutMillis: Math.min(timeoutMillis, interval),
      metricProducers: [this.#metrics],
    });
    this.#metrics.temporality = () => reader.selectAggregationTemporality(InstrumentType.HISTOGRAM);
    this.#meters = new MeterProvider({ resource, readers: [reader] });
  }

  /** Records a batch of finished requests: their spans, and the GenAI metrics of GenAI operations. */
  add(batch: SpanBatch): void {
    if (this.#strings.take(batch)) this.#commons.clear();
    const commons: SpanCommon[] = [];
    for (let i = 0; i < batch.count; i++) {
      const row = readSpanRow(batch, i, this.#row);
      const c = this.#common(row);
      commons.push(c.span);
      if (c.series !== undefined) this.#metrics.record(row, batch.gaps, c.series);
    }
    this.#spans.add({ batch, commons });
  }

  /**
   * What a request's span and metrics share. A load run repeats a handful of combinations thousands of times a
   * second: each is built once (no URL parsed, nothing encoded per request), up to MAX_COMMON of them.
   */
  #common(r: SpanRow): Common {
    const key = `${r.trace} ${r.origin} ${r.method} ${r.path} ${r.model} ${r.error}`;
    const known = this.#commons.get(key);
    if (known !== undefined) return known;
    const text = (i: number): string => this.#strings.get(i) as string;
    const method = text(r.method);
    const path = text(r.path);
    const model = this.#strings.get(r.model);
    const errorCode = this.#strings.get(r.error);
    const op = genAiOperation(method, path);
    const url = new URL(text(r.origin));
    const shared: Attributes = {
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    };
    if (op !== undefined) {
      shared['gen_ai.operation.name'] = op.name;
      shared['gen_ai.provider.name'] = op.provider;
    }
    if (model !== undefined) shared['gen_ai.request.model'] = model;
    if (errorCode !== undefined) shared['error.type'] = errorCode;
    // GenAI spans are named "<operation> <model>"; others by their method (a path holds ids: too many names).
    const name = op !== undefined ? `${op.name} ${model ?? ''}`.trim() : method;
    const attributes = { ...shared, 'http.request.method': method, 'url.path': path };
    const common: Common = {
      span: spanCommon(text(r.trace), name, attributes, errorCode),
      series: op !== undefined ? this.#metrics.series(shared) : undefined,
    };
    if (this.#commons.size < MAX_COMMON) this.#commons.set(key, common);
    return common;
  }

  /** Exports what is left, waiting at most FLUSH_MS for the collector; never throws. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), FLUSH_MS);
    });
    const done = Promise.all([this.#spans.close(), this.#meters.shutdown()]).then(
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
