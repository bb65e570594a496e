/**
 * The spans of `--otlp`, encoded by gw and sent by OpenTelemetry's OTLP/HTTP exporter.
 *
 * A load run makes thousands of spans a second. Through the SDK (a ReadableSpan object per request held in its
 * BatchSpanProcessor, then its serializer writing every attribute's key and value for every span) they cost
 * ~12 µs of CPU each here, taken from the two cores the generator and the gateway under test share; encoded
 * straight from the columns they crossed the thread in (otlp-batch.ts), ~2.5 µs. What requests alike share (trace
 * id, name, kind, server.address, gen_ai.request.model, url.path, status...) is encoded once per combination; a
 * span adds its span id, times and own attributes (status code, request id, tokens). The bytes are the SDK
 * serializer's, field for field (test/unit/core/otlp-export.test.ts compares them).
 *
 * Sending is the exporter's own (`@opentelemetry/otlp-exporter-base`, built as the official trace exporter builds
 * it: its OTEL_EXPORTER_OTLP_* settings, retries, timeout, concurrency limit) with this encoder as its serializer;
 * answers are read by the official trace serializer. Spans wait at most SCHEDULE_MS and leave EXPORT_SPANS at a
 * time, one export at a time, as the SDK's BatchSpanProcessor let them.
 */
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes } from '@opentelemetry/api';
import { newSpanRow, readSpanRow, type SpanBatch } from './otlp-batch.js';
import { FIXED32, FIXED64, LEN, ProtoWriter, unixNanos, VARINT } from './proto-writer.js';

/** Spans per export, and the longest a span waits for one. */
const EXPORT_SPANS = 4_096;
const SCHEDULE_MS = 2_000;

/** What spans alike share, encoded once: the fields around their own. */
export interface SpanCommon {
  /** trace_id (field 1). */
  head: Buffer;
  /** name, kind (fields 5, 6). */
  kind: Buffer;
  /** The shared attributes (field 9, each a KeyValue). */
  attributes: Buffer;
  /** The dropped counts, status and flags (fields 10 to 16). */
  tail: Buffer;
}

/** A batch of rows with the common part of each row's span. */
export interface SpanRows {
  batch: SpanBatch;
  commons: SpanCommon[];
}

/** Encodes the common part of spans: `attributes` in the order the spans carry them. */
export function spanCommon(
  traceId: string,
  name: string,
  attributes: Attributes,
  errorCode: string | undefined,
): SpanCommon {
  const head = new ProtoWriter(32).tag(1, LEN).hex(traceId).finish();
  const kind = new ProtoWriter(64)
    .tag(5, LEN)
    .string(name)
    .tag(6, VARINT)
    .varint(SpanKind.CLIENT + 1) // OTLP numbers kinds from 1 (0 is unspecified)
    .finish();
  const a = new ProtoWriter(256);
  for (const [key, value] of Object.entries(attributes))
    if (value !== undefined) keyValue(a, 9, keyField(key), value as string | number);
  // The dropped counts (10, 12, 14: none), the status (15), the W3C flags of the span's context and "its parent
  // is known to be local" (16: it has none), written as the SDK's serializer writes them.
  const t = new ProtoWriter(64).tag(10, VARINT).varint(0).tag(12, VARINT).varint(0).tag(14, VARINT).varint(0);
  const status = t.tag(15, LEN).begin();
  if (errorCode) t.tag(2, LEN).string(errorCode);
  t.tag(3, VARINT)
    .varint(errorCode !== undefined ? SpanStatusCode.ERROR : SpanStatusCode.UNSET)
    .end(status);
  t.tag(16, FIXED32).fixed32(TraceFlags.SAMPLED | 0x100);
  return { head, kind, attributes: a.finish(), tail: t.finish() };
}

/**
 * An attribute (a KeyValue, `field` of its message): a string, a whole number as int64, another number as a
 * double, as the SDK's serializer writes them (gw's numbers are never negative: a negative one goes as a double).
 */
function keyValue(w: ProtoWriter, field: number, key: Buffer, value: string | number): void {
  const kv = w.tag(field, LEN).begin();
  w.raw(key).tag(2, LEN);
  const v = w.begin();
  if (typeof value === 'string') w.tag(1, LEN).string(value);
  else if (Number.isInteger(value) && value >= 0 && value < 2 ** 63) w.tag(3, VARINT).varint(value);
  else w.tag(4, FIXED64).double(value);
  w.end(v).end(kv);
}

const scratch = newSpanRow();

/** A KeyValue's key field, encoded (`key` of keyValue). */
function keyField(key: string): Buffer {
  return new ProtoWriter(64).tag(1, LEN).string(key).finish();
}

// The keys of a span's own attributes, encoded once.
const STATUS_CODE = keyField('http.response.status_code');
const REQUEST_ID = keyField('gw.request_id');
const INPUT_TOKENS = keyField('gen_ai.usage.input_tokens');
const CACHED_TOKENS = keyField('gen_ai.usage.cache_read.input_tokens');
const OUTPUT_TOKENS = keyField('gen_ai.usage.output_tokens');

function spanMessage(w: ProtoWriter, rows: SpanRows, row: number): void {
  const c = rows.commons[row] as SpanCommon;
  const s = readSpanRow(rows.batch, row, scratch);
  w.tag(2, LEN);
  // Spans take 150 to 400 bytes: two for their length, moved when it takes one.
  const at = w.begin(2);
  w.raw(c.head).tag(2, LEN).hex(s.spanId).raw(c.kind);
  const start = unixNanos(s.startUnixMs);
  const end = unixNanos(s.startUnixMs + s.durationMs);
  w.tag(7, FIXED64).fixed64(start.lo, start.hi).tag(8, FIXED64).fixed64(end.lo, end.hi);
  w.raw(c.attributes);
  if (s.status > 0) keyValue(w, 9, STATUS_CODE, s.status);
  if (s.requestId !== undefined) keyValue(w, 9, REQUEST_ID, s.requestId);
  if (!Number.isNaN(s.inputTokens)) keyValue(w, 9, INPUT_TOKENS, s.inputTokens);
  if (!Number.isNaN(s.cachedInputTokens)) keyValue(w, 9, CACHED_TOKENS, s.cachedInputTokens);
  if (!Number.isNaN(s.outputTokens)) keyValue(w, 9, OUTPUT_TOKENS, s.outputTokens);
  w.raw(c.tail).end(at, 2);
}

/** An ExportTraceServiceRequest of `rows` from one resource (its service.name) and scope (`gw`). */
export function traceRequest(serviceName: string, all: SpanRows[]): Buffer {
  let count = 0;
  for (const r of all) count += r.batch.count;
  const w = new ProtoWriter(512 + count * 400);
  const resourceSpans = w.tag(1, LEN).begin(3);
  const resource = w.tag(1, LEN).begin();
  keyValue(w, 1, keyField('service.name'), serviceName);
  w.tag(2, VARINT).varint(0).end(resource);
  const scopeSpans = w.tag(2, LEN).begin(3);
  const scope = w.tag(1, LEN).begin();
  w.tag(1, LEN).string('gw').end(scope);
  for (const rows of all) for (let row = 0; row < rows.batch.count; row++) spanMessage(w, rows, row);
  return w.end(scopeSpans, 3).end(resourceSpans, 3).finish();
}

/** One export at a time of the spans waiting (EXPORT_SPANS at a time, the first waiting at most SCHEDULE_MS). */
export class SpanExport {
  readonly #exporter: OTLPExporterBase<SpanRows[]>;
  /** Told of each export that failed (its error's message). */
  readonly #failed: (message: string) => void;
  /** Told of every row that left the queue, exported or not. */
  readonly #done: (rows: number) => void;
  #waiting: SpanRows[] = [];
  #count = 0;
  #timer: NodeJS.Timeout | undefined;
  #exporting: Promise<void> | undefined;

  constructor(o: {
    url: string;
    serviceName: string;
    timeoutMillis: number;
    failed: (message: string) => void;
    done: (rows: number) => void;
  }) {
    this.#failed = o.failed;
    this.#done = o.done;
    const serializer = {
      serializeRequest: (all: SpanRows[]) => traceRequest(o.serviceName, all),
      deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data),
    };
    // As @opentelemetry/exporter-trace-otlp-proto's OTLPTraceExporter makes its delegate.
    const http = convertLegacyHttpOptions(
      { url: o.url, timeoutMillis: o.timeoutMillis },
      'TRACES',
      'v1/traces',
      {
        'Content-Type': 'application/x-protobuf',
      },
    );
    const counted = { name: 'span' as const, countItems: (all: SpanRows[]) => countRows(all) };
    this.#exporter = new OTLPExporterBase(
      createOtlpHttpExportDelegate(http, serializer, 'otlp_http_span_exporter', counted, undefined),
    );
  }

  add(rows: SpanRows): void {
    this.#waiting.push(rows);
    this.#count += rows.batch.count;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#count >= EXPORT_SPANS) this.#next();
    else if (this.#count > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#next(), SCHEDULE_MS);
      this.#timer.unref();
    }
  }

  /** Starts the next export unless one is under way (which starts the next when it ends). */
  #next(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#exporting !== undefined || this.#count === 0) return;
    const taken: SpanRows[] = [];
    let n = 0;
    while (n < EXPORT_SPANS && this.#waiting.length > 0) {
      const rows = this.#waiting.shift() as SpanRows;
      taken.push(rows);
      n += rows.batch.count;
    }
    this.#count -= n;
    const exported = new Promise<void>((resolve) => {
      this.#exporter.export(taken, (result) => {
        if (result.error !== undefined) this.#failed(result.error.message);
        resolve();
      });
    }).catch((e: unknown) => this.#failed(e instanceof Error ? e.message : String(e)));
    this.#exporting = exported.then(() => {
      this.#exporting = undefined;
      this.#done(n);
      this.#schedule();
    });
  }

  /** Exports every span waiting (the caller bounds how long it waits). */
  async close(): Promise<void> {
    for (;;) {
      if (this.#exporting !== undefined) await this.#exporting;
      else if (this.#count > 0) this.#next();
      else break;
    }
    await this.#exporter.shutdown();
  }
}

function countRows(all: SpanRows[]): number {
  let n = 0;
  for (const r of all) n += r.batch.count;
  return n;
}
