/**
 * Shards under a real scheduler: a one-node Slurm cluster (test/helpers/slurm.ts) runs the job scripts of
 * docs/distributed.md as they are, against gw sim on 127.0.0.1. Array tasks run the real bin/gw with
 * `--shard auto`; the fan-in job is submitted with --dependency=afterany. The tests wait on Slurm's own job states
 * (scontrol) and on the files the jobs write, never on a fixed sleep.
 *
 * Slurm missing fails these tests (CI installs it); GW_SKIP_SLURM=1 skips them on a machine without it.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOf } from '../../src/batch/shard.js';
import type { CapacityStats } from '../../src/sim/capacity.js';
import { LatencyHistogram } from '../../src/load/histogram.js';
import type { RunReport } from '../../src/load/schema.js';
import { batchSim, chat, createsByPrompt, jsonl, video, writeInput, type Line } from '../helpers/batch.js';
import { csvRows, docFile, firstRequestLateness, SBATCH } from '../helpers/distributed.js';
import { gwBinDir, isolatedDirs, spawnGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { SKIP_SLURM, startSlurm, until, type Slurm } from '../helpers/slurm.js';
import { tempDir } from '../helpers/tmp.js';

let slurm: Slurm | undefined;

beforeAll(async () => {
  if (!SKIP_SLURM) slurm = await startSlurm();
}, 120_000);

afterAll(async () => {
  await slurm?.stop();
}, 60_000);

/** A directory holding the job scripts of docs/distributed.md and a logs/ directory, as its Slurm section says. */
function workDir(): string {
  const d = tempDir('gw-slurm-work-');
  for (const f of ['shard.sbatch', 'merge.sbatch', 'load.sbatch']) writeFileSync(join(d, f), docFile(f));
  mkdirSync(join(d, 'logs'));
  return d;
}

/** The environment sbatch passes to the jobs: gw on the PATH, the simulator, an isolated gw home. */
function jobEnv(sim: { env: Record<string, string> }): Record<string, string> {
  return {
    PATH: `${gwBinDir()}:${process.env.PATH ?? ''}`,
    NO_COLOR: '1',
    TMPDIR: process.env.TMPDIR ?? '/tmp',
    ...isolatedDirs(),
    ...sim.env,
  };
}

/** Every log the jobs wrote (shown when a job did not complete). */
function logs(d: string): string {
  const dir = join(d, 'logs');
  return readdirSync(dir)
    .map((f) => `--- ${f}\n${readFileSync(join(dir, f), 'utf8')}`)
    .join('\n');
}

function mixed(n: number): Line[] {
  return Array.from({ length: n }, (_, i) => (i % 2 === 0 ? video(`v${i}`) : chat(`c${i}`)));
}

/**
 * A result line without what differs from one run to another of the same request: ids the gateway made up, times,
 * request ids, URLs naming those ids. What is left is what the request got: status, content, usage, the task's
 * settings and state, the files and their sizes.
 */
function stable(line: Record<string, unknown>): unknown {
  const drop =
    /^(id|created|created_at|completed_at|updated_at|expires_at|request_id|task_id|url|video_url|video_id|system_fingerprint)$/;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .filter(([k]) => !drop.test(k))
        .map(([k, x]) => [k, walk(x)]),
    );
  };
  return walk(line);
}

function byId(path: string): Map<string, unknown> {
  return new Map(jsonl(path).map((l) => [l.custom_id as string, stable(l)]));
}

const COMPLETED = (states: Map<string, string>): string[] => [...new Set(states.values())];

describe.skipIf(SKIP_SLURM)('gw under Slurm', () => {
  it(
    'sbatch --array of 4 batch shards, then an afterany fan-in: the merge equals a one-machine run, each create once',
    { timeout: 240_000 },
    async () => {
      const cluster = slurm as Slurm;
      const s = await batchSim({ videoBytes: 1500 });
      const d = workDir();
      writeInput(d, mixed(16));
      const env = jobEnv(s);
      const jid = await cluster.sbatch(SBATCH.shards(), { cwd: d, env });
      const mid = await cluster.sbatch(SBATCH.fanIn([jid]), { cwd: d, env });
      const states = await cluster.untilEnded([jid, mid], 180_000);
      expect(COMPLETED(states), logs(d)).toEqual(['COMPLETED']);
      expect(states.size).toBe(5);
      // Each task took its own shard from Slurm's variables.
      const shardLogs = readdirSync(join(d, 'logs')).filter((f) => f.startsWith('shard-'));
      const taken = shardLogs.map(
        (f) => /shard (\d\/4) from Slurm array/.exec(readFileSync(join(d, 'logs', f), 'utf8'))?.[1],
      );
      expect(taken.sort()).toEqual(['1/4', '2/4', '3/4', '4/4']);
      // The merged directory against one machine's run of the same file (its own simulator).
      const one = await batchSim({ videoBytes: 1500 });
      const r = await spawnGw(['batch', 'run', 'jobs.jsonl', '--out', 'one'], { cwd: d, env: jobEnv(one) });
      expect(r.exitCode, r.stderr).toBe(0);
      const merged = byId(join(d, 'merged', 'results.jsonl'));
      const single = byId(join(d, 'one', 'results.jsonl'));
      expect([...merged.keys()].sort()).toEqual([...single.keys()].sort());
      expect(merged.size).toBe(16);
      for (const [id, line] of single) expect(merged.get(id), id).toEqual(line);
      for (const f of readdirSync(join(d, 'one', 'files')))
        expect(readFileSync(join(d, 'merged', 'files', f))).toEqual(readFileSync(join(d, 'one', 'files', f)));
      // The simulator that served the shards saw each create once.
      const creates = [
        ...createsByPrompt(s, '/v1/videos').values(),
        ...createsByPrompt(s, '/v1/chat/completions').values(),
      ];
      expect(creates).toHaveLength(16);
      expect(creates.every((n) => n === 1)).toBe(true);
      const merge = readFileSync(
        join(d, 'logs', readdirSync(join(d, 'logs')).find((f) => f.startsWith('merge-')) as string),
        'utf8',
      );
      expect(merge).toMatch(/^missing shards:\s+none$/m);
    },
  );

  it(
    'an array task killed (SIGKILL) after its creates, then its index submitted alone: it resumes, nothing is created twice',
    { timeout: 240_000 },
    async () => {
      const cluster = slurm as Slurm;
      // Videos take a while, so the task is killed while it follows the tasks it created.
      const s = await batchSim({ videoBytes: 1500, timings: { videoQueuedMs: 6000, videoRunningMs: 500 } });
      const d = workDir();
      const lines = mixed(24);
      writeInput(d, lines);
      const env = jobEnv(s);
      const index = 2;
      const videosOfShard = lines.filter(
        (l) => l.url === '/v1/videos' && shardOf(l.custom_id, 4) === index + 1,
      );
      expect(videosOfShard.length).toBeGreaterThan(0);
      const jid = await cluster.sbatch(SBATCH.shards(), { cwd: d, env });
      const dir = join(d, 'out', `shard-${index}`);
      // Every create of the shard answered: nothing of it is in flight when it is killed.
      await until(
        `shard ${index}'s creates`,
        () => {
          const created = jsonl(join(dir, 'state.jsonl')).filter((r) => r.e === 'created');
          return created.length === videosOfShard.length ? true : undefined;
        },
        60_000,
      );
      await cluster.run('scancel', ['--signal=KILL', '--full', `${jid}_${index}`]);
      const killed = await until(
        'the killed task to end',
        async () => {
          const st = [...(await cluster.states(jid)).values()];
          return st.includes('CANCELLED') ? st : undefined;
        },
        60_000,
      );
      expect(killed).toContain('CANCELLED');
      const before = jsonl(join(dir, 'results.jsonl')).filter((l) => (l.custom_id as string).startsWith('v'));
      expect(before.length).toBeLessThan(videosOfShard.length);
      // The same index again, alone, with the same script (docs/distributed.md), and the fan-in after both jobs.
      const rid = await cluster.sbatch(SBATCH.again(index), { cwd: d, env });
      const mid = await cluster.sbatch(SBATCH.fanIn([jid, rid]), {
        cwd: d,
        env,
      });
      const states = await cluster.untilEnded([jid, rid, mid], 180_000);
      expect([...(await cluster.states(rid)).values()], logs(d)).toEqual(['COMPLETED']);
      expect([...(await cluster.states(mid)).values()], logs(d)).toEqual(['COMPLETED']);
      expect(states.size).toBe(6);
      const resumed = readFileSync(join(d, 'logs', `shard-${rid}_${index}.out`), 'utf8');
      expect(resumed).toContain(`ran alone (an array of one): resuming shard ${index + 1}/4`);
      const merged = jsonl(join(d, 'merged', 'results.jsonl'));
      expect(merged.map((l) => l.custom_id).sort()).toEqual(lines.map((l) => l.custom_id).sort());
      const creates = [
        ...createsByPrompt(s, '/v1/videos').values(),
        ...createsByPrompt(s, '/v1/chat/completions').values(),
      ];
      expect(creates).toHaveLength(24);
      expect(creates.every((n) => n === 1)).toBe(true);
    },
  );

  it(
    '3 load shards with --start-at never start before the instant; the merge is one histogram of all',
    { timeout: 240_000 },
    async () => {
      const cluster = slurm as Slurm;
      const sim = await useSim({
        capacity: { maxConcurrent: 1000, queue: 1000, ttftMs: 5, tokensPerSecond: 2000 },
      });
      const d = workDir();
      const env = jobEnv(sim);
      // Time for the three tasks to be running (Slurm starts them within a second here; gw needs well under one).
      const startAt = Date.now() + 8000;
      const jid = await cluster.sbatch(SBATCH.load(60, '3s', startAt), {
        cwd: d,
        env,
      });
      const mid = await cluster.sbatch(SBATCH.loadFanIn(jid), { cwd: d, env });
      const states = await cluster.untilEnded([jid, mid], 180_000);
      expect(COMPLETED(states), logs(d)).toEqual(['COMPLETED']);
      const stamps = (await (await fetch(`${sim.baseUrl}/sim/capacity?stamps=1`)).json()) as CapacityStats;
      const arrived = new Map((stamps.stamps ?? []).map((x) => [x.request_id, x.arrived_unix_ms]));
      const reports: RunReport[] = [];
      const all = new LatencyHistogram();
      const lateness: number[] = [];
      for (const k of [0, 1, 2]) {
        reports.push(JSON.parse(readFileSync(join(d, 'load', `run-${k}.json`), 'utf8')) as RunReport);
        const rows = csvRows(join(d, 'load', `run-${k}.csv`));
        for (const row of rows) if (row.ok === 'true') all.recordMs(Number(row.e2e_ms));
        lateness.push(firstRequestLateness(rows, startAt, arrived));
      }
      // Never early (the clocks of two processes on one machine agree to well under a millisecond): a shard that
      // ignored --start-at would send as soon as Slurm started it, seconds before the instant. How late is a
      // matter of the machine's load, so it is a figure of `npm run bench -- shards` (Slurm skew), not a bound here.
      for (const l of lateness)
        expect(l, `first-request lateness ${lateness.join(', ')} ms`).toBeGreaterThan(-1);
      expect(reports.map((r) => r.shard?.shard).sort()).toEqual(['1/3', '2/3', '3/3']);
      expect(reports.every((r) => r.start_at?.unix_ms === startAt)).toBe(true);
      const merged = JSON.parse(readFileSync(join(d, 'load', 'all.json'), 'utf8')) as RunReport;
      const st = merged.steps[0];
      expect(st?.requests).toBe(reports.reduce((a, r) => a + (r.steps[0]?.requests ?? 0), 0));
      expect(st?.requests).toBeGreaterThan(150);
      expect(st?.latency_ms.e2e).toEqual(all.summary());
      expect(merged.shards).toMatchObject({ n: 3, merged: ['1/3', '2/3', '3/3'], missing: [] });
    },
  );
});
