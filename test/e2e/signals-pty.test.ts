import { describe, expect, it } from 'vitest';
import { spawn } from 'node-pty';
import { GW_BIN, isolatedDirs, spawnGw } from '../helpers/gw.js';
import { spawnPty, stripAnsi } from '../helpers/pty.js';
import { useSim } from '../helpers/sim.js';

/**
 * Issue 13 class 5: signals on a real terminal. The wait's spinner must leave Ctrl-C a signal (no raw mode), a
 * login prompt ends with 130 on Ctrl-C, SIGTERM is 143, and a terminal reporting no width gets a small, steady
 * progress output instead of endless redraws.
 */

async function neverVideo(env: Record<string, string>): Promise<string> {
  const r = await spawnGw(['video', 'create', 'fox [sim:never]', '-m', 'vid-2.7-t2v'], { env });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe('Ctrl-C and SIGTERM', () => {
  it('Ctrl-C during video wait with the spinner showing: exit 130 and the resume command', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const id = await neverVideo({ ...sim.env, ...dirs });
    const s = spawnPty(['video', 'wait', id], { ...sim.env, ...dirs });
    await s.expect(new RegExp(`${id} (waiting|queued|in_progress)`));
    s.type('\x03');
    expect(await s.exited).toBe(130);
    expect(stripAnsi(s.output())).toContain(`gw video wait ${id}`);
    // The spinner hid the cursor; it is shown again before the process ends.
    const out = s.output();
    expect(out).toContain('\u001b[?25l');
    expect(out.lastIndexOf('\u001b[?25h')).toBeGreaterThan(out.lastIndexOf('\u001b[?25l'));
  });

  it('Ctrl-C during beta task wait: exit 130 and the resume command', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const c = await spawnGw(['beta', 'task', 'create', 'kite [sim:never]', '-m', 'gamma-video-2-0'], {
      env: { ...sim.env, ...dirs },
    });
    const id = c.stdout.trim();
    const s = spawnPty(['beta', 'task', 'wait', id], { ...sim.env, ...dirs });
    await s.expect(`task ${id}`);
    s.type('\x03');
    expect(await s.exited).toBe(130);
    expect(stripAnsi(s.output())).toContain(`gw beta task wait ${id}`);
  });

  it('Ctrl-C at a gw login prompt: exit 130, nothing saved', async () => {
    const dirs = isolatedDirs();
    const s = spawnPty(['login'], dirs);
    await s.expect('Gateway base URL');
    s.type('\x03');
    expect(await s.exited).toBe(130);
    expect(stripAnsi(s.output())).not.toMatch(/internal| {4}at /);
  });

  it('SIGTERM during a wait: exit 143 with the resume command; SIGINT: 130', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const id = await neverVideo({ ...sim.env, ...dirs });
    for (const [sig, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const r = await spawnGw(['video', 'wait', id], {
        env: { ...sim.env, ...dirs },
        onSpawn: (child) => {
          // Signal once the wait has polled at least once (the sim saw the GET).
          const t = setInterval(() => {
            if (sim.requests.some((q) => q.method === 'GET' && q.path.endsWith(id))) {
              clearInterval(t);
              child.kill(sig);
            }
          }, 20);
        },
      });
      sim.requests.length = 0;
      expect(r.exitCode, `${sig}: ${r.stderr}`).toBe(code);
      expect(r.stderr).toContain(`gw video wait ${id}`);
    }
  });
});

describe('a terminal that reports no width', () => {
  it('the wait spinner writes a few dozen bytes per redraw, not endless clear-line sequences', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const id = await neverVideo({ ...sim.env, ...dirs });
    // `stty cols 0` makes the terminal report no width, as under `script`.
    const pty = spawn(
      'bash',
      ['-c', `stty cols 0 rows 0; exec "${process.execPath}" "${GW_BIN}" video wait ${id}`],
      {
        name: 'xterm-256color',
        cols: 120,
        rows: 40,
        env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', ...dirs, ...sim.env },
      },
    );
    let out = '';
    const marks: number[] = [];
    let redraws = 0;
    const enough = new Promise<void>((resolve) => {
      pty.onData((d) => {
        out += d;
        // Count redraws by their elapsed-time field; measure from the first to the fifth.
        const n = (stripAnsi(out).match(/ \d+s/g) ?? []).length;
        while (redraws < n) {
          redraws++;
          marks.push(out.length);
        }
        if (redraws >= 5) resolve();
      });
    });
    const exited = new Promise<number>((r) => pty.onExit((e) => r(e.exitCode)));
    await enough;
    const bytes = (marks[4] ?? 0) - (marks[0] ?? 0);
    pty.write('\x03');
    expect(await exited).toBe(130);
    // Four redraws in between: each one line, well under 300 bytes (the old spinner wrote megabytes).
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(4 * 300);
  });
});
