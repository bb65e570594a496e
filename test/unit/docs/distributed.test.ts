/**
 * docs/distributed.md holds only what the tests exercise: every manifest parses (YAML with the `yaml` package,
 * JSON), every gw command in it is one the Slurm tests run (the commands of its job scripts, which
 * test/e2e/slurm.test.ts submits as they are), the sbatch submissions are the ones that test makes, and each
 * scheduler's variables, as that scheduler would set them for each copy, give the resolver every shard once.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { autoShard, SCHEDULERS } from '../../../src/core/shard.js';
import { docBlocks, docCommands, docFile, gwCommands, SBATCH, shellLine } from '../../helpers/distributed.js';
import { tempDir } from '../../helpers/tmp.js';

/** A parsed manifest, poked at by path as a JSON.parse result is. */
type Doc = ReturnType<typeof JSON.parse>;

function yamlFile(file: string): Doc[] {
  const docs = parseAllDocuments(docFile(file));
  for (const d of docs) expect(d.errors, file).toEqual([]);
  return docs.map((d) => d.toJS() as Record<string, Doc>);
}

/** The gw commands the Slurm tests run: those of the job scripts and of the load fan-in. */
const TESTED = new Set([
  ...['shard.sbatch', 'merge.sbatch', 'load.sbatch'].flatMap((f) => gwCommands(docFile(f))),
  ...gwCommands(SBATCH.loadFanIn('1').at(-1) as string),
]);

/** Every string of a parsed document (a container's command, a step's run, a script line). */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (v === null || typeof v !== 'object') return [];
  return Object.values(v as Record<string, unknown>).flatMap(strings);
}

/** Each copy's shard, from the variables its scheduler sets: shards 1..n, each once. */
function shardsOf(envs: Array<Record<string, string>>): string[] {
  return envs.map((env) => {
    const s = autoShard(env);
    return `${s?.k}/${s?.n}`;
  });
}

const upTo = (n: number): string[] => Array.from({ length: n }, (_, i) => `${i + 1}/${n}`);

describe('docs/distributed.md', () => {
  it('every block parses; every gw command in it is one the Slurm tests run', () => {
    const blocks = docBlocks();
    expect(blocks.length).toBeGreaterThan(10);
    const commands: string[] = [];
    for (const b of blocks) {
      const texts =
        b.lang === 'yaml'
          ? yamlFile(b.file as string).flatMap(strings)
          : b.lang === 'json'
            ? strings(JSON.parse(b.text))
            : [b.text];
      for (const t of texts) commands.push(...gwCommands(t));
    }
    // The overview, the Slurm scripts, Kubernetes, GitHub Actions, GitLab and AWS Batch.
    expect(commands.length).toBe(17);
    for (const c of commands) expect(TESTED, c).toContain(c);
    expect([...TESTED]).toEqual([
      'gw batch run jobs.jsonl --out out/shard-<v> --shard auto',
      'gw batch merge out/shard-* --out merged',
      'gw batch status merged',
      'gw load -m chat-3.7-plus --rate <v> --duration <v> --shard auto --start-at <v> --out load/run-<v>.json --csv load/run-<v>.csv',
      'gw load merge load/run-*.json --out load/all.json',
    ]);
  });

  it('the sbatch submissions are the ones the Slurm tests make', () => {
    const lines = docCommands()
      .flatMap((b) => b.split('\n'))
      .filter((l) => /\bsbatch\b/.test(l))
      .map((l) =>
        l
          .replace(/^\w+=\$\((.*)\)$/, '$1')
          .replace(' --parsable', '')
          .replace(/\$\(\( \$\(date \+%s%3N\) \+ \d+ \)\)/, '<at>')
          .replace(/RATE=\d+/, 'RATE=<v>')
          .replace(/DURATION=\w+/, 'DURATION=<v>'),
      );
    expect(lines).toEqual([
      `sbatch ${shellLine(SBATCH.shards())}`,
      `sbatch ${shellLine(SBATCH.fanIn(['$jid']))}`,
      `sbatch ${shellLine(SBATCH.again(2))}`,
      `sbatch ${shellLine(SBATCH.fanIn(['$jid', '$rid']))}`,
      `sbatch ${shellLine(SBATCH.load('<v>', '<v>', '<at>'))}`,
      `sbatch ${shellLine(SBATCH.loadFanIn('$jid'))}`,
    ]);
  });

  it('the variables of each scheduler give the resolver every shard once, in its order', () => {
    // The table names the resolver's variables in its order.
    const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'distributed.md'), 'utf8');
    const table = [...doc.matchAll(/^\| [^|]+\| `([A-Z_]+)[=`]/gm)].map((m) => m[1]);
    expect(table).toEqual(['GW_SHARD', ...SCHEDULERS.map((s) => s.index)]);

    // Slurm: #SBATCH --array=<min>-<max>.
    for (const f of ['shard.sbatch', 'load.sbatch']) {
      const [min, max] = (/#SBATCH --array=(\d+)-(\d+)$/m.exec(docFile(f)) ?? []).slice(1).map(Number) as [
        number,
        number,
      ];
      const n = max - min + 1;
      const envs = Array.from({ length: n }, (_, i) => ({
        SLURM_ARRAY_TASK_ID: String(min + i),
        SLURM_ARRAY_TASK_COUNT: String(n),
        SLURM_ARRAY_TASK_MIN: String(min),
      }));
      expect(shardsOf(envs), f).toEqual(upTo(n));
    }

    // Kubernetes: completions, and GW_SHARDS in the pod's env.
    const job: Doc = yamlFile('gw-batch.yaml').find((d) => d.kind === 'Job');
    expect(job.spec.completionMode).toBe('Indexed');
    expect(job.spec.backoffLimitPerIndex).toBeGreaterThan(0);
    const n = job.spec.completions as number;
    const container = job.spec.template.spec.containers[0];
    const podEnv = Object.fromEntries(
      (container.env as Array<{ name: string; value?: string }>)
        .filter((e) => e.value !== undefined)
        .map((e) => [e.name, e.value]),
    ) as Record<string, string>;
    expect(podEnv.GW_SHARDS).toBe(String(n));
    expect(
      shardsOf(Array.from({ length: n }, (_, i) => ({ ...podEnv, JOB_COMPLETION_INDEX: String(i) }))),
    ).toEqual(upTo(n));
    const merge = yamlFile('gw-merge.yaml')[0];
    expect(merge.spec.template.spec.volumes).toEqual(job.spec.template.spec.volumes);

    // GitHub Actions: the step that writes GW_SHARD, run by bash for each job-index of the matrix.
    const wf = yamlFile('.github/workflows/gw-batch.yml')[0];
    const total = (wf.jobs.shard.strategy.matrix.part as unknown[]).length;
    const step = (wf.jobs.shard.steps as Array<{ run?: string }>).find((s) => s.run?.includes('GW_SHARD'))
      ?.run as string;
    const githubEnv = join(tempDir('gw-gha-'), 'env');
    const envs = Array.from({ length: total }, (_, i) => {
      const script = step
        .replace('${{ strategy.job-index }}', String(i))
        .replace('${{ strategy.job-total }}', String(total));
      const r = spawnSync('bash', ['-c', `: > "$GITHUB_ENV"; ${script}`], { env: { GITHUB_ENV: githubEnv } });
      expect(r.status, r.stderr.toString()).toBe(0);
      return Object.fromEntries(
        readFileSync(githubEnv, 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split('=', 2)),
      ) as Record<string, string>;
    });
    expect(shardsOf(envs)).toEqual(upTo(total));
    const download = (wf.jobs.merge.steps as Array<{ uses?: string; with?: Doc }>).find((s) =>
      s.uses?.startsWith('actions/download-artifact'),
    );
    expect(download?.with).toMatchObject({ 'merge-multiple': true });

    // GitLab: parallel: n gives CI_NODE_INDEX 1..n and CI_NODE_TOTAL n.
    const ci = yamlFile('.gitlab-ci.yml')[0];
    const p = ci.shard.parallel as number;
    expect(
      shardsOf(
        Array.from({ length: p }, (_, i) => ({ CI_NODE_INDEX: String(i + 1), CI_NODE_TOTAL: String(p) })),
      ),
    ).toEqual(upTo(p));

    // AWS Batch: --array-properties size=n gives indexes 0..n-1 and the size.
    const size = Number(/--array-properties size=(\d+)/.exec(docCommands('sh').join('\n'))?.[1]);
    expect(size).toBeGreaterThan(1);
    expect(
      shardsOf(
        Array.from({ length: size }, (_, i) => ({
          AWS_BATCH_JOB_ARRAY_INDEX: String(i),
          AWS_BATCH_JOB_ARRAY_SIZE: String(size),
        })),
      ),
    ).toEqual(upTo(size));
  });
});
