/**
 * A one-node Slurm cluster for a test file: munged, `slurmctld -D` and `slurmd -D` started as root in the
 * foreground with their own munge key, sockets, ports, spool and state in a temporary directory (nothing of the
 * machine's own Slurm or munge is used), and stopped by pid at the end (jobs cancelled first). The daemons listen on
 * 127.0.0.1 only, on ports picked free.
 *
 * Slurm missing is a failure, not a skip: CI installs slurm-wlm and munge (.ci/run). Only GW_SKIP_SLURM=1 skips.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, hostname } from 'node:os';
import { join } from 'node:path';
import { tempDir } from './tmp.js';

/** Set GW_SKIP_SLURM=1 to skip the Slurm tests on a machine without Slurm (never in CI). */
export const SKIP_SLURM = process.env.GW_SKIP_SLURM === '1';

const BINARIES = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'scontrol', 'scancel', 'sinfo', 'squeue'];

/** Job states after which a job runs no more. */
const ENDED = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
]);

/** A running cluster. */
export interface Slurm {
  dir: string;
  /** SLURM_CONF, for the client commands. */
  env: { SLURM_CONF: string };
  /** `sbatch --parsable …` from `cwd` with exactly `env` (plus SLURM_CONF): the job id. */
  sbatch(args: string[], o: { cwd: string; env: Record<string, string> }): Promise<string>;
  /** The state of each job record of `id` (an array job: one per task), from `scontrol show job`. */
  states(id: string): Promise<Map<string, string>>;
  /** Resolves once every record of each job has ended (polling scontrol); their states. */
  untilEnded(ids: string[], timeoutMs: number): Promise<Map<string, string>>;
  /** Runs a Slurm client command (scancel, …). */
  run(cmd: string, args: string[]): Promise<string>;
  stop(): Promise<void>;
}

function missing(): string[] {
  return BINARIES.filter((b) => spawnSync('sh', ['-c', `command -v ${b}`]).status !== 0);
}

/** A free loopback port (the daemons bind it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function slurmConf(dir: string, host: string, ports: [number, number]): string {
  return `ClusterName=gwtest
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
AuthInfo=socket=${join(dir, 'munge.sock')}
StateSaveLocation=${join(dir, 'state')}
SlurmdSpoolDir=${join(dir, 'spool')}
SlurmctldPidFile=${join(dir, 'slurmctld.pid')}
SlurmdPidFile=${join(dir, 'slurmd.pid')}
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmctldLogFile=${join(dir, 'slurmctld.log')}
SlurmdLogFile=${join(dir, 'slurmd.log')}
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${availableParallelism()} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
`;
}

function exec(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env, cwd, timeout: 30_000 }, (e, stdout, stderr) => {
      if (e) reject(new Error(`${cmd} ${args.join(' ')}: ${e.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Polls `f` every `everyMs` until it returns a value (not undefined), or fails after `timeoutMs`. */
export async function until<T>(
  what: string,
  f: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  everyMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Ends a daemon: SIGTERM, then SIGKILL if it is still there after a while. */
async function end(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(t);
}

/** Starts the cluster; throws (loudly) when Slurm or munge is not installed, or not as root. */
export async function startSlurm(): Promise<Slurm> {
  const absent = missing();
  if (absent.length > 0) {
    throw new Error(
      `Slurm is not installed (${absent.join(', ')} missing): apt-get install slurm-wlm munge (.ci/run does), or GW_SKIP_SLURM=1 to skip`,
    );
  }
  if (process.getuid?.() !== 0) throw new Error('the Slurm tests run the daemons as root: run them as root');
  const dir = tempDir('gw-slurm-');
  const host = hostname().split('.')[0] as string;
  const conf = join(dir, 'slurm.conf');
  writeFileSync(conf, slurmConf(dir, host, [await freePort(), await freePort()]));
  const key = join(dir, 'munge.key');
  const dd = spawnSync('dd', ['if=/dev/urandom', `of=${key}`, 'bs=1024', 'count=1', 'status=none']);
  if (dd.status !== 0) throw new Error(`dd could not make the munge key: ${dd.stderr.toString()}`);
  spawnSync('chmod', ['600', key]);
  const env = { PATH: process.env.PATH, SLURM_CONF: conf };
  const log = (name: string): number => openSync(join(dir, `${name}.out`), 'a');
  const daemons: ChildProcess[] = [];
  const start = (cmd: string, args: string[]): void => {
    const c = spawn(cmd, args, { env, stdio: ['ignore', log(cmd), log(cmd)] });
    c.on('error', () => undefined);
    daemons.push(c);
  };
  const stop = async (): Promise<void> => {
    // Jobs first (their processes belong to slurmd's steps), then the daemons, newest first.
    await exec('scancel', ['--full', '--signal=KILL', '--user=root'], env).catch(() => '');
    await exec('scancel', ['--user=root'], env).catch(() => '');
    await until('the jobs to end', async () => ((await queue(env)) === '' ? true : undefined), 15_000).catch(
      () => undefined,
    );
    for (const d of daemons.reverse()) await end(d);
  };
  try {
    start('munged', [
      '-F',
      '--force',
      `--key-file=${key}`,
      `--socket=${join(dir, 'munge.sock')}`,
      `--pid-file=${join(dir, 'munged.pid')}`,
      `--log-file=${join(dir, 'munged.log')}`,
      `--seed-file=${join(dir, 'munged.seed')}`,
    ]);
    await until('munged', () => (existsSync(join(dir, 'munge.sock')) ? true : undefined), 20_000);
    start('slurmctld', ['-D']);
    start('slurmd', ['-D']);
    await until(
      'the node to be idle',
      async () =>
        (await exec('sinfo', ['-h', '-o', '%T'], env).catch(() => '')).trim() === 'idle' ? true : undefined,
      60_000,
      200,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return cluster(dir, env, stop);
}

function queue(env: NodeJS.ProcessEnv): Promise<string> {
  return exec('squeue', ['-h', '-o', '%i'], env).then((s) => s.trim());
}

function cluster(
  dir: string,
  env: { PATH: string | undefined; SLURM_CONF: string },
  stop: () => Promise<void>,
): Slurm {
  const states = async (id: string): Promise<Map<string, string>> => {
    const out = await exec('scontrol', ['-o', 'show', 'job', id], env);
    const m = new Map<string, string>();
    for (const line of out.split('\n')) {
      const jobId = /\bJobId=(\d+)/.exec(line)?.[1];
      const state = /\bJobState=(\S+)/.exec(line)?.[1];
      if (jobId !== undefined && state !== undefined) m.set(jobId, state);
    }
    return m;
  };
  return {
    dir,
    env: { SLURM_CONF: env.SLURM_CONF },
    sbatch: async (args, o) => {
      const out = await exec(
        'sbatch',
        ['--parsable', ...args],
        { ...o.env, SLURM_CONF: env.SLURM_CONF },
        o.cwd,
      );
      return out.trim().split(';')[0] as string;
    },
    states,
    untilEnded: (ids, timeoutMs) =>
      until(
        `jobs ${ids.join(', ')} to end`,
        async () => {
          const all = new Map<string, string>();
          for (const id of ids) for (const [k, v] of await states(id)) all.set(k, v);
          return [...all.values()].every((s) => ENDED.has(s)) ? all : undefined;
        },
        timeoutMs,
        200,
      ),
    run: (cmd, args) => exec(cmd, args, env),
    stop,
  };
}
