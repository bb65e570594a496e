/**
 * A small OTLP/HTTP receiver for tests: it decodes what an exporter sends with the official opentelemetry-proto
 * definitions (test/fixtures/otlp-proto) through protobufjs, as a collector would, and keeps the spans and the
 * metrics. `mode` makes it refuse exports (503) or hold them without answering (a collector that hangs).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { closeAfterTest } from './servers.js';

const PROTO = join(import.meta.dirname, '..', 'fixtures', 'otlp-proto');

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(PROTO, target);
root.loadSync([
  'opentelemetry/proto/collector/trace/v1/trace_service.proto',
  'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
]);
const TRACES = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const METRICS = root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');

/** A span as the receiver decoded it (ids in hex, attributes as plain values). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  startNs: bigint;
  endNs: bigint;
}

/** A metric data point of a histogram, with its metric's name and unit. */
export interface ReceivedHistogramPoint {
  name: string;
  unit: string;
  count: number;
  sum: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL to give `--otlp` (the exporter appends v1/traces and v1/metrics). */
  url: string;
  spans: ReceivedSpan[];
  /** Every metric name seen, and the histogram points of each export (cumulative: the last one counts). */
  metricNames: Set<string>;
  points: ReceivedHistogramPoint[][];
  /** Requests received per path, and the content types they carried. */
  requests: Array<{ path: string; contentType: string | undefined }>;
  /** The bodies of the exports it took, as sent. */
  bodies: Array<{ path: string; body: Buffer }>;
}

/** An ExportTraceServiceRequest as a plain object (every field, defaults included; 64-bit numbers as strings). */
export function decodeTraces(body: Buffer): Record<string, unknown> {
  return TRACES.toObject(TRACES.decode(body), { longs: String, defaults: true, bytes: String });
}

/** An ExportMetricsServiceRequest as a plain object (every field, defaults included; 64-bit numbers as strings). */
export function decodeMetrics(body: Buffer): Record<string, unknown> {
  return METRICS.toObject(METRICS.decode(body), { longs: String, defaults: true });
}

type Attr = { key: string; value: Record<string, unknown> };

function attributes(list: Attr[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of list ?? []) {
    const v = a.value;
    out[a.key] =
      v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue));
  }
  return out;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function takeTraces(r: OtlpReceiver, body: Buffer): void {
  const req = TRACES.toObject(TRACES.decode(body), { longs: String, defaults: false }) as {
    resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
  };
  for (const rs of req.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? []) {
        r.spans.push({
          traceId: hex(s.traceId as Uint8Array),
          spanId: hex(s.spanId as Uint8Array),
          name: s.name as string,
          kind: s.kind as number,
          attributes: attributes(s.attributes as Attr[]),
          status: s.status ?? {},
          startNs: BigInt(s.startTimeUnixNano as string),
          endNs: BigInt(s.endTimeUnixNano as string),
        });
      }
}

function takeMetrics(r: OtlpReceiver, body: Buffer): void {
  const req = METRICS.toObject(METRICS.decode(body), { longs: String, defaults: false }) as {
    resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: Array<Record<string, unknown>> }> }>;
  };
  const points: ReceivedHistogramPoint[] = [];
  for (const rm of req.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? []) {
        r.metricNames.add(m.name as string);
        const h = m.histogram as { dataPoints?: Array<Record<string, unknown>> } | undefined;
        for (const p of h?.dataPoints ?? []) {
          points.push({
            name: m.name as string,
            unit: (m.unit as string | undefined) ?? '',
            count: Number(p.count),
            sum: Number(p.sum ?? 0),
            attributes: attributes(p.attributes as Attr[]),
          });
        }
      }
  r.points.push(points);
}

/** Starts a receiver on 127.0.0.1 (closed after the test). */
export async function startOtlpReceiver(mode: 'ok' | 'refuse' | 'hang' = 'ok'): Promise<OtlpReceiver> {
  const r: OtlpReceiver = {
    url: '',
    spans: [],
    metricNames: new Set(),
    points: [],
    requests: [],
    bodies: [],
  };
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] });
      if (mode === 'hang') {
        held.push(res);
        return;
      }
      if (mode === 'refuse') {
        res.writeHead(503).end();
        return;
      }
      const body = Buffer.concat(chunks);
      r.bodies.push({ path: req.url ?? '', body });
      if (req.url === '/v1/traces') takeTraces(r, body);
      else if (req.url === '/v1/metrics') takeMetrics(r, body);
      // An empty Export*ServiceResponse: full success.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // Held exports are ended by closeAllConnections with the server's other connections.
  closeAfterTest(server);
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return r;
}
