/**
 * Shards without a real scheduler (test/e2e/slurm.test.ts runs them under Slurm): `--shard auto` reading each
 * scheduler's variables as it sets them, the batch directory that holds one shard, and `gw doctor`'s shard check.
 * In-process against gw sim.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchSim, chat, createsByPrompt, gw, jsonl, video, writeInput } from '../helpers/batch.js';
import { isolatedDirs, runGw } from '../helpers/gw.js';
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
