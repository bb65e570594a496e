/**
 * Shards: which part of one run this copy of gw is (`--shard k/n`, `--shard auto`, `GW_SHARD`), read from the
 * scheduler that started it, with no coordinator: the scheduler gives each copy an index, gw does the rest. The
 * one resolver of `gw batch run`, `gw load` and `gw doctor`, the run identity every shard output records, and the
 * checks every merge makes of the shards it is given (one run, each shard once, the missing ones named).
 */
import { createHash } from 'node:crypto';
import { GwError, UsageError } from './errors.js';

/** Shard k (1-based) of n. */
export interface Shard {
  k: number;
  n: number;
}

/** A shard with the scheduler's own index of it, when a scheduler gave it. */
export interface IndexedShard extends Shard {
  /** The scheduler's own index of this copy (`SLURM_ARRAY_TASK_ID=2`), recorded with a batch's shard. */
  index?: string | undefined;
  /**
   * The scheduler ran this index alone, so its count says nothing of the run's: Slurm gives an index resubmitted
   * by itself (`sbatch --array=2`) an array of one. A batch directory that holds this index's shard resumes it.
   */
  lone?: boolean | undefined;
}

/** A shard and where it came from. */
export interface ResolvedShard extends IndexedShard {
  /** `--shard`, `GW_SHARD`, or the scheduler and its variables (`Slurm array (SLURM_ARRAY_TASK_ID=2, …)`). */
  source: string;
}

/** Most shards of one run. */
export const MAX_SHARDS = 1_000_000;

/** `k/n` as gw prints a shard everywhere (k from 1). */
export function shardText(s: Shard): string {
  return `${s.k}/${s.n}`;
}

/** Parses `k/n` (1 ≤ k ≤ n); a UsageError naming `field` otherwise. */
export function parseShard(text: string, field = '--shard'): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const k = Number(m?.[1]);
  const n = Number(m?.[2]);
  if (!m || n < 1 || n > MAX_SHARDS || k < 1 || k > n) {
    throw new UsageError(
      `${field}: "${text}" must be k/n with 1 ≤ k ≤ n ≤ ${MAX_SHARDS}, e.g. 2/3${field === '--shard' ? ', or auto' : ''}`,
      { field },
    );
  }
  return { k, n };
}

/** `--shard auto|k/n`: the flag's value before the environment is read. */
export function parseShardFlag(text: string): Shard | 'auto' {
  return text.trim() === 'auto' ? 'auto' : parseShard(text);
}

/** A scheduler's variables: its index, its count, and the index of its first copy (a number, or a variable). */
interface Scheduler {
  name: string;
  index: string;
  count: string;
  first: number | string;
  /** A count of 1 may be an index the scheduler ran alone (see ResolvedShard.lone). */
  loneAtOne?: boolean;
}

/**
 * The schedulers `--shard auto` reads, in order (the first whose variables are set wins, after `GW_SHARD`).
 * Kubernetes gives an Indexed Job's pods no count, so the manifest passes its `completions` as `GW_SHARDS`.
 */
export const SCHEDULERS: readonly Scheduler[] = [
  {
    name: 'Slurm array',
    index: 'SLURM_ARRAY_TASK_ID',
    count: 'SLURM_ARRAY_TASK_COUNT',
    first: 'SLURM_ARRAY_TASK_MIN',
    loneAtOne: true,
  },
  { name: 'Kubernetes Indexed Job', index: 'JOB_COMPLETION_INDEX', count: 'GW_SHARDS', first: 0 },
  { name: 'GitLab parallel', index: 'CI_NODE_INDEX', count: 'CI_NODE_TOTAL', first: 1 },
  {
    name: 'AWS Batch array',
    index: 'AWS_BATCH_JOB_ARRAY_INDEX',
    count: 'AWS_BATCH_JOB_ARRAY_SIZE',
    first: 0,
  },
];

type Env = Readonly<Record<string, string | undefined>>;

const set = (env: Env, name: string): boolean => (env[name] ?? '').trim() !== '';

/** A variable's value as a whole number, or exit 2 naming it. */
function whole(env: Env, name: string): number {
  const text = (env[name] ?? '').trim();
  if (!/^\d{1,9}$/.test(text)) {
    throw new UsageError(`--shard auto: ${name}="${text}" is not a whole number`, { field: '--shard' });
  }
  return Number(text);
}

/**
 * The shard a scheduler's variables give; undefined when its index is not set (a count alone names no copy: GitLab
 * sets CI_NODE_TOTAL=1 in every job); exit 2 when an index comes without its count or falls outside it.
 */
function fromScheduler(env: Env, s: Scheduler): ResolvedShard | undefined {
  const names = [s.index, s.count, ...(typeof s.first === 'string' ? [s.first] : [])];
  const given = names.filter((v) => set(env, v));
  if (!set(env, s.index)) return undefined;
  if (given.length < names.length) {
    const missing = names.filter((v) => !given.includes(v));
    throw new UsageError(
      `--shard auto: ${s.name}: ${given.join(', ')} set without ${missing.join(', ')}: an index needs its count`,
      {
        field: '--shard',
        hint:
          s.count === 'GW_SHARDS'
            ? "Kubernetes gives no count: set GW_SHARDS to the Job's completions in the pod's env"
            : 'set the missing variables, or give GW_SHARD=k/n',
      },
    );
  }
  const index = whole(env, s.index);
  const n = whole(env, s.count);
  const first = typeof s.first === 'string' ? whole(env, s.first) : s.first;
  const k = index - first + 1;
  const vars = names.map((v) => `${v}=${(env[v] ?? '').trim()}`).join(', ');
  if (n < 1 || n > MAX_SHARDS || k < 1 || k > n) {
    throw new UsageError(
      `--shard auto: ${s.name}: ${vars} is no shard of 1 to ${n} (index ${k} counting from 1; an array with a step or gaps?)`,
      { field: '--shard', hint: 'give the scheduler a contiguous range of indexes, or give GW_SHARD=k/n' },
    );
  }
  return {
    k,
    n,
    source: `${s.name} (${vars})`,
    index: `${s.index}=${index}`,
    ...(s.loneAtOne === true && n === 1 ? { lone: true } : {}),
  };
}

/** `--shard auto`: `GW_SHARD` (when it is k/n), then the schedulers in order; undefined when nothing is set. */
export function autoShard(env: Env): ResolvedShard | undefined {
  const own = (env.GW_SHARD ?? '').trim();
  if (own !== '' && own !== 'auto') return { ...parseShard(own, 'GW_SHARD'), source: 'GW_SHARD' };
  for (const s of SCHEDULERS) {
    const r = fromScheduler(env, s);
    if (r !== undefined) return r;
  }
  return undefined;
}

/**
 * The shard of this run: `--shard k/n` as given; `--shard auto` from the environment (exit 2 when nothing there
 * names one); without the flag, `GW_SHARD` when it is set (`k/n`, or `auto`), else none.
 */
export function resolveShard(flag: Shard | 'auto' | undefined, env: Env): ResolvedShard | undefined {
  if (flag !== undefined && flag !== 'auto') return { ...flag, source: '--shard' };
  const own = (env.GW_SHARD ?? '').trim();
  if (flag === undefined && own === '') return undefined;
  const r = autoShard(env);
  if (r !== undefined) return r;
  const names = ['GW_SHARD', ...SCHEDULERS.map((s) => s.index)].join(', ');
  throw new UsageError(`--shard auto: no scheduler variables are set (looked for ${names})`, {
    field: '--shard',
    hint: 'run it as a task of an array or indexed job, or give --shard k/n (or GW_SHARD=k/n)',
  });
}

/**
 * The identity of a run: the first 16 hex digits of SHA-256 over a digest of its input and its shard count. The
 * shards of one run share it; outputs of different inputs (or of different splits of one input) never do.
 */
export function runId(inputDigest: string, n: number): string {
  return createHash('sha256').update(`gw-run\n${inputDigest}\n${n}`).digest('hex').slice(0, 16);
}

/** One output given to a merge: what it is (a path), the run it names, and the shards it holds. */
export interface ShardPart {
  where: string;
  run: string | undefined;
  n: number;
  ks: readonly number[];
  /** Among outputs of the same shards (a scheduler ran an index twice), the highest score is kept. */
  score: readonly number[];
}

/** What a merge takes: the outputs kept, the shards merged and missing, the outputs left out as repeats. */
export interface ShardSet<P extends ShardPart> {
  run: string | undefined;
  n: number;
  kept: P[];
  merged: string[];
  missing: string[];
  /** Outputs of shards another output gave already (the better one was kept). */
  skipped: Array<{ shard: string; where: string }>;
}

function better(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (b[i] ?? 0) - (a[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Checks outputs are shards of one run (the same run and n: exit 2 otherwise, naming both), takes each shard
 * once (of two outputs of the same shard, the one with the higher score), and names the missing shards: exit 1
 * (`shards_missing`) unless `allowMissing`. `field` names the argument in errors.
 */
export function joinShards<P extends ShardPart>(
  parts: readonly P[],
  allowMissing: boolean,
  field: string,
): ShardSet<P> {
  const first = parts[0];
  if (first === undefined) throw new UsageError(`${field}: nothing to merge`, { field });
  for (const p of parts) {
    if (p.n !== first.n || (p.run !== undefined && first.run !== undefined && p.run !== first.run)) {
      const of = (x: P): string => `shards of ${x.n}${x.run !== undefined ? ` of run ${x.run}` : ''}`;
      throw new UsageError(
        `${p.where} holds ${of(p)} and ${first.where} ${of(first)}: not parts of one run`,
        { field, hint: 'merge the outputs of one run (the same input and shard count) only' },
      );
    }
  }
  const owner = new Map<number, P>();
  const kept: P[] = [];
  const skipped: ShardSet<P>['skipped'] = [];
  for (const p of [...parts].sort((a, b) => better(a.score, b.score))) {
    const taken = p.ks.filter((k) => owner.has(k));
    if (taken.length === p.ks.length) {
      for (const k of p.ks) skipped.push({ shard: `${k}/${p.n}`, where: p.where });
      continue;
    }
    if (taken.length > 0) {
      const k = taken[0] as number;
      throw new UsageError(
        `shard ${k}/${p.n} is in both ${owner.get(k)?.where} and ${p.where}, each with other shards: give each shard once`,
        { field },
      );
    }
    for (const k of p.ks) owner.set(k, p);
    kept.push(p);
  }
  const all = Array.from({ length: first.n }, (_, i) => i + 1);
  const merged = all.filter((k) => owner.has(k)).map((k) => `${k}/${first.n}`);
  const missing = all.filter((k) => !owner.has(k)).map((k) => `${k}/${first.n}`);
  if (missing.length > 0 && !allowMissing) {
    throw new GwError(
      `shard${missing.length === 1 ? '' : 's'} ${missing.join(', ')} of the run missing: nothing merged`,
      {
        code: 'shards_missing',
        hint: 'give every shard, or pass --allow-missing to merge the ones there are',
      },
    );
  }
  return {
    run: parts.find((p) => p.run !== undefined)?.run,
    n: first.n,
    kept: parts.filter((p) => kept.includes(p)),
    merged,
    missing,
    skipped,
  };
}
