/**
 * `--otlp` off the measuring thread: the command's thread only writes each finished request into the columns of
 * a batch (otlp-batch.ts) and posts the batch every BATCH_MS (or every BATCH_SPANS requests) to a worker, where
 * src/core/otlp-worker.ts runs OtlpExport. Memory stays bounded: past MAX_WAITING requests that have not left the
 * export yet (a slow or hanging collector), new ones are dropped with a warning.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { RequestSpan } from '../client/trace.js';
import { SpanBatcher, type SpanBatch } from './otlp-batch.js';
import { FLUSH_MS, OtlpExport, type OtlpOptions } from './otlp.js';

const BATCH_MS = 250;
const BATCH_SPANS = 2048;
const MAX_WAITING = 65_536;

/** What records finished requests and closes (bounded) at the end. */
export interface OtlpSink {
  record(s: RequestSpan): void;
  close(): Promise<void>;
}

/** Where batches go; `done` is told how many requests left the export. */
interface Port {
  post(batch: SpanBatch, transfer: ArrayBuffer[]): void;
  close(): Promise<void>;
}

/**
 * The export on its own thread when `workerFile` exists (the npm build's dist/otlp-worker.js), else on this one
 * (the single executable, which carries no separate file to start a worker from).
 */
export function startOtlpExport(o: OtlpOptions, workerFile: string | undefined): OtlpSink {
  if (workerFile === undefined || !existsSync(workerFile))
    return new OtlpBatches(o.warn, (done) => thisThread(o, done));
  return new OtlpBatches(o.warn, (done) => workerThread(o, workerFile, done));
}

class OtlpBatches implements OtlpSink {
  readonly #port: Port;
  readonly #warn: (text: string) => void;
  readonly #timer: NodeJS.Timeout;
  readonly #batch = new SpanBatcher(BATCH_SPANS);
  /** Requests posted that have not left the export yet. */
  #posted = 0;
  #dropped = false;
  #closed: Promise<void> | undefined;

  constructor(warn: (text: string) => void, port: (done: (requests: number) => void) => Port) {
    this.#warn = warn;
    this.#port = port((n) => (this.#posted -= n));
    this.#timer = setInterval(() => this.#post(), BATCH_MS);
    this.#timer.unref();
  }

  record(s: RequestSpan): void {
    if (this.#posted + this.#batch.count >= MAX_WAITING) {
      if (!this.#dropped) this.#warn('telemetry: the export falls behind; requests past it are not exported');
      this.#dropped = true;
      return;
    }
    this.#batch.add(s);
    if (this.#batch.full) this.#post();
  }

  #post(): void {
    const taken = this.#batch.take();
    if (taken === undefined) return;
    this.#posted += taken.batch.count;
    this.#port.post(taken.batch, taken.transfer);
  }

  /** Hands over what is left and waits for the last export (which is bounded by FLUSH_MS itself). */
  close(): Promise<void> {
    this.#closed ??= (() => {
      clearInterval(this.#timer);
      this.#post();
      return this.#port.close();
    })();
    return this.#closed;
  }
}

function thisThread(o: OtlpOptions, done: (requests: number) => void): Port {
  const otlp = new OtlpExport({ ...o, done });
  return { post: (batch) => otlp.add(batch), close: () => otlp.close() };
}

/** The worker's messages: in `{ spans }` (a SpanBatch), `{ close: true }`; out `{ warn }`, `{ done }`, `{ closed }`. */
function workerThread(o: OtlpOptions, file: string, done: (requests: number) => void): Port {
  const { warn, ...data } = o;
  const worker = new Worker(file, { workerData: data });
  let onClosed: (() => void) | undefined;
  worker.on('message', (m: { warn?: string; done?: number; closed?: boolean }) => {
    if (m.warn !== undefined) warn(m.warn);
    if (m.done !== undefined) done(m.done);
    if (m.closed === true) onClosed?.();
  });
  worker.on('error', (e) => warn(`telemetry: the export stopped: ${e.message}`));
  worker.on('exit', () => onClosed?.());
  worker.unref();
  return {
    post: (batch, transfer) => worker.postMessage({ spans: batch }, transfer),
    close: () =>
      new Promise<void>((resolve) => {
        // A margin over the worker's own bound, for a worker too busy to answer.
        const late = setTimeout(() => onClosed?.(), FLUSH_MS + 2_000);
        onClosed = () => {
          clearTimeout(late);
          resolve();
        };
        worker.postMessage({ close: true });
      }).then(() => worker.terminate().then(() => undefined)),
  };
}
