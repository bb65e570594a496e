import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../../src/cli/main.js';
import { runGw, type GwResult } from '../../helpers/gw.js';
import { useSim } from '../../helpers/sim.js';
import { tempDir } from '../../helpers/tmp.js';

async function env(o: Parameters<typeof useSim>[0] = {}) {
  const sim = await useSim(o);
  const dir = tempDir('gw-video-cmd-');
  return { sim, dir, env: { ...sim.env, GW_STATE_DIR: join(dir, 'state') } };
}

/** A terminal-like stream: isTTY plus the cursor methods ora uses on a real tty.WriteStream. */
function terminal(): PassThrough & { text: () => string } {
  const s = new PassThrough();
  let text = '';
  s.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const ok = (cb?: () => void): boolean => {
    cb?.();
    return true;
  };
  return Object.assign(s, {
    isTTY: true,
    columns: 100,
    cursorTo: (_x: number, _y?: unknown, cb?: () => void) => ok(cb),
    moveCursor: (_dx: number, _dy: number, cb?: () => void) => ok(cb),
    clearLine: (_dir: number, cb?: () => void) => ok(cb),
    clearScreenDown: (cb?: () => void) => ok(cb),
    getWindowSize: () => [100, 40],
    hasColors: () => false,
    text: () => text,
  });
}

/** Runs gw in-process with stderr as a terminal (spinners and bars drawn), stdout captured. */
async function runOnTerminal(
  argv: string[],
  env: Record<string, string>,
  whileRunning?: (stderrText: () => string) => Promise<void>,
): Promise<GwResult> {
  const stdout = terminal();
  const stderr = terminal();
  const run = main(argv, {
    stdout,
    stderr,
    stdin: Object.assign(Readable.from([]), { isTTY: true }),
    env: { NO_COLOR: '1', ...env },
    signal: new AbortController().signal,
  });
  await whileRunning?.(stderr.text);
  const exitCode = await run;
  return { stdout: stdout.text(), stderr: stderr.text(), exitCode };
}

/** Resolves once `check()` holds (polled every 10 ms). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

describe('gw video (in-process)', () => {
  it('on a TTY: a spinner with state and elapsed time during wait, a byte bar during download', async () => {
    // The simulator's clock stands still until the spinner has shown the running state, then jumps ahead.
    let t = 1_800_000_000_000;
    const { env: e, dir } = await env({ videoBytes: 2_000_000, now: () => t });
    const id = (await runGw(['video', 'create', 'fox', '-m', 'vid-2.7-t2v'], { env: e })).stdout.trim();
    const w = await runOnTerminal(['video', 'wait', id, '--interval', '20ms'], e, async (text) => {
      await until(() => new RegExp(`${id} queued \\d`).test(text()));
      t += 60_000;
    });
    expect(w.exitCode).toBe(0);
    expect(w.stderr).toContain(`${id} completed after`);
    const d = await runOnTerminal(['video', 'download', id, '-o', join(dir, 'v.mp4')], e);
    expect(d.exitCode).toBe(0);
    expect(d.stdout.trim()).toBe(join(dir, 'v.mp4'));
    expect(d.stderr).toMatch(/MiB/);
  });

  it('no TTY: no spinner or bar, stdout only the result', async () => {
    const { env: e, dir } = await env();
    const id = (
      await runGw(['video', 'create', 'fox', '-m', 'vid-2.7-t2v', '--wait'], { env: e })
    ).stdout.trim();
    expect(id).toMatch(/^video_\w+$/);
    const d = await runGw(['--json', 'video', 'download', id, '-o', join(dir, 'v.mp4')], { env: e });
    const doc = JSON.parse(d.stdout) as { path: string; bytes: number; sha256?: string };
    expect(doc).toEqual({ path: join(dir, 'v.mp4'), bytes: doc.bytes, resumed: false });
    expect(doc.bytes).toBe(readFileSync(doc.path).length);
    expect(d.stderr).toBe('');
  });

  it('warns (does not reject) outside the 1-to-9 images recommended for clip-1.1-r2v', async () => {
    const { env: e, sim } = await env();
    const refs = Array.from({ length: 10 }, (_, i) => ['--ref', `https://example.com/${i}.png`]).flat();
    const r = await runGw(['video', 'create', 'fox', '-m', 'clip-1.1-r2v', '--seconds', '3', ...refs], {
      env: e,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/warning: clip-1.1-r2v: 1 to 9 reference images are recommended, got 10/);
    expect((sim.requests[0]?.body as { input_reference: unknown[] }).input_reference).toHaveLength(10);
  });

  it('maps flags to the §2.3 body: --ref image objects, videos as URLs, --ref-video, --input-image, seed as a number', async () => {
    const { env: e, sim } = await env();
    await runGw(
      [
        'video',
        'create',
        'p',
        '-m',
        'vid-2.7-i2v',
        '--ref',
        'https://e.com/a.mp4',
        '--ref',
        'https://e.com/b.png',
        '--seed',
        '42',
      ],
      { env: e },
    );
    await runGw(
      [
        'video',
        'create',
        'p',
        '-m',
        'clip-1.1-i2v',
        '--input-image',
        'https://e.com/f.png',
        '--resolution',
        '720p',
      ],
      { env: e },
    );
    await runGw(
      [
        'video',
        'create',
        'p',
        '-m',
        'vid-2.7-r2v',
        '--ref-video',
        'https://e.com/a.mov',
        '--ref',
        'https://e.com/s.png',
      ],
      { env: e },
    );
    expect(sim.requests.map((q) => q.body)).toEqual([
      {
        model: 'vid-2.7-i2v',
        prompt: 'p',
        seed: 42,
        input_reference: ['https://e.com/a.mp4', { image_url: 'https://e.com/b.png' }],
      },
      { model: 'clip-1.1-i2v', prompt: 'p', resolution: '720p', input_image: 'https://e.com/f.png' },
      {
        model: 'vid-2.7-r2v',
        prompt: 'p',
        input_reference: { image_url: 'https://e.com/s.png' },
        references: { video: ['https://e.com/a.mov'] },
      },
    ]);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
  });

  it('get on an unknown id: exit 1 with the gateway error and its request id', async () => {
    const { env: e } = await env();
    const r = await runGw(['video', 'get', 'video_nope'], { env: e });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/error: video_not_found: .*\nrequest id: req-sim-/);
  });

  it('history --limit must be a whole number', async () => {
    const { env: e } = await env();
    expect((await runGw(['history', '--limit', 'x'], { env: e })).exitCode).toBe(2);
    expect((await runGw(['history', '--kind', 'nope'], { env: e })).exitCode).toBe(2);
    const empty = await runGw(['--json', 'history'], { env: e });
    expect(JSON.parse(empty.stdout)).toEqual([]);
  });
});
