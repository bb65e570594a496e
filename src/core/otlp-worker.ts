/**
 * The OTLP export's own thread (dist/otlp-worker.js): spans are encoded, metrics aggregated and both sent here,
 * so the thread that sends and times the gateway's requests only hands over finished requests in batches.
 * Messages in: `{ spans }` (a SpanBatch), `{ close: true }`; out: `{ warn }`, `{ done: n }` (requests that left
 * the export, sent or given up on), `{ closed: true }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SpanBatch } from './otlp-batch.js';
import { OtlpExport, type OtlpOptions } from './otlp.js';

type Message = { spans: SpanBatch } | { close: true };

const port = parentPort;
if (port !== null) {
  const otlp = new OtlpExport({
    ...(workerData as Omit<OtlpOptions, 'warn'>),
    warn: (text) => port.postMessage({ warn: text }),
    done: (n) => port.postMessage({ done: n }),
  });
  port.on('message', (m: Message) => {
    if ('spans' in m) otlp.add(m.spans);
    else void otlp.close().then(() => port.postMessage({ closed: true }));
  });
}
