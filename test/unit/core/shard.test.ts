/**
 * The shard resolver against each scheduler's own variables (as the scheduler sets them), their order, and the
 * sets that do not add up; the run identity; the checks a merge makes of its shards.
 */
import { describe, expect, it } from 'vitest';
import { GwError, UsageError } from '../../../src/core/errors.js';
import {
  autoShard,
  joinShards,
  parseShard,
  parseShardFlag,
  resolveShard,
  runId,
  SCHEDULERS,
  type ShardPart,
} from '../../../src/core/shard.js';

function usage(f: () => unknown): UsageError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return e as UsageError;
  }
  throw new Error('no error');
}

describe('--shard auto: each scheduler', () => {
  it('Slurm arrays: SLURM_ARRAY_TASK_ID offset by SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT', () => {
    // sbatch --array=0-3 sets, in its task 2:
    const env = { SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_COUNT: '4', SLURM_ARRAY_TASK_MIN: '0' };
    expect(autoShard(env)).toEqual({
      k: 3,
      n: 4,
      source: 'Slurm array (SLURM_ARRAY_TASK_ID=2, SLURM_ARRAY_TASK_COUNT=4, SLURM_ARRAY_TASK_MIN=0)',
      index: 'SLURM_ARRAY_TASK_ID=2',
    });
    // sbatch --array=1-4: task 1 is shard 1/4.
    expect(
      autoShard({ SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_COUNT: '4', SLURM_ARRAY_TASK_MIN: '1' }),
    ).toMatchObject({ k: 1, n: 4 });
    // sbatch --array=2 (one index resubmitted alone): an array of one, marked lone.
    expect(
      autoShard({ SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_COUNT: '1', SLURM_ARRAY_TASK_MIN: '2' }),
    ).toMatchObject({ k: 1, n: 1, lone: true, index: 'SLURM_ARRAY_TASK_ID=2' });
  });

  it('Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX from 0, with GW_SHARDS', () => {
    expect(autoShard({ JOB_COMPLETION_INDEX: '0', GW_SHARDS: '3' })).toMatchObject({
      k: 1,
      n: 3,
      source: 'Kubernetes Indexed Job (JOB_COMPLETION_INDEX=0, GW_SHARDS=3)',
    });
    expect(autoShard({ JOB_COMPLETION_INDEX: '2', GW_SHARDS: '3' })).toMatchObject({ k: 3, n: 3 });
    const e = usage(() => autoShard({ JOB_COMPLETION_INDEX: '0' }));
    expect(e.message).toBe(
      '--shard auto: Kubernetes Indexed Job: JOB_COMPLETION_INDEX set without GW_SHARDS: an index needs its count',
    );
    expect(e.hint).toContain('GW_SHARDS');
  });

  it('GitLab parallel: CI_NODE_INDEX from 1, of CI_NODE_TOTAL; a job without parallel is no shard', () => {
    expect(autoShard({ CI_NODE_INDEX: '1', CI_NODE_TOTAL: '4' })).toMatchObject({ k: 1, n: 4 });
    expect(autoShard({ CI_NODE_INDEX: '4', CI_NODE_TOTAL: '4' })).toMatchObject({ k: 4, n: 4 });
    // GitLab sets CI_NODE_TOTAL=1 in every job; without CI_NODE_INDEX it names no copy.
    expect(autoShard({ CI_NODE_TOTAL: '1' })).toBeUndefined();
    expect(usage(() => autoShard({ CI_NODE_INDEX: '0', CI_NODE_TOTAL: '4' })).message).toBe(
      '--shard auto: GitLab parallel: CI_NODE_INDEX=0, CI_NODE_TOTAL=4 is no shard of 1 to 4 (index 0 counting from 1; an array with a step or gaps?)',
    );
  });

  it('AWS Batch arrays: AWS_BATCH_JOB_ARRAY_INDEX from 0, of AWS_BATCH_JOB_ARRAY_SIZE', () => {
    expect(autoShard({ AWS_BATCH_JOB_ARRAY_INDEX: '0', AWS_BATCH_JOB_ARRAY_SIZE: '10' })).toMatchObject({
      k: 1,
      n: 10,
    });
    expect(autoShard({ AWS_BATCH_JOB_ARRAY_INDEX: '9', AWS_BATCH_JOB_ARRAY_SIZE: '10' })).toMatchObject({
      k: 10,
      n: 10,
    });
    expect(
      usage(() => autoShard({ AWS_BATCH_JOB_ARRAY_INDEX: '10', AWS_BATCH_JOB_ARRAY_SIZE: '10' })).message,
    ).toContain('AWS_BATCH_JOB_ARRAY_INDEX=10, AWS_BATCH_JOB_ARRAY_SIZE=10 is no shard of 1 to 10');
  });

  it('GitHub Actions (and anything else): GW_SHARD=k/n, first of all', () => {
    const both = {
      GW_SHARD: '2/5',
      SLURM_ARRAY_TASK_ID: '0',
      SLURM_ARRAY_TASK_COUNT: '4',
      SLURM_ARRAY_TASK_MIN: '0',
    };
    expect(autoShard(both)).toEqual({ k: 2, n: 5, source: 'GW_SHARD' });
    expect(usage(() => autoShard({ GW_SHARD: '6/5' })).field).toBe('GW_SHARD');
  });

  it('the first scheduler whose index is set wins, in the documented order', () => {
    const all = {
      SLURM_ARRAY_TASK_ID: '1',
      SLURM_ARRAY_TASK_COUNT: '2',
      SLURM_ARRAY_TASK_MIN: '0',
      JOB_COMPLETION_INDEX: '0',
      GW_SHARDS: '3',
      CI_NODE_INDEX: '1',
      CI_NODE_TOTAL: '4',
      AWS_BATCH_JOB_ARRAY_INDEX: '0',
      AWS_BATCH_JOB_ARRAY_SIZE: '5',
    };
    expect(autoShard(all)?.source).toMatch(/^Slurm array/);
    const { SLURM_ARRAY_TASK_ID: _s, ...k8s } = all;
    expect(autoShard(k8s)?.source).toMatch(/^Kubernetes Indexed Job/);
    const { JOB_COMPLETION_INDEX: _k, ...gitlab } = k8s;
    expect(autoShard(gitlab)?.source).toMatch(/^GitLab parallel/);
    const { CI_NODE_INDEX: _g, ...aws } = gitlab;
    expect(autoShard(aws)?.source).toMatch(/^AWS Batch array/);
    expect(SCHEDULERS.map((s) => s.index)).toEqual([
      'SLURM_ARRAY_TASK_ID',
      'JOB_COMPLETION_INDEX',
      'CI_NODE_INDEX',
      'AWS_BATCH_JOB_ARRAY_INDEX',
    ]);
  });

  it('a partial or out-of-range set is exit 2 naming the variables', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [
        { SLURM_ARRAY_TASK_ID: '1' },
        'SLURM_ARRAY_TASK_ID set without SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN',
      ],
      [
        { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_COUNT: '4' },
        'SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT set without SLURM_ARRAY_TASK_MIN',
      ],
      [{ CI_NODE_INDEX: '2' }, 'CI_NODE_INDEX set without CI_NODE_TOTAL'],
      [{ AWS_BATCH_JOB_ARRAY_INDEX: '0' }, 'AWS_BATCH_JOB_ARRAY_INDEX set without AWS_BATCH_JOB_ARRAY_SIZE'],
      // sbatch --array=0-6:2 gives task 6 the index 7 of 4.
      [
        { SLURM_ARRAY_TASK_ID: '6', SLURM_ARRAY_TASK_COUNT: '4', SLURM_ARRAY_TASK_MIN: '0' },
        'SLURM_ARRAY_TASK_ID=6, SLURM_ARRAY_TASK_COUNT=4, SLURM_ARRAY_TASK_MIN=0 is no shard of 1 to 4',
      ],
      [{ JOB_COMPLETION_INDEX: '0', GW_SHARDS: '0' }, 'JOB_COMPLETION_INDEX=0, GW_SHARDS=0 is no shard'],
      [{ JOB_COMPLETION_INDEX: 'one', GW_SHARDS: '3' }, 'JOB_COMPLETION_INDEX="one" is not a whole number'],
      [{ CI_NODE_INDEX: '-1', CI_NODE_TOTAL: '3' }, 'CI_NODE_INDEX="-1" is not a whole number'],
    ];
    for (const [env, text] of cases) {
      const e = usage(() => autoShard(env));
      expect(e.message).toContain(text);
      expect(e.field).toBe('--shard');
      expect(e.exitCode).toBe(2);
    }
  });
});

describe('resolveShard: the flag, GW_SHARD and auto', () => {
  const slurm = { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '2', SLURM_ARRAY_TASK_MIN: '0' };

  it('--shard k/n as given; auto from the environment; nothing without the flag or GW_SHARD', () => {
    expect(resolveShard({ k: 2, n: 3 }, { ...slurm, GW_SHARD: '1/9' })).toEqual({
      k: 2,
      n: 3,
      source: '--shard',
    });
    expect(resolveShard('auto', slurm)).toMatchObject({ k: 1, n: 2 });
    // A scheduler's variables alone never split a run: only --shard auto (or GW_SHARD) asks for them.
    expect(resolveShard(undefined, slurm)).toBeUndefined();
    expect(resolveShard(undefined, { GW_SHARD: '3/4' })).toEqual({ k: 3, n: 4, source: 'GW_SHARD' });
    expect(resolveShard(undefined, { ...slurm, GW_SHARD: 'auto' })).toMatchObject({ k: 1, n: 2 });
  });

  it('auto with nothing set is exit 2 naming what it looked for', () => {
    const e = usage(() => resolveShard('auto', {}));
    expect(e.message).toBe(
      '--shard auto: no scheduler variables are set (looked for GW_SHARD, SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, CI_NODE_INDEX, AWS_BATCH_JOB_ARRAY_INDEX)',
    );
  });

  it('parses k/n and auto; refuses the rest naming the flag', () => {
    expect(parseShardFlag('auto')).toBe('auto');
    expect(parseShardFlag('2/3')).toEqual({ k: 2, n: 3 });
    expect(parseShard('1/1')).toEqual({ k: 1, n: 1 });
    for (const bad of ['0/3', '4/3', '3', 'x/y', '1/0', '1/2000000']) {
      expect(usage(() => parseShardFlag(bad)).message).toMatch(/^--shard: ".*" must be k\/n/);
    }
  });
});

describe('run identity and the shards of a merge', () => {
  it('runId: one per input and count', () => {
    expect(runId('abc', 4)).toMatch(/^[0-9a-f]{16}$/);
    expect(runId('abc', 4)).toBe(runId('abc', 4));
    expect(runId('abc', 4)).not.toBe(runId('abc', 3));
    expect(runId('abd', 4)).not.toBe(runId('abc', 4));
  });

  const part = (where: string, k: number, score = [0], run = 'r1', n = 3): ShardPart => ({
    where,
    run,
    n,
    ks: [k],
    score,
  });

  it('takes each shard once (the better copy), names the missing, keeps the given order', () => {
    const set = joinShards(
      [part('a', 1), part('b', 2, [5]), part('b2', 2, [9]), part('c', 3)],
      false,
      'dirs',
    );
    expect(set.kept.map((p) => p.where)).toEqual(['a', 'b2', 'c']);
    expect(set.skipped).toEqual([{ shard: '2/3', where: 'b' }]);
    expect(set.merged).toEqual(['1/3', '2/3', '3/3']);
    expect(set.missing).toEqual([]);
    expect(set.run).toBe('r1');
  });

  it('refuses different runs or counts (exit 2); missing shards are exit 1 unless allowed', () => {
    expect(usage(() => joinShards([part('a', 1), part('b', 2, [0], 'r2')], true, 'dirs')).message).toBe(
      'b holds shards of 3 of run r2 and a shards of 3 of run r1: not parts of one run',
    );
    expect(
      usage(() => joinShards([part('a', 1), part('b', 2, [0], 'r1', 4)], true, 'dirs')).message,
    ).toContain('not parts of one run');
    let missing: unknown;
    try {
      joinShards([part('a', 1)], false, 'dirs');
    } catch (e) {
      missing = e;
    }
    expect(missing).toBeInstanceOf(GwError);
    expect((missing as GwError).exitCode).toBe(1);
    expect((missing as GwError).message).toBe('shards 2/3, 3/3 of the run missing: nothing merged');
    expect(joinShards([part('a', 1)], true, 'dirs').missing).toEqual(['2/3', '3/3']);
  });
});
