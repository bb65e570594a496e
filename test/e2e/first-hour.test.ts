/**
 * What a new user meets first: tables that fit an 80-column terminal (the widest columns cut with `…`, ids whole),
 * pure TSV on stdout in a pipe (summaries on stderr), and one date format (absolute off a terminal, relative only on
 * one), checked on the real bin/gw under a pseudo-terminal and in pipes.
 */
import { describe, expect, it } from 'vitest';
import { isolatedDirs, runGw, spawnGw } from '../helpers/gw.js';
import { spawnPty, stripAnsi } from '../helpers/pty.js';
import { useSim } from '../helpers/sim.js';

/** `2026-11-22 14:03:05 +01:00`: the one format of docs/output.md. */
const LOCAL_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d$/;

/** Runs gw on an 80-column pseudo-terminal; returns its screen lines (no escape sequences). */
async function onTerminal(argv: string[], env: Record<string, string>): Promise<string[]> {
  const s = spawnPty(argv, env, { cols: 80, rows: 50 });
  const code = await s.exited;
  const screen = stripAnsi(s.output()).replace(/\r/g, '');
  expect(code, screen).toBeLessThan(2);
  return screen.split('\n').filter((l) => l.trim() !== '');
}

/** A journal with a finished video and a running beta task, and a probe history of two runs. */
async function workedMachine(): Promise<{ env: Record<string, string> }> {
  const sim = await useSim();
  const env = { ...sim.env, ...isolatedDirs() };
  const video = await runGw(
    ['video', 'create', 'a red fox running through deep snow at dawn', '-m', 'clip-1.1-t2v', '--wait'],
    { env },
  );
  expect(video.exitCode, video.stderr).toBe(0);
  const task = await runGw(['beta', 'task', 'create', 'the fox runs on and on', '-m', 'gamma-video-2-0'], {
    env,
  });
  expect(task.exitCode, task.stderr).toBe(0);
  for (let i = 0; i < 2; i++) {
    const probe = await runGw(['probe', '--only', 'models,chat,chat-stream'], { env });
    expect(probe.exitCode, probe.stderr).toBeLessThan(2);
  }
  return { env };
}

describe('tables fit an 80-column terminal', () => {
  it('gw probe --sim, gw history, gw beta task list and gw probe history: no line wider than 80, ids whole', async () => {
    const { env } = await workedMachine();
    const ids = (await runGw(['history', '--json'], { env })).stdout;
    const [videoId, taskId] = (JSON.parse(ids) as { id: string }[]).map((e) => e.id).sort();
    for (const argv of [['probe', '--sim'], ['history'], ['beta', 'task', 'list'], ['probe', 'history']]) {
      const lines = await onTerminal(argv, env);
      // Everything but the notes and summary lines (prose, which a terminal may wrap) is the table.
      const table = lines.filter(
        (l) => !/^(OK|FAILED):|^\d+ runs since|^no change|^probe: |^showing /.test(l),
      );
      expect(table.length, `gw ${argv.join(' ')}:\n${lines.join('\n')}`).toBeGreaterThan(2);
      for (const l of table) expect([...l].length, `gw ${argv.join(' ')}: ${l}`).toBeLessThanOrEqual(80);
      if (argv[0] === 'probe' && argv[1] === '--sim') {
        expect(table.join('\n')).toMatch(/req-sim-\d{6}/);
        expect(table.join('\n')).toContain('…');
        expect(lines.at(-1)).toMatch(/^OK: 6 checks/);
      }
      if (argv[0] === 'history') {
        expect(table.join('\n')).toContain(videoId);
        expect(table.join('\n')).toContain(taskId);
      }
    }
  }, 60_000);
});

describe('in a pipe', () => {
  it('gw probe and gw probe history print only their TSV on stdout; the summary goes to stderr', async () => {
    const { env } = await workedMachine();
    const probe = await spawnGw(['probe', '--sim'], { env });
    expect(probe.exitCode, probe.stderr).toBe(0);
    const rows = probe.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe('check\tresult\tlatency\trequest id\tdetail');
    expect(rows).toHaveLength(7);
    for (const r of rows) expect(r.split('\t')).toHaveLength(5);
    expect(probe.stderr).toMatch(/^OK: 6 checks: 6 passed/m);

    const history = await spawnGw(['probe', 'history'], { env });
    expect(history.exitCode, history.stderr).toBe(0);
    const lines = history.stdout.trimEnd().split('\n');
    // A pipe keeps every column, the gateway's too, so a script sees one shape whatever the history holds.
    expect(lines[0]?.split('\t').slice(0, 2)).toEqual(['gateway', 'check']);
    for (const l of lines) expect(l.split('\t')).toHaveLength(12);
    expect(history.stderr).toMatch(/^2 runs since /m);
    expect(history.stderr).toMatch(/^no change since the previous run$/m);
  }, 60_000);

  it('dates are absolute, in one format: gw history, the footer of gw probe history, gw video get', async () => {
    const { env } = await workedMachine();
    const history = await runGw(['history'], { env });
    const [head, ...rows] = history.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(head).toEqual(['created', 'kind', 'id', 'model', 'state', 'updated', 'profile']);
    const video = rows.find((r) => r[1] === 'video') as string[];
    expect(video[0]).toMatch(LOCAL_TIME);
    expect(video[5]).toMatch(LOCAL_TIME);
    const footer = /^2 runs since (.*)$/m.exec((await runGw(['probe', 'history'], { env })).stderr);
    expect(footer?.[1]).toMatch(LOCAL_TIME);
    const get = await runGw(['video', 'get', video[2] as string], { env });
    const created = /^created:\s+(.*)$/m.exec(get.stdout);
    expect(created?.[1]).toMatch(LOCAL_TIME);
  }, 60_000);
});
