/**
 * `--otlp` off the measuring thread. Building, aggregating and serialising a span and four histogram points per
 * request costs the OpenTelemetry SDK tens of microseconds; at the thousands of requests a second of `gw load`
 * that halved the run's own rate (measured: 17k req/s without, 4-7k with, tiny requests on 2 cores). Here the
 * command's thread only pushes each finished request on an array and posts the array to a worker every
 * BATCH_MS (or every BATCH_SPANS), where src/core/otlp-worker.ts runs the same OtlpExport. Memory stays bounded:
 * past MAX_WAITING requests the worker has not recorded yet, new ones are dropped with a warning.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { RequestSpan } from '../client/trace.js';
import { FLUSH_MS, OtlpExport, type OtlpOptions } from './otlp.js';

const BATCH_MS = 250;
const BATCH_SPANS = 2048;
const MAX_WAITING = 65_536;

/** What records finished requests and closes (bounded) at the end. */
export interface OtlpSink {
  record(s: RequestSpan): void;
  close(): Promise<void>;
}

/**
 * The export on its own thread when `workerFile` exists (the npm build's dist/otlp-worker.js), else on this one
 * (the single executable, which carries no separate file to start a worker from).
 */
export function startOtlpExport(o: OtlpOptions, workerFile: string | undefined): OtlpSink {
  if (workerFile === undefined || !existsSync(workerFile)) return new OtlpExport(o);
  return new OtlpThread(o, workerFile);
}

class OtlpThread implements OtlpSink {
  readonly #worker: Worker;
  readonly #warn: (text: string) => void;
  readonly #timer: NodeJS.Timeout;
  #batch: RequestSpan[] = [];
  /** Requests posted that the worker has not recorded yet. */
  #inWorker = 0;
  #dropped = false;
  #closed: Promise<void> | undefined;
  #onClosed: (() => void) | undefined;

  constructor(o: OtlpOptions, file: string) {
    const { warn, ...data } = o;
    this.#warn = warn;
    this.#worker = new Worker(file, { workerData: data });
    this.#worker.on('message', (m: { warn?: string; done?: number; closed?: boolean }) => {
      if (m.warn !== undefined) this.#warn(m.warn);
      if (m.done !== undefined) this.#inWorker -= m.done;
      if (m.closed === true) this.#onClosed?.();
    });
    this.#worker.on('error', (e) => this.#warn(`telemetry: the export stopped: ${e.message}`));
    this.#worker.on('exit', () => this.#onClosed?.());
    this.#timer = setInterval(() => this.#post(), BATCH_MS);
    this.#timer.unref();
    this.#worker.unref();
  }

  record(s: RequestSpan): void {
    if (this.#inWorker + this.#batch.length >= MAX_WAITING) {
      if (!this.#dropped) this.#warn('telemetry: the export falls behind; requests past it are not exported');
      this.#dropped = true;
      return;
    }
    this.#batch.push(s);
    if (this.#batch.length >= BATCH_SPANS) this.#post();
  }

  #post(): void {
    if (this.#batch.length === 0) return;
    this.#worker.postMessage({ spans: this.#batch });
    this.#inWorker += this.#batch.length;
    this.#batch = [];
  }

  /** Hands over what is left and waits for the worker's last export (which is bounded by FLUSH_MS itself). */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      clearInterval(this.#timer);
      this.#post();
      // A margin over the worker's own bound, for a worker too busy to answer.
      const late = setTimeout(() => this.#onClosed?.(), FLUSH_MS + 2_000);
      this.#onClosed = () => {
        clearTimeout(late);
        resolve();
      };
      this.#worker.postMessage({ close: true });
    }).then(() => this.#worker.terminate().then(() => undefined));
    return this.#closed;
  }
}
