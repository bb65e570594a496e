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
 * counts as 80 columns, so a line never wraps and `\r` always returns to its start. `reserve` keeps that many
 * columns free for what follows the text (the spinner's elapsed time).
 */
export function fitLine(text: string, columns: number | undefined, reserve = 0): string {
  const width = (columns !== undefined && columns >= 20 ? columns - 1 : 79) - reserve;
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > width ? `${flat.slice(0, Math.max(0, width - 1))}…` : flat;
}

type Stderr = NodeJS.WritableStream & { columns?: number };

/**
 * What the spinner engine (ora) draws on: stderr as a terminal whose width is the real one when it is at least
 * 20 columns and 80 otherwise. ora divides by `columns` to count the rows to clear, so a terminal reporting 0
 * (as under `script`) would otherwise make it clear and redraw endlessly. ora calls write, isTTY, columns,
 * rows, cursorTo, clearLine, moveCursor and once/removeListener('drain') on its stream.
 */
class SpinnerStream {
  readonly isTTY = true;
  constructor(private readonly err: Stderr) {}
  get columns(): number {
    const c = this.err.columns;
    return c !== undefined && c >= 20 ? c : 80;
  }
  write(chunk: string | Uint8Array): boolean {
    return this.err.write(chunk);
  }
  /** `\r` (plus a move right): a carriage return works on every terminal. */
  cursorTo(x: number): boolean {
    return this.err.write(x > 0 ? `\r\x1b[${x}C` : '\r');
  }
  clearLine(dir: -1 | 0 | 1): boolean {
    return this.err.write(dir === 1 ? '\x1b[K' : dir === -1 ? '\x1b[1K' : '\x1b[2K');
  }
  moveCursor(dx: number, dy: number): boolean {
    const h = dx > 0 ? `\x1b[${dx}C` : dx < 0 ? `\x1b[${-dx}D` : '';
    const v = dy > 0 ? `\x1b[${dy}B` : dy < 0 ? `\x1b[${-dy}A` : '';
    return this.err.write(h + v);
  }
  once(event: string, fn: () => void): this {
    this.err.once(event, fn);
    return this;
  }
  removeListener(event: string, fn: () => void): this {
    this.err.removeListener(event, fn);
    return this;
  }
}

/** Columns kept for the spinner's frame, spaces and elapsed time (`⠋ ` … ` 12m05s`). */
const SPINNER_RESERVE = 10;

/**
 * Progress on stderr: a one-line spinner when stderr is a TTY and neither --json nor --quiet is set. It redraws
 * once a second (so the elapsed time moves between polls), never more than one row, and never touches standard
 * input (no raw mode: Ctrl-C stays a signal). The spinner engine is ora, loaded only when a spinner is shown.
 */
export class Progress {
  constructor(private readonly out: Output) {}

  /** True when progress is drawn. */
  get enabled(): boolean {
    return this.out.decorate;
  }

  /** Starts a spinner. */
  async spinner(text: string): Promise<Spinner> {
    if (!this.enabled) return NOOP;
    const { default: ora } = await import('ora');
    const err = this.out.io.stderr as Stderr;
    const stream = new SpinnerStream(err);
    const clean = (t: string): string => this.out.redactor.redact(neutralize(t));
    const fit = (t: string): string => fitLine(clean(t), stream.columns, SPINNER_RESERVE);
    const started = Date.now();
    let label = text;
    const o = ora({
      stream: stream as unknown as NodeJS.WritableStream,
      text: fit(label),
      suffixText: () => formatElapsed(Date.now() - started),
      spinner: { frames: FRAMES, interval: SPINNER_TICK_MS },
      interval: SPINNER_TICK_MS,
      color: false,
      isEnabled: true,
      // Raw mode on stdin would turn Ctrl-C into a keystroke instead of SIGINT.
      discardStdin: false,
      // ora shows the cursor again when it stops, and (through restore-cursor) when the process exits.
      hideCursor: true,
    });
    o.start();
    let spinning = true;
    const end = (mark?: string, t?: string): void => {
      if (spinning) {
        spinning = false;
        if (mark === undefined) o.stop();
        else o.stopAndPersist({ symbol: mark, text: clean(t ?? label), suffixText: '' });
      } else if (mark !== undefined) {
        err.write(`${mark} ${clean(t ?? label)}\n`);
      }
    };
    return {
      update: (t) => {
        label = t;
        o.text = fit(t);
      },
      succeed: (t) => end('✔', t),
      fail: (t) => end('✖', t),
      stop: () => end(),
    };
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
