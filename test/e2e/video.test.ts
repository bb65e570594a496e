import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fillerByte } from '../../src/sim/cdn.js';
import { videoStore } from '../../src/sim/routes/videos.js';
import { runBash, runGw, spawnGw, type GwResult } from '../helpers/gw.js';
import { fastClock, type RunClock } from '../helpers/clock.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

type Sim = Awaited<ReturnType<typeof useSim>>;

/** A temp dir with a state dir and a work dir for one scripted run. */
function workspace(): { state: string; work: string } {
  const root = tempDir('gw-video-e2e-');
  const work = join(root, 'work');
  mkdirSync(work, { recursive: true });
  return { state: join(root, 'state'), work };
}

function wsEnv(sim: Sim, ws: ReturnType<typeof workspace>): Record<string, string> {
  return { HOME: ws.work, GW_STATE_DIR: ws.state, GW_CONFIG_DIR: join(ws.work, '.config'), ...sim.env };
}

/** Runs a bash script (`set -euo pipefail`) with the real `gw` on PATH, pointed at the simulator. */
function bash(script: string, sim: Sim, ws: ReturnType<typeof workspace>): Promise<GwResult> {
  return runBash(script, { strict: true, cwd: ws.work, env: wsEnv(sim, ws) });
}

/** Runs gw in-process in the workspace (its work dir as the current directory), pointed at the simulator. */
function gw(argv: string[], sim: Sim, ws: ReturnType<typeof workspace>, clock?: RunClock): Promise<GwResult> {
  return runGw(argv, { cwd: ws.work, env: wsEnv(sim, ws), ...(clock ? { clock } : {}) });
}

/** Creates a video and waits for it (in-process); returns its id. */
async function createDone(sim: Sim, ws: ReturnType<typeof workspace>, prompt = 'fox'): Promise<string> {
  const r = await gw(['video', 'create', prompt, '-m', 'vid-2.7-t2v', '--wait'], sim, ws);
  expect(r.exitCode).toBe(0);
  return r.stdout.trim();
}

/** The bytes the CDN serves for a video (its published object). */
function servedBytes(sim: Sim, id: string): Buffer {
  const v = videoStore(sim.sim).get(id);
  if (v?.url === undefined) throw new Error(`video ${id} was never published`);
  const obj = sim.sim.cdn.objects.get(new URL(v.url).pathname);
  if (obj?.bytes === undefined) throw new Error('no bytes on the CDN');
  return obj.bytes;
}

const WORKFLOW = `
id=$(gw video create "a red fox in snow" -m clip-1.1-t2v --seconds 5 --resolution 720p)
gw video wait "$id" --timeout 1m && gw video download "$id" -o out.mp4
echo "id=$id"
`;

/** The same three steps as WORKFLOW, in-process. */
async function workflowInProcess(
  sim: Sim,
  ws: ReturnType<typeof workspace>,
  clock: RunClock,
): Promise<GwResult> {
  const c = await gw(
    ['video', 'create', 'a red fox in snow', '-m', 'clip-1.1-t2v', '--seconds', '5', '--resolution', '720p'],
    sim,
    ws,
  );
  const id = c.stdout.trim();
  const w = await gw(['video', 'wait', id, '--timeout', '1m'], sim, ws, clock);
  const d = await gw(['video', 'download', id, '-o', 'out.mp4'], sim, ws);
  return {
    exitCode: c.exitCode || w.exitCode || d.exitCode,
    stdout: `${d.stdout}id=${id}\n`,
    stderr: c.stderr + w.stderr + d.stderr,
  };
}

describe('the shell workflow of issue 4 (no TTY)', () => {
  it.each([
    ['completed', 'real bash, the real gw on PATH'],
    ['success', 'in-process'],
  ] as const)(
    'create → wait → download gives the exact bytes the simulator served (%s, %s)',
    async (state, how) => {
      // The simulator runs on the wait's clock: a minute of virtual polls is ~50 ms of real time, which a video
      // of the simulator's real timers could outlive (exit 4 on a fast machine).
      const clock = fastClock();
      const sim = await useSim({ videoSuccessState: state, now: clock.now });
      const ws = workspace();
      const r =
        how === 'in-process' ? await workflowInProcess(sim, ws, clock) : await bash(WORKFLOW, sim, ws);
      expect(r.stderr).not.toMatch(/error:/);
      expect(r.exitCode).toBe(0);
      const id = /id=(\S+)/.exec(r.stdout)?.[1] ?? '';
      expect(id).toMatch(/^video_/);
      // The download printed its path; the file holds exactly what the CDN served.
      expect(r.stdout).toContain(join(ws.work, 'out.mp4'));
      const file = readFileSync(join(ws.work, 'out.mp4'));
      expect(file.equals(servedBytes(sim, id))).toBe(true);
      expect(existsSync(join(ws.work, 'out.mp4.part'))).toBe(false);
      // The redirect to the CDN origin carried no token; the gateway got it.
      expect(sim.sim.cdn.authorizationSeen).toEqual([]);
      expect(sim.sim.cdn.requests.length).toBeGreaterThan(0);
      expect(sim.requests.every((q) => typeof q.headers.authorization === 'string')).toBe(true);
      // The journal kept the id with its last state.
      const journal = readFileSync(join(ws.state, 'journal.jsonl'), 'utf8');
      expect(journal).toContain(id);
      expect(journal).toContain(`"state":"${state}"`);
      expect(journal).not.toContain(sim.env.GW_TOKEN);
    },
  );
});

describe('gw video wait', () => {
  it('a failing video: exit 1 with the task error and request id', async () => {
    const sim = await useSim();
    const c = await runGw(['video', 'create', 'fox [sim:fail]', '-m', 'vid-2.7-t2v'], { env: sim.env });
    const id = c.stdout.trim();
    const r = await runGw(['video', 'wait', id, '--interval', '20ms'], { env: sim.env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/error: video_failed: .*upstream_task_failed/);
    expect(r.stderr).toMatch(/request id: req-sim-/);
  });

  it('a cancelled video: exit 1; --json still prints the final record', async () => {
    const sim = await useSim();
    const id = (
      await runGw(['video', 'create', 'fox [sim:cancel]', '-m', 'vid-2.7-t2v'], { env: sim.env })
    ).stdout.trim();
    const r = await runGw(['--json', 'video', 'wait', id, '--interval', '20ms'], { env: sim.env });
    expect(r.exitCode).toBe(1);
    expect((JSON.parse(r.stdout) as { status: string }).status).toBe('cancelled');
    expect(JSON.parse(r.stderr.trim().split('\n').at(-1) ?? '{}')).toMatchObject({
      error: { code: 'video_cancelled' },
    });
  });

  it('a tiny --timeout: exit 4 and the resume command on stderr', async () => {
    const sim = await useSim();
    const id = (
      await runGw(['video', 'create', 'fox [sim:never]', '-m', 'vid-2.7-t2v'], { env: sim.env })
    ).stdout.trim();
    const r = await runGw(['video', 'wait', id, '--timeout', '300ms', '--interval', '50ms'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain(`gw video wait ${id}`);
    expect(r.stdout).toBe('');
  });

  it('429 with Retry-After during the wait is honoured and the wait still succeeds', async () => {
    const sim = await useSim();
    const id = (await runGw(['video', 'create', 'fox', '-m', 'vid-2.7-t2v'], { env: sim.env })).stdout.trim();
    sim.sim.addFault({ route: 'GET /v1/videos/:id', kind: 'status', status: 429, retryAfter: 1, times: 1 });
    const clock = fastClock();
    const r = await runGw(['--verbose', 'video', 'wait', id, '--interval', '20ms'], { env: sim.env, clock });
    expect(r.exitCode).toBe(0);
    const gets = sim.requests.filter((q) => q.method === 'GET' && q.path === `/v1/videos/${id}`);
    expect(gets[0]?.status).toBe(429);
    expect(gets.at(-1)?.status).toBe(200);
    // Retry-After: 1 means the next look came a second later (in the wait's own time), not at the 20 ms interval.
    expect(clock.sleeps[0]).toBe(1000);
    expect(r.stderr).toMatch(/polling again in 1(\.0)?s/);
  });

  it('SIGINT during a wait: exit 130 and the resume command on stderr', async () => {
    const sim = await useSim();
    const id = (
      await runGw(['video', 'create', 'fox [sim:never]', '-m', 'vid-2.7-t2v'], { env: sim.env })
    ).stdout.trim();
    const polled = (): boolean =>
      sim.requests.some((q) => q.method === 'GET' && q.path === `/v1/videos/${id}`);
    const r = await spawnGw(['video', 'wait', id, '--interval', '30s'], {
      env: sim.env,
      onSpawn: (child) => {
        const t = setInterval(() => {
          if (polled()) {
            clearInterval(t);
            child.kill('SIGINT');
          }
        }, 20);
      },
    });
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toContain(`gw video wait ${id}`);
  });
});

describe('gw video download', () => {
  it('before completion: exit 1 with the hint to run gw video wait, and no file', async () => {
    const sim = await useSim();
    const ws = workspace();
    const id = (
      await runGw(['video', 'create', 'fox [sim:never]', '-m', 'vid-2.7-t2v'], { env: sim.env })
    ).stdout.trim();
    const r = await runGw(['video', 'download', id, '-o', 'early.mp4'], { env: sim.env, cwd: ws.work });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/video_not_ready/);
    expect(r.stderr).toContain(`gw video wait ${id}`);
    expect(existsSync(join(ws.work, 'early.mp4'))).toBe(false);
    expect(existsSync(join(ws.work, 'early.mp4.part'))).toBe(false);
  });

  it('a download cut in the middle keeps only the .part; the same command resumes it to the exact bytes', async () => {
    const size = 3_000_000;
    const sim = await useSim({ videoBytes: size });
    const ws = workspace();
    const id = await createDone(sim, ws);
    sim.sim.addFault({ route: 'GET /cdn', kind: 'drop', after: 1_000_000, times: 1 });
    const first = await runGw(['video', 'download', id, '-o', 'big.mp4'], { env: sim.env, cwd: ws.work });
    expect(first.exitCode).toBe(1);
    expect(first.stderr).toContain('big.mp4.part');
    expect(existsSync(join(ws.work, 'big.mp4'))).toBe(false);
    const kept = readFileSync(join(ws.work, 'big.mp4.part')).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(size);

    const second = await runGw(['--json', 'video', 'download', id, '-o', 'big.mp4', '--sha256'], {
      env: sim.env,
      cwd: ws.work,
    });
    expect(second.exitCode).toBe(0);
    const expected = Buffer.alloc(size);
    for (let i = 0; i < size; i++) expected[i] = fillerByte(i);
    const file = readFileSync(join(ws.work, 'big.mp4'));
    expect(file.equals(expected)).toBe(true);
    expect(JSON.parse(second.stdout)).toEqual({
      path: join(ws.work, 'big.mp4'),
      bytes: size,
      resumed: true,
      sha256: createHash('sha256').update(expected).digest('hex'),
    });
    expect(sim.sim.cdn.requests.at(-1)?.range).toBe(`bytes=${kept}-`);
    expect(existsSync(join(ws.work, 'big.mp4.part'))).toBe(false);
    expect(sim.sim.cdn.authorizationSeen).toEqual([]);
  });

  it('an existing file is kept without --force (exit 2, nothing sent); -o - writes the bytes to stdout', async () => {
    const sim = await useSim();
    const ws = workspace();
    const id = await createDone(sim, ws);
    writeFileSync(join(ws.work, 'taken.mp4'), 'mine');
    const before = sim.requests.length;
    const r = await runGw(['video', 'download', id, '-o', 'taken.mp4'], { env: sim.env, cwd: ws.work });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--force');
    expect(sim.requests.length).toBe(before);
    expect(readFileSync(join(ws.work, 'taken.mp4'), 'utf8')).toBe('mine');
    const out = await bash(
      `gw video download ${id} -o - > piped.mp4 && gw video download ${id} -o taken.mp4 --force`,
      sim,
      ws,
    );
    expect(out.exitCode).toBe(0);
    expect(readFileSync(join(ws.work, 'piped.mp4')).equals(servedBytes(sim, id))).toBe(true);
    expect(readFileSync(join(ws.work, 'taken.mp4')).equals(servedBytes(sim, id))).toBe(true);
  });

  it('an expired result URL: exit 1 with a clear error naming the contract', async () => {
    const sim = await useSim();
    const ws = workspace();
    const id = await createDone(sim, ws, 'fox [sim:expired]');
    const r = await runGw(['video', 'download', id, '-o', 'old.mp4'], { env: sim.env, cwd: ws.work });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/error: result_expired: the result URL of video \S+ has expired/);
    expect(r.stderr).toContain('renewal of expired result URLs is outside the contract');
    expect(existsSync(join(ws.work, 'old.mp4'))).toBe(false);
  });
});

describe('gw video create', () => {
  const IMG = 'https://example.com/fox.png';
  const VID = 'https://example.com/fox.mp4';
  const cases: Array<[string, string[]]> = [
    ['seconds below 2', ['-m', 'vid-2.7-t2v', '--seconds', '1']],
    ['seconds above 15', ['-m', 'vid-2.7-t2v', '--seconds', '16']],
    ['clip-1.x below 3', ['-m', 'clip-1.1-t2v', '--seconds', '2']],
    ['seconds not an integer', ['-m', 'vid-2.7-t2v', '--seconds', '5.5']],
    ['seconds not a number', ['-m', 'vid-2.7-t2v', '--seconds', 'five']],
    ['resolution 4k', ['-m', 'clip-1.1-t2v', '--resolution', '4k']],
    ['seed negative', ['-m', 'vid-2.7-t2v', '--seed', '-1']],
    ['seed too large', ['-m', 'vid-2.7-t2v', '--seed', '2147483648']],
    ['seed not a number', ['-m', 'vid-2.7-t2v', '--seed', 'abc']],
    ['unknown model', ['-m', 'no-such-video-model']],
    ['t2v with a reference', ['-m', 'clip-1.1-t2v', '--ref', IMG]],
    ['i2v without its image', ['-m', 'clip-1.1-i2v']],
    ['i2v with two images', ['-m', 'clip-1.1-i2v', '--ref', IMG, '--input-image', IMG]],
    ['i2v with a reference video', ['-m', 'clip-1.0-i2v', '--input-image', IMG, '--ref-video', VID]],
    ['r2v with input_image', ['-m', 'clip-1.1-r2v', '--input-image', IMG]],
    ['http image', ['-m', 'clip-1.0-r2v', '--ref', 'http://example.com/fox.png']],
    ['video not .mp4/.mov', ['-m', 'vid-2.7-r2v', '--ref-video', 'https://example.com/fox.avi']],
    ['vid-2.7-r2v without a video', ['-m', 'vid-2.7-r2v', '--ref', IMG]],
    ['vid-2.7-i2v video not first', ['-m', 'vid-2.7-i2v', '--ref', IMG, '--ref', VID]],
    ['videoedit without a video', ['-m', 'vid-2.7-videoedit']],
    ['missing -m', []],
  ];

  it('rejects every §2.3 rule client-side: exit 2, the field named, zero requests received', async () => {
    const sim = await useSim();
    const results = await Promise.all(
      cases.map(([, args]) => runGw(['video', 'create', 'a fox', ...args], { env: sim.env })),
    );
    for (const [i, r] of results.entries()) {
      const [name] = cases[i] as [string, string[]];
      expect({ name, exit: r.exitCode, stdout: r.stdout }).toEqual({ name, exit: 2, stdout: '' });
      expect(r.stderr).toMatch(/error: |required option/);
    }
    expect(sim.requests).toHaveLength(0);
  });

  it('--dry-run prints the body and the list price, with the 1080p default note, and sends nothing', async () => {
    const sim = await useSim();
    const r = await runGw(['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--seconds', '5', '--dry-run'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('"seconds": 5');
    expect(r.stdout).toContain('CNY 6.00');
    // Notes go to stderr: stdout holds the request, the body and the price.
    expect(r.stderr).toContain(
      '1080p is the clip-1.1 default resolution; pass --resolution 720p for the lower price',
    );
    expect(r.stderr).toContain('dry run: nothing was sent');
    const cheap = await runGw(
      [
        '--json',
        'video',
        'create',
        'a fox',
        '-m',
        'clip-1.1-t2v',
        '--seconds',
        '5',
        '--resolution',
        '720p',
        '--dry-run',
      ],
      {
        env: sim.env,
      },
    );
    expect(JSON.parse(cheap.stdout)).toMatchObject({
      method: 'POST',
      path: '/v1/videos',
      body: { resolution: '720p' },
      price: { priced: true, amount: 4.5, currency: 'CNY' },
    });
    expect(cheap.stderr).toBe('');
    expect(sim.requests).toHaveLength(0);
  });

  it('--no-validate sends a rule-breaking body and the gateway answers with its documented code', async () => {
    const sim = await useSim();
    const r = await runGw(
      ['--no-validate', 'video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--seconds', '2'],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/error: invalid_duration: /);
    expect(r.stderr).toMatch(/request id: req-sim-/);
    expect(sim.requests).toHaveLength(1);
  });

  it('journals the id before printing it: SIGKILL on the first byte of stdout still leaves it in the journal', async () => {
    const sim = await useSim();
    const ws = workspace();
    let printed = '';
    await spawnGw(['video', 'create', 'a fox', '-m', 'vid-2.7-t2v'], {
      env: { ...sim.env, GW_STATE_DIR: ws.state },
      onSpawn: (child) => {
        child.stdout?.once('data', (c: Buffer) => {
          printed = c.toString().trim();
          child.kill('SIGKILL');
        });
      },
    });
    expect(printed).toMatch(/^video_/);
    const journal = readFileSync(join(ws.state, 'journal.jsonl'), 'utf8');
    expect(journal).toContain(`"id":"${printed}"`);
    const h = await runGw(['--json', 'history', '--kind', 'video'], {
      env: { ...sim.env, GW_STATE_DIR: ws.state },
    });
    expect((JSON.parse(h.stdout) as Array<{ id: string }>).map((e) => e.id)).toEqual([printed]);
  });

  it('--json prints the whole answer; --wait --download chain the steps with only the id on stdout', async () => {
    const sim = await useSim();
    const ws = workspace();
    const j = await runGw(['--json', 'video', 'create', 'a fox', '-m', 'vid-2.7-t2v'], { env: sim.env });
    expect(JSON.parse(j.stdout)).toMatchObject({ status: 'queued', object: 'video', model: 'vid-2.7-t2v' });
    const r = await gw(
      ['video', 'create', 'fox', '-m', 'vid-2.7-t2v', '--seconds', '4', '--download', 'chained.mp4'],
      sim,
      ws,
    );
    expect(r.exitCode).toBe(0);
    const id = r.stdout.trim();
    expect(id).toMatch(/^video_\w+$/);
    expect(readFileSync(join(ws.work, 'chained.mp4')).equals(servedBytes(sim, id))).toBe(true);
  });
});

describe('gw video get and gw history', () => {
  it('get shows state, result URL and expires_at as local time (on a terminal also "in 24 h"); --json raw', async () => {
    const sim = await useSim();
    const ws = workspace();
    const id = await createDone(sim, ws);
    const r = await gw(['video', 'get', id], sim, ws);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^state: +completed$/m);
    expect(r.stdout).toMatch(/^result_url: +http:\/\/127\.0\.0\.1:\d+\/files\//m);
    // Off a terminal a time is absolute only (a relative one would change by the minute in a saved output).
    expect(r.stdout).toMatch(/^expires_at: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d$/m);
    const tty = await runGw(['video', 'get', id], { cwd: ws.work, env: wsEnv(sim, ws), tty: true });
    expect(tty.stdout).toMatch(/^expires_at: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d \(in 24 h\)$/m);
    const rec = JSON.parse((await gw(['--json', 'video', 'get', id], sim, ws)).stdout) as Record<
      string,
      unknown
    >;
    expect(rec).toMatchObject({ object: 'video', status: 'completed' });
    const h = await gw(['history', '--refresh'], sim, ws);
    expect(h.stdout).toMatch(/\tvideo\tvideo_\w+\tvid-2\.7-t2v\tcompleted\t/);
  });

  it('history still reads a journal whose last line was cut by a crash', async () => {
    const sim = await useSim();
    const ws = workspace();
    const id = (await gw(['video', 'create', 'fox', '-m', 'vid-2.7-t2v'], sim, ws)).stdout.trim();
    writeFileSync(
      join(ws.state, 'journal.jsonl'),
      `${readFileSync(join(ws.state, 'journal.jsonl'), 'utf8')}{"op":"create","ki`,
    );
    const r = await gw(['history', '--json'], sim, ws);
    expect(r.exitCode).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ id: string }>).map((e) => e.id)).toEqual([id]);
  });
});

describe('help', () => {
  it.each([[[]], [['create']], [['get']], [['wait']], [['download']]])(
    'gw video %j --help shows a working example',
    async (verb) => {
      const r = await runGw(['video', ...verb, '--help']);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toMatch(/Examples:\n {2}(id=\$\()?gw video/);
    },
  );
  it('gw wait --help documents the --json shape', async () => {
    const r = await runGw(['video', 'wait', '--help']);
    expect(r.stdout).toContain('--json prints the final record');
  });
});
