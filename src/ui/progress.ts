import type { Output } from './output.js';

/** A live status line on stderr; every method is a no-op when progress is not shown. */
export interface Spinner {
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  stop(): void;
}

const NOOP: Spinner = { update() {}, succeed() {}, fail() {}, stop() {} };

/** Progress on stderr: an ora spinner when stderr is a TTY and neither --json nor --quiet is set. */
export class Progress {
  constructor(private readonly out: Output) {}

  /** True when progress is drawn. */
  get enabled(): boolean {
    return this.out.decorate;
  }

  /** Starts a spinner (ora is loaded only here). */
  async spinner(text: string): Promise<Spinner> {
    if (!this.enabled) return NOOP;
    const { default: ora } = await import('ora');
    const s = ora({ text, stream: this.out.io.stderr, color: 'cyan', isEnabled: true }).start();
    return {
      update: (t) => {
        s.text = this.out.redactor.redact(t);
      },
      succeed: (t) => void s.succeed(t),
      fail: (t) => void s.fail(t),
      stop: () => void s.stop(),
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
      err.write(`\r${label} ${barText}${size} ${rate}\x1b[K`);
    };
    return {
      tick(n) {
        const now = Date.now();
        if (now - last < 100) return;
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
