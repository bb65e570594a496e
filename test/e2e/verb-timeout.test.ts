import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fastClock } from '../helpers/clock.js';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { INSTANT, useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * A verb's own `--timeout` (the limit of `video wait`, `beta task wait`, `beta asset wait`, `batch run`,
 * `batch retry`) against the global `--timeout` (the request timeout). Written after the verb's name it is the
 * verb's limit and leaves the request timeout alone; written before the command name it is the global one, which
 * a wait also takes as its limit. Waits run on a virtual clock (fastClock): "exit 4 at 1 s" is the clock's
 * time, not luck. The request timeout is seen through a simulator fault whose answer starts and never ends: a
 * request stops at the request timeout (GW_TIMEOUT 300ms here) or, were the verb's limit taken for it, hangs.
 */

const M = ['-m', 'gamma-video-2-0'];
const STALL = { kind: 'slow' as const, ms: 120_000 };

/** The sum of the sleeps a wait asked for: the virtual time it waited. */
const total = (sleeps: number[]): number => sleeps.reduce((a, b) => a + b, 0);

async function createVideo(env: Record<string, string>, prompt: string): Promise<string> {
  const r = await runGw(['video', 'create', prompt, '-m', 'clip-1.1-t2v', '--seconds', '3'], { env });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim();
}

/** An asset in a new group, still processing (the simulator's assetProcessingMs decides for how long). */
async function createAsset(env: Record<string, string>): Promise<string> {
  const g = await runGw(['beta', 'asset', 'group', 'create', '--name', 'g', ...M], { env });
  const a = await runGw(
    ['beta', 'asset', 'create', '--group', g.stdout.trim(), '--url', 'https://example.com/a.png', ...M],
    { env },
  );
  expect(a.exitCode, a.stderr).toBe(0);
  return a.stdout.trim();
}

describe('video wait --timeout', () => {
  it.each([
    ['after the verb', (id: string) => ['video', 'wait', id, '--timeout', '1s']],
    ['after the verb, with =', (id: string) => ['video', 'wait', id, '--timeout=1s', '--json']],
    ['before the command', (id: string) => ['--timeout', '1s', 'video', 'wait', id]],
  ])('%s: a video that never finishes ends with exit 4 at that limit', async (_how, argv) => {
    const sim = await useSim();
    const home = isolatedDirs();
    const env = { ...sim.env, ...home };
    const id = await createVideo(env, 'a fox [sim:never]');
    const clock = fastClock();
    const r = await runGw(argv(id), { env, clock });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/\(--timeout 1\.0s\)/);
    expect(r.stderr).toContain(`resume with: gw video wait ${id}`);
    // It waited up to its limit and not past it (the first poll delay is 2 s, cut to the time left).
    expect(total(clock.sleeps)).toBeGreaterThan(0);
    expect(total(clock.sleeps)).toBeLessThanOrEqual(1000);
  });

  it('with several ids the message names the --timeout given, not what was left of it for the last one', async () => {
    const sim = await useSim({ timings: INSTANT });
    const env = { ...sim.env, ...isolatedDirs() };
    const done = await createVideo(env, 'a fox');
    const never = await createVideo(env, 'a fox [sim:never]');
    const r = await runGw(['video', 'wait', done, never, '--timeout', '1s'], { env, clock: fastClock() });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stderr).toContain(`video ${never} is still in_progress after`);
    expect(r.stderr).toMatch(/\(--timeout 1\.0s\)/);
  });

  it('the verb’s own --timeout is not the request timeout: a stalled poll stops at GW_TIMEOUT', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const id = await createVideo(env, 'a fox [sim:never]');
    sim.sim.addFault({ route: 'GET /v1/videos/:id', ...STALL });
    const r = await runGw(['video', 'wait', id, '--timeout', '10m'], {
      env: { ...env, GW_TIMEOUT: '300ms' },
      clock: fastClock(),
    });
    // Exit 4 at the first stalled poll (the request timeout), with the wait's own limit far away.
    expect(r.exitCode, r.stderr).toBe(4);
    // The failure named is the request's own (what timed out and after how long), not the abort's raw text.
    expect(r.stderr).toMatch(
      /\(--timeout 10m00s\); the last poll failed: GET \/v1\/videos\/\S+: no answer within 300ms/,
    );
    expect(r.stderr).not.toMatch(/aborted due to timeout/);
  });

  it('global flags still work after the verb: --json, --quiet', async () => {
    // Done on creation: on the fast clock a minute of polls is ~50 ms of real time, which a video running 60 ms
    // of the simulator's real timers outlived on a fast machine (exit 4). Flags are the point here, not states.
    const sim = await useSim({ timings: INSTANT });
    const env = { ...sim.env, ...isolatedDirs() };
    const id = await createVideo(env, 'a fox');
    const r = await runGw(['video', 'wait', id, '--timeout', '1m', '--json', '--quiet'], {
      env,
      clock: fastClock(),
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id, status: 'completed' });
    expect(r.stderr).toBe('');
  });
});

describe('beta task wait and beta asset wait --timeout', () => {
  it('beta task wait <id> --timeout 1s: exit 4 at its limit', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const c = await runGw(['beta', 'task', 'create', 'a cat [sim:never]', ...M, '--duration', '5'], { env });
    expect(c.exitCode, c.stderr).toBe(0);
    const id = c.stdout.trim();
    const clock = fastClock();
    const r = await runGw(['beta', 'task', 'wait', id, '--timeout', '1s'], { env, clock });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stderr).toContain(`resume with: gw beta task wait ${id}`);
    expect(total(clock.sleeps)).toBeLessThanOrEqual(1000);
  });

  it('beta asset wait <id> --timeout 1s: exit 4 at its limit', async () => {
    const sim = await useSim({ timings: { assetProcessingMs: 600_000 } });
    const env = { ...sim.env, ...isolatedDirs() };
    const id = await createAsset(env);
    const clock = fastClock();
    const r = await runGw(['beta', 'asset', 'wait', id, ...M, '--timeout', '1s'], { env, clock });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(total(clock.sleeps)).toBeLessThanOrEqual(1000);
  });
});

describe('the request timeout bounds each poll of a wait with a long --timeout of its own', () => {
  it('beta task wait <id> --timeout 10m: a stalled poll stops at GW_TIMEOUT', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const c = await runGw(['beta', 'task', 'create', 'a cat [sim:never]', ...M, '--duration', '5'], { env });
    expect(c.exitCode, c.stderr).toBe(0);
    const id = c.stdout.trim();
    sim.sim.addFault({ route: 'GET /beta/api/v3/contents/generations/tasks/:id', ...STALL });
    const r = await runGw(['beta', 'task', 'wait', id, '--timeout', '10m'], {
      env: { ...env, GW_TIMEOUT: '300ms' },
      clock: fastClock(),
    });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/timeout/);
  });

  it('beta asset wait <id> --timeout 10m: a stalled poll stops at GW_TIMEOUT', async () => {
    const sim = await useSim({ timings: { assetProcessingMs: 600_000 } });
    const env = { ...sim.env, ...isolatedDirs() };
    const id = await createAsset(env);
    for (const route of ['POST /beta/', 'POST /beta']) sim.sim.addFault({ route, ...STALL });
    const r = await runGw(['beta', 'asset', 'wait', id, ...M, '--timeout', '10m'], {
      env: { ...env, GW_TIMEOUT: '300ms' },
      clock: fastClock(),
    });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/timeout/);
  });
});

describe('batch run and batch retry --timeout', () => {
  const line = (id: string, prompt: string): string =>
    JSON.stringify({
      custom_id: id,
      method: 'POST',
      url: '/v1/videos',
      body: { model: 'clip-1.1-t2v', prompt, seconds: 3, resolution: '720p' },
    });

  it('batch retry <dir> --timeout 1s: a video that never finishes ends the retry with exit 4', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const d = tempDir('gw-verb-timeout-');
    const file = join(d, 'jobs.jsonl');
    writeFileSync(file, `${line('v1', 'a fox [sim:never]')}\n`);
    const out = join(d, 'out');
    const run = await runGw(['batch', 'run', file, '--out', out, '--timeout', '1s'], { env });
    expect(run.exitCode, run.stderr).toBe(4);
    const retry = await runGw(['batch', 'retry', out, '--timeout', '1s'], { env });
    expect(retry.exitCode, retry.stderr).toBe(4);
    expect(retry.stderr).toContain(`--timeout 1s`);
    // The created video was followed, not created again.
    expect(sim.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
  });

  it('batch run/retry --timeout 1h leave the request timeout alone: a stalled create stops at GW_TIMEOUT', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs(), GW_TIMEOUT: '300ms' };
    const d = tempDir('gw-verb-timeout-');
    const file = join(d, 'jobs.jsonl');
    writeFileSync(file, `${line('v1', 'a fox')}\n`);
    const out = join(d, 'out');
    sim.sim.addFault({ route: 'POST /v1/videos', ...STALL });
    const run = await runGw(['batch', 'run', file, '--out', out, '--timeout', '1h'], { env });
    // The create's answer never came within the request timeout: in doubt (exit 1), not a run-long hang.
    expect(run.exitCode, run.stderr).toBe(1);
    expect(readFileSync(join(out, 'errors.jsonl'), 'utf8')).toMatch(/no answer within 300ms/);
    const retry = await runGw(['batch', 'retry', out, '--in-doubt', '--timeout', '1h'], { env });
    expect(retry.exitCode, retry.stderr).toBe(1);
    expect(sim.requests.filter((q) => q.method === 'POST')).toHaveLength(2);
  });
});
