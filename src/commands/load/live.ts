/**
 * The live line of `gw load` on a TTY: in flight, done, errors, current p50/p95, requests/s. Drawn on stderr at
 * most 4 times a second, only when progress is shown (a TTY, neither --json nor --quiet).
 */
import type { LoadProgress } from '../../load/run.js';
import type { Output } from '../../ui/output.js';

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

  /** Redraws the line (throttled). */
  update(p: LoadProgress): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.#last < MIN_GAP_MS) return;
    this.#last = now;
    const label = p.label !== '' ? `${p.label}: ` : '';
    const text = `${label}in flight ${p.inFlight} · done ${p.done} · errors ${p.errors} · p50 ${ms(p.p50Ms)} p95 ${ms(p.p95Ms)} · ${p.requestsPerS.toFixed(1)} req/s`;
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
