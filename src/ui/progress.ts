import type { Output } from './output.js';
import { neutralize } from './sanitize.js';

/** A live status line on stderr; every method is a no-op when progress is not shown. */
export interface Spinner {
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  stop(): void;
}

const NOOP: Spinner = { update() {}, succeed() {}, fail() {}, stop() {} };

/** Spinner frames: one per redraw. */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** How often the spinner redraws (its elapsed time moves): once a second, a few dozen bytes each. */
export const SPINNER_TICK_MS = 1000;

/** How often the byte bar redraws at most. */
export const BAR_TICK_MS = 250;

/** `12s`, `3m05s`: the spinner's elapsed time. */
export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/**
 * Fits a status line in one terminal row: a terminal that reports no width (0 or undefined, as under `script`)
 * counts as 80 columns, so a line never wraps and `\r` always returns to its start.
 */
export function fitLine(text: string, columns: number | undefined): string {
  const width = columns !== undefined && columns >= 20 ? columns - 1 : 79;
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

/**
 * Progress on stderr: a one-line spinner when stderr is a TTY and neither --json nor --quiet is set. It redraws
 * once a second (so the elapsed time moves between polls) with `\r` and clear-to-end-of-line, never more than one
 * row, and never touches standard input (no raw mode: Ctrl-C stays a signal).
 */
export class Progress {
  constructor(private readonly out: Output) {}

  /** True when progress is drawn. */
  get enabled(): boolean {
    return this.out.decorate;
  }

  /** Starts a spinner. */
  spinner(text: string): Promise<Spinner> {
    if (!this.enabled) return Promise.resolve(NOOP);
    const err = this.out.io.stderr as NodeJS.WritableStream & { columns?: number };
    const started = Date.now();
    let label = text;
    let frame = 0;
    let drawn = false;
    const draw = (): void => {
      const line = `${FRAMES[frame++ % FRAMES.length] ?? '-'} ${label} ${formatElapsed(Date.now() - started)}`;
      err.write(`\r${fitLine(this.out.redactor.redact(neutralize(line)), err.columns)}\x1b[K`);
      drawn = true;
    };
    const timer = setInterval(draw, SPINNER_TICK_MS);
    timer.unref();
    draw();
    const end = (mark?: string, t?: string): void => {
      clearInterval(timer);
      if (drawn) err.write('\r\x1b[K');
      drawn = false;
      if (mark !== undefined) err.write(`${mark} ${this.out.redactor.redact(neutralize(t ?? label))}\n`);
    };
    return Promise.resolve({
      update: (t) => {
        label = t;
      },
      succeed: (t) => end('✔', t),
      fail: (t) => end('✖', t),
      stop: () => end(),
    });
  }

  /** A one-line byte progress bar with size and rate, redrawn in place. */
  bar(label: string, total: number | undefined): { tick(done: number): void; done(): void } {
    if (!this.enabled) return { tick() {}, done() {} };
    const err = this.out.io.stderr;
    const started = Date.now();
    let last = 0;
    const draw = (n: number): void => {
      const secs = Math.max(0.001, (Date.now() - started) / 1000);
      const rate = `${formatBytes(n / secs)}/s`;
      const width = 24;
      const frac = total !== undefined && total > 0 ? Math.min(1, n / total) : undefined;
      const barText =
        frac === undefined
          ? ''
          : `[${'#'.repeat(Math.round(frac * width)).padEnd(width, '.')}] ${Math.floor(frac * 100)}% `;
      const size = total !== undefined ? `${formatBytes(n)} / ${formatBytes(total)}` : formatBytes(n);
      const cols = (err as { columns?: number }).columns;
      err.write(`\r${fitLine(`${label} ${barText}${size} ${rate}`, cols)}\x1b[K`);
    };
    return {
      tick(n) {
        const now = Date.now();
        if (now - last < BAR_TICK_MS) return;
        last = now;
        draw(n);
      },
      done() {
        err.write('\r\x1b[K');
      },
    };
  }
}

/** `1.5 MiB` style sizes. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? String(Math.round(v)) : v.toFixed(1)} ${units[i]}`;
}
