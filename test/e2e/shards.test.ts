/**
 * Shards without a real scheduler (test/e2e/slurm.test.ts runs them under Slurm): `--shard auto` reading each
 * scheduler's variables as it sets them, the batch directory that holds one shard, `gw doctor`'s shard check,
 * `gw load --shard` (every n-th arrival of one schedule, a share of the users), `--start-at`, and the merges that
 * refuse other runs, name missing shards and take a shard once. In-process against gw sim.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from '../../src/load/histogram.js';
import type { RunReport } from '../../src/load/schema.js';
import { batchSim, chat, createsByPrompt, gw, jsonl, video, writeInput } from '../helpers/batch.js';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

/** A file of chat and video lines. */
function mixedInput(dir: string, n = 12): string {
  return writeInput(
    dir,
    Array.from({ length: n }, (_, i) => (i % 3 === 2 ? video(`v${i}`) : chat(`c${i}`))),
  );
}

const posts = (s: { requests: Array<{ method: string }> }): number =>
  s.requests.filter((q) => q.method === 'POST').length;

describe('gw batch run --shard auto', () => {
  it('each Kubernetes index takes its shard; the merge holds every line once, each created once', async () => {
    const s = await batchSim({ videoBytes: 500 });
    const d = tempDir('gw-sh-');
    const home = isolatedDirs();
    const file = mixedInput(d);
    const dirs: string[] = [];
    for (const index of ['0', '1', '2']) {
      const out = join(d, `shard-${index}`);
      const env = { ...s.env, JOB_COMPLETION_INDEX: index, GW_SHARDS: '3' };
      const r = await gw(['batch', 'run', file, '--out', out, '--shard', 'auto'], env, home);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        `shard ${Number(index) + 1}/3 from Kubernetes Indexed Job (JOB_COMPLETION_INDEX=${index}, GW_SHARDS=3)`,
      );
      dirs.push(out);
    }
    const m = await gw(['batch', 'merge', ...dirs, '--out', join(d, 'all'), '--json'], s.env, home);
    expect(m.exitCode, m.stderr).toBe(0);
    expect(JSON.parse(m.stdout).shards).toMatchObject({ merged: ['1/3', '2/3', '3/3'], missing: [] });
    const ids = jsonl(join(d, 'all', 'results.jsonl')).map((x) => x.custom_id as string);
    expect(ids.sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => (i % 3 === 2 ? `v${i}` : `c${i}`)).sort(),
    );
    for (const n of createsByPrompt(s, '/v1/videos').values()) expect(n).toBe(1);
    for (const n of createsByPrompt(s, '/v1/chat/completions').values()) expect(n).toBe(1);
  });

  it('an index without its count is exit 2 naming the variables, and nothing is sent', async () => {
    const s = await batchSim();
    const d = tempDir('gw-sh-');
    const file = mixedInput(d);
    const cases: Array<[Record<string, string>, string]> = [
      [{ JOB_COMPLETION_INDEX: '1' }, 'JOB_COMPLETION_INDEX set without GW_SHARDS'],
      [
        { SLURM_ARRAY_TASK_ID: '5', SLURM_ARRAY_TASK_COUNT: '4', SLURM_ARRAY_TASK_MIN: '0' },
        'SLURM_ARRAY_TASK_ID=5, SLURM_ARRAY_TASK_COUNT=4, SLURM_ARRAY_TASK_MIN=0 is no shard of 1 to 4',
      ],
      [{}, '--shard auto: no scheduler variables are set'],
    ];
    for (const [vars, text] of cases) {
      const r = await gw(
        ['batch', 'run', file, '--out', join(d, 'out'), '--shard', 'auto'],
        { ...s.env, ...vars },
        isolatedDirs(),
      );
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(text);
    }
    const load = await runGw(['load', '-m', 'chat-3.7-plus', '--requests', '3', '--shard', 'auto'], {
      env: { ...s.env, CI_NODE_INDEX: '2' },
    });
    expect(load.exitCode).toBe(2);
    expect(load.stderr).toContain('CI_NODE_INDEX set without CI_NODE_TOTAL');
    expect(s.requests).toHaveLength(0);
  });

  it('GW_SHARD shards a run without the flag; a directory holds one shard: another is exit 2, nothing sent', async () => {
    const s = await batchSim();
    const d = tempDir('gw-sh-');
    const home = isolatedDirs();
    const file = writeInput(
      d,
      Array.from({ length: 9 }, (_, i) => chat(`c${i}`)),
    );
    const out = join(d, 'out');
    const first = await gw(
      ['batch', 'run', file, '--out', out, '--json'],
      { ...s.env, GW_SHARD: '2/3' },
      home,
    );
    expect(first.exitCode, first.stderr).toBe(0);
    const sent = posts(s);
    expect(sent).toBe(JSON.parse(first.stdout).total);
    expect(sent).toBeLessThan(9);
    const other = await gw(['batch', 'run', file, '--out', out, '--shard', '1/3'], s.env, home);
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain(
      `--shard: ${out} holds shard 2/3 of its run, and this run is shard 1/3: nothing was sent`,
    );
    const whole = await gw(['batch', 'run', file, '--out', out], s.env, home);
    expect(whole.exitCode).toBe(2);
    expect(whole.stderr).toContain('this run is shard 1/1');
    expect(posts(s)).toBe(sent);
  });

  it('a Slurm index resubmitted alone (an array of one) resumes the shard its directory holds', async () => {
    const s = await batchSim({ videoBytes: 300 });
    const d = tempDir('gw-sh-');
    const home = isolatedDirs();
    const file = mixedInput(d);
    const out = join(d, 'out-2');
    const array = { SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_COUNT: '4', SLURM_ARRAY_TASK_MIN: '0' };
    const first = await gw(
      ['batch', 'run', file, '--out', out, '--shard', 'auto', '--json'],
      { ...s.env, ...array },
      home,
    );
    expect(first.exitCode, first.stderr).toBe(0);
    const sent = posts(s);
    // sbatch --array=2: the same index, alone.
    const alone = { SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_COUNT: '1', SLURM_ARRAY_TASK_MIN: '2' };
    const again = await gw(
      ['batch', 'run', file, '--out', out, '--shard', 'auto', '--json'],
      { ...s.env, ...alone },
      home,
    );
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      `SLURM_ARRAY_TASK_ID=2 ran alone (an array of one): resuming shard 3/4, which ${out} holds for that index`,
    );
    expect(JSON.parse(again.stdout)).toMatchObject({
      total: JSON.parse(first.stdout).total,
      skipped: JSON.parse(first.stdout).total,
    });
    expect(posts(s)).toBe(sent);
    const runs = jsonl(join(out, 'state.jsonl')).filter((r) => r.e === 'run');
    expect(runs.map((r) => (r.opts as { shard: string }).shard)).toEqual(['3/4', '3/4']);
    expect(new Set(runs.map((r) => r.run)).size).toBe(1);
  });

  it('gw doctor shows the shard and where it came from; variables that do not add up fail (exit 3)', async () => {
    const ok = await runGw(['doctor', '--offline', '--json'], {
      env: {
        CI_NODE_INDEX: '2',
        CI_NODE_TOTAL: '4',
        GW_BASE_URL: 'http://127.0.0.1:9',
        GW_TOKEN: 'sk-x-00000000',
      },
    });
    const doc = JSON.parse(ok.stdout);
    expect(doc.shard).toEqual({ shard: '2/4', source: 'GitLab parallel (CI_NODE_INDEX=2, CI_NODE_TOTAL=4)' });
    expect(doc.checks).toContainEqual({
      name: 'shard',
      status: 'ok',
      detail: '2/4 from GitLab parallel (CI_NODE_INDEX=2, CI_NODE_TOTAL=4)',
    });
    const text = await runGw(['doctor', '--offline'], { env: { GW_SHARD: '3/8' } });
    expect(text.stdout).toMatch(/^ok\s+shard: 3\/8 from GW_SHARD$/m);
    const none = await runGw(['doctor', '--offline', '--json'], { env: { CI_NODE_TOTAL: '1' } });
    expect(JSON.parse(none.stdout).shard).toEqual({ shard: null, source: null });
    const bad = await runGw(['doctor', '--offline', '--json'], {
      env: { AWS_BATCH_JOB_ARRAY_INDEX: '3', GW_BASE_URL: 'http://127.0.0.1:9', GW_TOKEN: 'sk-x-00000000' },
    });
    expect(bad.exitCode).toBe(3);
    expect(JSON.parse(bad.stdout).checks).toContainEqual(
      expect.objectContaining({
        name: 'shard',
        status: 'fail',
        detail: expect.stringContaining('AWS_BATCH_JOB_ARRAY_INDEX set without AWS_BATCH_JOB_ARRAY_SIZE'),
      }),
    );
  });
});

/** The rows of a --csv file as objects. */
function csvRows(path: string): Array<Record<string, string>> {
  const [head, ...rows] = readFileSync(path, 'utf8').trim().split('\n');
  const names = (head ?? '').split(',');
  return rows.map(
    (r) => Object.fromEntries(r.split(',').map((v, i) => [names[i] ?? '', v])) as Record<string, string>,
  );
}

const LOAD = ['load', '-m', 'chat-3.7-plus', '--max-tokens', '4', '--json'];

async function loadRun(args: string[], env: Record<string, string>): Promise<RunReport> {
  const r = await runGw([...LOAD, ...args], { env, clock: 'real' });
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as RunReport;
}

describe('gw load --shard and --start-at', () => {
  it('open loop: the shards send every n-th arrival of one seeded schedule; their union is the one-machine schedule', async () => {
    const sim = await useSim();
    const d = tempDir('gw-sh-');
    const at = Date.now() + 400;
    const open = ['--rate', '400', '--requests', '60', '--seed', '7', '--start-at', String(at)];
    await loadRun([...open, '--csv', join(d, 'one.csv')], sim.env);
    // The open loop's start_ms is each request's scheduled start, from the run's origin: --start-at's instant.
    const scheduled = (file: string): number[] => csvRows(file).map((r) => Number(r.start_ms));
    const one = scheduled(join(d, 'one.csv')).sort((a, b) => a - b);
    expect(one).toHaveLength(60);
    const at2 = String(Date.now() + 400);
    const open2 = open.map((x) => (x === String(at) ? at2 : x));
    const reports = await Promise.all(
      [1, 2, 3].map((k) => loadRun([...open2, '--shard', `${k}/3`, '--csv', join(d, `s${k}.csv`)], sim.env)),
    );
    expect(reports.map((r) => r.steps[0]?.requests)).toEqual([20, 20, 20]);
    expect(reports.map((r) => r.steps[0]?.rate)).toEqual([400 / 3, 400 / 3, 400 / 3]);
    expect(reports.map((r) => r.steps[0]?.label)).toEqual(['rate=400/s', 'rate=400/s', 'rate=400/s']);
    const union = [1, 2, 3].flatMap((k) => scheduled(join(d, `s${k}.csv`))).sort((a, b) => a - b);
    expect(union).toHaveLength(60);
    union.forEach((t, i) => expect(Math.abs(t - (one[i] as number))).toBeLessThanOrEqual(0.002));
    // Shard 2 takes arrivals 1, 4, 7, …: its first is the one-machine schedule's second.
    expect(Math.min(...scheduled(join(d, 's2.csv')))).toBeCloseTo(one[1] as number, 1);
    expect(reports[0]?.shard?.run).toBe(reports[2]?.shard?.run);
    expect(reports.map((r) => r.start_at?.unix_ms)).toEqual([Number(at2), Number(at2), Number(at2)]);
  });

  it('closed loop: the users and the requests are split (⌊c/n⌋, one more for the first c mod n)', async () => {
    const sim = await useSim();
    const d = tempDir('gw-sh-');
    const closed = ['--concurrency', '10', '--requests', '100'];
    const paths = [1, 2, 3].map((k) => join(d, `c${k}.json`));
    const reports = await Promise.all(
      [1, 2, 3].map((k) =>
        loadRun([...closed, '--shard', `${k}/3`, '--out', paths[k - 1] as string], sim.env),
      ),
    );
    expect(reports.map((r) => r.steps[0]?.concurrency)).toEqual([4, 3, 3]);
    expect(reports.map((r) => r.steps[0]?.requests)).toEqual([34, 33, 33]);
    expect(reports.map((r) => r.steps[0]?.label)).toEqual(Array(3).fill('concurrency=10'));
    const m = await runGw(['load', 'merge', ...paths, '--json']);
    const merged = JSON.parse(m.stdout) as RunReport;
    expect(merged.steps[0]).toMatchObject({ concurrency: 10, requests: 100, label: 'concurrency=10' });
    const few = await runGw([...LOAD, '--concurrency', '2', '--shard', '3/3'], { env: sim.env });
    expect(few.exitCode).toBe(2);
    expect(few.stderr).toContain('--concurrency: 2 users cannot be split into 3 shards (each needs one)');
    expect(sim.requests).toHaveLength(100);
  });

  it('merge: one histogram of every request; other runs refused; missing shards named; a shard taken once', async () => {
    const sim = await useSim();
    const d = tempDir('gw-sh-');
    const base = ['--rate', '300', '--requests', '45', '--start-at', String(Date.now() + 300)];
    const out = (name: string): string => join(d, name);
    await Promise.all(
      [1, 2, 3].map((k) =>
        loadRun(
          [...base, '--shard', `${k}/3`, '--out', out(`r${k}.json`), '--csv', out(`r${k}.csv`)],
          sim.env,
        ),
      ),
    );
    const m = await runGw(['load', 'merge', out('r1.json'), out('r2.json'), out('r3.json'), '--json']);
    expect(m.exitCode, m.stderr).toBe(0);
    const merged = JSON.parse(m.stdout) as RunReport;
    const all = new LatencyHistogram();
    let ok = 0;
    for (const k of [1, 2, 3]) {
      for (const row of csvRows(out(`r${k}.csv`))) {
        if (row.ok !== 'true') continue;
        all.recordMs(Number(row.e2e_ms));
        ok++;
      }
    }
    expect(merged.steps[0]?.requests).toBe(45);
    expect(merged.steps[0]?.latency_ms.e2e).toEqual({ ...all.summary(), count: ok });
    expect(merged.shards).toMatchObject({ n: 3, merged: ['1/3', '2/3', '3/3'], missing: [], skipped: [] });
    expect(Object.keys(merged.shards?.late_start_ms ?? {})).toEqual(['1/3', '2/3', '3/3']);

    // Shard 2/3 of another run (another seed): refused.
    await loadRun([...base, '--seed', '9', '--shard', '2/3', '--out', out('other.json')], sim.env);
    const mixed = await runGw(['load', 'merge', out('r1.json'), out('other.json')]);
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toContain('not parts of one run');
    // Missing shards: exit 1 naming them, or merged with --allow-missing and said.
    const missing = await runGw(['load', 'merge', out('r1.json'), out('r3.json')]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('shards_missing: shard 2/3 of the run missing: nothing merged');
    const allowed = await runGw([
      'load',
      'merge',
      out('r1.json'),
      out('r3.json'),
      '--allow-missing',
      '--json',
    ]);
    expect(allowed.exitCode).toBe(0);
    expect(JSON.parse(allowed.stdout).shards.missing).toEqual(['2/3']);
    expect(JSON.parse(allowed.stdout).warnings).toContainEqual(
      expect.stringContaining('shard 2/3 of the run missing'),
    );
    expect(allowed.stderr).toContain('merged without shard(s) 2/3 (--allow-missing)');
    // The scheduler ran index 2 twice; the first attempt was cut short (fewer requests): taken once.
    const r2 = JSON.parse(readFileSync(out('r2.json'), 'utf8')) as RunReport;
    const cut = structuredClone(r2);
    cut.interrupted = true;
    cut.created_at = new Date(Date.parse(r2.created_at) - 1000).toISOString();
    writeFileSync(out('r2-first.json'), JSON.stringify(cut));
    const twice = await runGw([
      'load',
      'merge',
      out('r2-first.json'),
      out('r1.json'),
      out('r2.json'),
      out('r3.json'),
      '--json',
    ]);
    expect(twice.exitCode, twice.stderr).toBe(0);
    const once = JSON.parse(twice.stdout) as RunReport;
    expect(once.steps[0]?.requests).toBe(45);
    expect(once.shards?.skipped).toEqual([{ shard: '2/3', file: out('r2-first.json') }]);
    expect(once.machines).toBe(3);
  });

  it('--start-at asks GET /v1/models first: a refused token ends the run before the instant (exit 3)', async () => {
    const sim = await useSim();
    // An instant a minute away: the run must end long before it (the test's own limit is 30 s).
    const r = await runGw(
      [...LOAD, '--rate', '10', '--requests', '5', '--start-at', String(Date.now() + 60_000)],
      {
        env: { ...sim.env, GW_TOKEN: 'sk-refused-0000000' },
      },
    );
    expect(r.exitCode).toBe(3);
    expect(sim.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /v1/models']);
    const ok = await loadRun(
      ['--rate', '50', '--requests', '5', '--start-at', String(Date.now() + 200)],
      sim.env,
    );
    expect(ok.steps[0]?.requests).toBe(5);
    expect(sim.requests.slice(1, 2).map((q) => `${q.method} ${q.path}`)).toEqual(['GET /v1/models']);
  });

  it('--start-at: a past instant is a late start, recorded and warned; a bad one is exit 2, nothing sent', async () => {
    const sim = await useSim();
    const late = await runGw(
      [...LOAD, '--requests', '3', '--concurrency', '1', '--start-at', String(Date.now() - 5000)],
      {
        env: sim.env,
      },
    );
    expect(late.exitCode, late.stderr).toBe(0);
    const r = JSON.parse(late.stdout) as RunReport;
    expect(r.start_at?.late_ms).toBeGreaterThanOrEqual(5000);
    expect(r.warnings).toContainEqual(
      expect.stringMatching(
        /^started \d+\.\ds after --start-at: this machine ran its schedule from its own start$/,
      ),
    );
    const sent = sim.requests.length;
    for (const [value, rule] of [
      ['1764158400', 'looks like seconds; give Unix milliseconds'],
      ['tomorrow', 'is not an RFC 3339 time'],
      ['2026-01-31 12:00', 'is not an RFC 3339 time'],
      [String(Date.now() + 2 * 86_400_000), 'is more than 24 hours ahead'],
    ]) {
      const bad = await runGw(
        ['load', '-m', 'chat-3.7-plus', '--requests', '3', '--start-at', value as string],
        {
          env: sim.env,
        },
      );
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain(`--start-at: "${value}" ${rule}`);
    }
    const video = await runGw(
      ['load', '-m', 'clip-1.1-t2v', '--api', 'video', '--budget', '5CNY', '--shard', '1/2'],
      { env: sim.env },
    );
    expect(video.exitCode).toBe(2);
    expect(video.stderr).toContain('--shard: is not supported with --api video');
    expect(sim.requests).toHaveLength(sent);
  });
});
