/**
 * The live line of `gw load` on a TTY: in flight, done, errors, current p50/p95, requests/s. Drawn on stderr at
 * most 4 times a second, only when progress is shown (a TTY, neither --json nor --quiet).
 */
import { performance } from 'node:perf_hooks';
import type { Output } from '../ui/output.js';
import type { Recorder } from './recorder.js';

const MIN_GAP_MS = 250;

const ms = (x: number): string => (x < 1000 ? `${x.toFixed(x < 10 ? 1 : 0)}ms` : `${(x / 1000).toFixed(2)}s`);

/** A throttled status line; every method is a no-op when progress is not shown. */
export class LiveLine {
  #last = 0;
  #drawn = false;
  constructor(
    private readonly out: Output,
    private readonly enabled: boolean,
  ) {}

  /** Redraws the line for a step (throttled). */
  update(label: string, rec: Recorder): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (now - this.#last < MIN_GAP_MS) return;
    this.#last = now;
    const l = rec.live(now);
    const text = `${label}in flight ${l.inFlight} · done ${l.done} · errors ${l.errors} · p50 ${ms(l.p50)} p95 ${ms(l.p95)} · ${l.rps.toFixed(1)} req/s`;
    this.out.io.stderr.write(`\r${this.out.redactor.redact(text)}\x1b[K`);
    this.#drawn = true;
  }

  /** Clears the line (before the report is printed). */
  clear(): void {
    if (!this.#drawn) return;
    this.out.io.stderr.write('\r\x1b[K');
    this.#drawn = false;
  }
}
