/**
 * The OTLP export's own thread (dist/otlp-worker.js): the OpenTelemetry SDK builds, aggregates and serialises
 * here, so the thread that sends and times the gateway's requests only hands over finished requests in batches.
 * Messages in: `{ spans }` (RequestSpan[]), `{ close: true }`; out: `{ warn }`, `{ done: n }` (spans recorded),
 * `{ closed: true }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { RequestSpan } from '../client/trace.js';
import { OtlpExport, type OtlpOptions } from './otlp.js';

type Message = { spans: RequestSpan[] } | { close: true };

const port = parentPort;
if (port !== null) {
  const otlp = new OtlpExport({
    ...(workerData as Omit<OtlpOptions, 'warn'>),
    warn: (text) => port.postMessage({ warn: text }),
  });
  port.on('message', (m: Message) => {
    if ('spans' in m) {
      for (const s of m.spans) otlp.record(s);
      port.postMessage({ done: m.spans.length });
    } else void otlp.close().then(() => port.postMessage({ closed: true }));
  });
}
