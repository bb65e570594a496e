/**
 * A real Prometheus for tests (Debian's prometheus package; .ci/run installs it): started with a config and its
 * TSDB in a temporary directory, on a free loopback port (it is given port 0 and its log says which one it took),
 * stopped by its pid after the test. Waits poll its HTTP API with a generous deadline, never a fixed sleep.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { tempDir } from './tmp.js';

/** Whether prometheus and promtool are installed (the tests say why they skip otherwise). */
export function prometheusAvailable(): boolean {
  return ['prometheus', 'promtool'].every((b) => spawnSync(b, ['--version']).status === 0);
}

export interface Prometheus {
  url: string;
  child: ChildProcess;
  /** An instant query's result vector (`[{metric, value: [t, "v"]}]`). */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
}

const running: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map(stop));
});

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    process.kill(child.pid as number, 'SIGTERM');
  });
}

/** Polls `check` until it returns a value (not undefined), or fails after `ms` naming `what`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not within ${ms / 1000}s${last ? ` (${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Starts Prometheus with `config` (YAML) and extra flags (e.g. --web.enable-remote-write-receiver); resolves once
 * it answers ready.
 */
export async function startPrometheus(config: string, flags: string[] = []): Promise<Prometheus> {
  const dir = tempDir('gw-prometheus-');
  const file = join(dir, 'prometheus.yml');
  writeFileSync(file, config);
  const child = spawn(
    'prometheus',
    [
      `--config.file=${file}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      '--web.listen-address=127.0.0.1:0',
      ...flags,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  running.push(child);
  let log = '';
  child.stderr?.on('data', (b: Buffer) => (log += b.toString('utf8')));
  const address = await until('prometheus listening', async () => {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${log.slice(-2000)}`);
    return /msg="Listening on" address=(127\.0\.0\.1:\d+)/.exec(log)?.[1];
  });
  const url = `http://${address}`;
  await until('prometheus ready', async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined));
  return {
    url,
    child,
    query: async (promql) => {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { status: string; data: { result: [] }; error?: string };
      if (body.status !== 'success') throw new Error(`${promql}: ${body.error ?? res.status}`);
      return body.data.result;
    },
  };
}

/** The TCP ports a process listens on (Linux: its socket inodes in /proc/net/tcp{,6}). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1] as string);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // Field 3 is the state (0A: LISTEN), field 9 the inode.
      if (f[3] === '0A' && inodes.has(f[9] as string))
        ports.push(parseInt((f[1] as string).split(':')[1] as string, 16));
    }
  }
  return ports;
}

/** Runs promtool with `args` (and `input` on stdin); its exit code and output. */
export function promtool(args: string[], input?: string): { status: number; output: string } {
  const r = spawnSync('promtool', args, { input, encoding: 'utf8' });
  return { status: r.status ?? 1, output: `${r.stdout}${r.stderr}` };
}
