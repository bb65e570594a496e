import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../../../src/ui/output.js';
import { Progress, fitLine, formatElapsed } from '../../../src/ui/progress.js';
import { Redactor } from '../../../src/ui/redact.js';

function output(o: { tty: boolean; columns?: number }): { out: Output; text: () => string } {
  const stderr = Object.assign(new PassThrough(), { isTTY: o.tty, columns: o.columns ?? 0 });
  let text = '';
  stderr.on('data', (c: Buffer) => (text += c.toString()));
  const out = new Output(
    { stdout: new PassThrough(), stderr, stdin: Readable.from([]), env: {} },
    { json: false, quiet: false, verbose: false, color: false },
    new Redactor(),
  );
  return { out, text: () => text };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the wait spinner', () => {
  it('ticks once a second on a TTY, so the elapsed time moves between polls', async () => {
    vi.useFakeTimers();
    const { out, text } = output({ tty: true, columns: 80 });
    const s = await new Progress(out).spinner('video_1 in_progress');
    await vi.advanceTimersByTimeAsync(3000);
    const lines = text()
      .split('\r')
      .filter((l) => l.includes('video_1'));
    // eslint-disable-next-line no-control-regex
    const visible = (l: string): string => l.replace(/\u001b\[[0-9;?]*[a-zA-Z]/g, '');
    expect(lines.map((l) => / (\d+s)$/.exec(visible(l))?.[1])).toEqual(['0s', '1s', '2s', '3s']);
    s.stop();
    await vi.advanceTimersByTimeAsync(3000);
    expect(
      text()
        .split('\r')
        .filter((l) => l.includes('video_1')),
    ).toHaveLength(4);
  });

  it('fits one row whatever the terminal reports (0 columns counts as 80); control characters made visible', () => {
    expect(fitLine('x'.repeat(500), 0)).toHaveLength(79);
    expect(fitLine('x'.repeat(500), undefined)).toHaveLength(79);
    expect(fitLine('x'.repeat(500), 40)).toHaveLength(39);
    expect(fitLine('a\nb', 80)).toBe('a b');
    expect(formatElapsed(65_000)).toBe('1m05s');
  });

  it('draws nothing and no tips on a non-TTY stderr', async () => {
    vi.useFakeTimers();
    const { out, text } = output({ tty: false });
    const s = await new Progress(out).spinner('waiting');
    await vi.advanceTimersByTimeAsync(2000);
    s.succeed('done');
    out.tip('the result URL stays valid about 24 hours');
    expect(text()).toBe('');
  });
});
