// Shared helpers of `npm run bench`: timed child processes, peak RSS, a gw sim child, statistics, the report.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { get } from 'node:http';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';

/** Repository root. */
export const ROOT = resolve(import.meta.dirname, '..');
/** The real launcher, as users run it. */
export const GW = join(ROOT, 'bin', 'gw.js');
/** The simulator's default token (src/sim/config.ts). */
export const SIM_TOKEN = 'sk-sim-local-0000';
const TIME = '/usr/bin/time';

/** Builds dist/ when it is missing or older than a file under src/ (a fresh clone has none before `npm run build`). */
export function ensureBuilt() {
  const cli = join(ROOT, 'dist', 'cli.js');
  const newest = (dir) => {
    let t = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
    }
    return t;
  };
  if (existsSync(cli) && statSync(cli).mtimeMs >= newest(join(ROOT, 'src'))) return;
  process.stderr.write('bench: building dist/ …\n');
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (r.status === 0) return;
  if (!existsSync(cli)) throw new Error('build failed');
  process.stderr.write('bench: build failed; measuring the existing dist/\n');
}

/** A fresh temporary directory (removed by `cleanup`); `inMemory` prefers tmpfs (/dev/shm) when it has room. */
export function tempDir(name, { inMemory = false, needBytes = 0 } = {}) {
  let base = tmpdir();
  if (inMemory) {
    try {
      const s = statfsSync('/dev/shm');
      if (s.bavail * s.bsize > needBytes) base = '/dev/shm';
    } catch {
      // no tmpfs: the disk it is
    }
  }
  return mkdtempSync(join(base, `gw-bench-${name}-`));
}

/** Removes a path, ignoring errors. */
export function cleanup(path) {
  rmSync(path, { recursive: true, force: true });
}

/** The environment of a gw run: isolated config and journal, no colour. */
export function gwEnv(dir, extra = {}) {
  return {
    PATH: process.env.PATH,
    HOME: dir,
    NO_COLOR: '1',
    GW_CONFIG_DIR: join(dir, 'config'),
    GW_STATE_DIR: join(dir, 'state'),
    ...extra,
  };
}

/** True when /usr/bin/time (GNU) can report the peak RSS of a child. */
export const hasGnuTime = (() => {
  if (!existsSync(TIME)) return false;
  const r = spawnSync(TIME, ['-f', '%M', 'true'], { encoding: 'utf8' });
  return r.status === 0 && /^\d+\s*$/m.test(r.stderr);
})();

/**
 * Runs a command and measures its wall time (spawn to exit, ms) and, with `rss: true`, its peak resident set
 * (MB) from GNU time's %M, or else from sampling /proc/<pid>/status VmHWM. stdout goes to /dev/null unless
 * `capture` is set; stderr is always captured (for errors).
 */
export function run(cmd, args, { env, rss = false, capture = false, input, onStdout } = {}) {
  return new Promise((resolvePromise, reject) => {
    const useTime = rss && hasGnuTime;
    const file = useTime ? TIME : cmd;
    const argv = useTime ? ['-f', 'GWBENCH_RSS_KB %M', cmd, ...args] : args;
    const started = performance.now();
    const child = spawn(file, argv, {
      env: env ?? process.env,
      stdio: [input !== undefined ? 'pipe' : 'ignore', capture || onStdout ? 'pipe' : 'ignore', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let hwmKb = 0;
    if (capture || onStdout) {
      child.stdout.on('data', (c) => {
        if (onStdout) onStdout(c, performance.now());
        if (capture) stdout += c.toString('utf8');
      });
    }
    child.stderr.on('data', (c) => (stderr += c.toString('utf8')));
    let sampler;
    if (rss && !useTime) {
      sampler = setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          if (m) hwmKb = Math.max(hwmKb, Number(m[1]));
        } catch {
          // the process is gone
        }
      }, 10);
    }
    if (input !== undefined) child.stdin.end(input);
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (sampler) clearInterval(sampler);
      if (useTime) {
        const m = /GWBENCH_RSS_KB (\d+)\s*$/.exec(stderr);
        if (m) {
          hwmKb = Number(m[1]);
          stderr = stderr.slice(0, m.index);
        }
      }
      resolvePromise({ ms, code, stdout, stderr, rssMb: rss ? hwmKb / 1024 : undefined });
    });
  });
}

/** Runs and fails loudly on a non-zero exit. */
export async function runOk(cmd, args, opts) {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    throw new Error(`${[cmd, ...args].join(' ')} exited ${r.code}: ${r.stderr.trim().slice(0, 400)}`);
  }
  return r;
}

/** Runs node with the gw launcher. */
export function gw(args, opts) {
  return runOk(process.execPath, [GW, ...args], opts);
}

/**
 * Starts `gw sim` as its own process (so its work never counts against the measured client's process), on
 * 127.0.0.1 with ephemeral ports, with the given config (tokens, timings, videoBytes, streamChunks …).
 */
export async function startSim(config, name = 'sim') {
  const dir = tempDir(name);
  const file = join(dir, 'sim.json');
  writeFileSync(file, JSON.stringify({ ...config, host: '127.0.0.1', port: 0, cdnPort: 0 }));
  const child = spawn(process.execPath, [GW, '--json', 'sim', '--port', '0', '--config', file], {
    env: gwEnv(dir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c) => (err += c.toString('utf8')));
  const first = await new Promise((resolveLine, reject) => {
    let buf = '';
    child.stdout.on('data', (c) => {
      buf += c.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolveLine(buf.slice(0, nl));
    });
    child.on('exit', (code) => reject(new Error(`gw sim exited ${code}: ${err.trim()}`)));
  });
  const info = JSON.parse(first);
  return {
    baseUrl: info.baseUrl,
    cdnUrl: info.cdnUrl,
    token: SIM_TOKEN,
    async stop() {
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await done;
      cleanup(dir);
    },
  };
}

/** GET a JSON document over plain HTTP. */
export function getJson(url) {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(JSON.parse(text)));
    }).on('error', reject);
  });
}

/** The p-quantile (0..1) of a list, nearest rank. */
export function quantile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}

/**
 * A loopback HTTP server in its own Node process (its work never counts against the measured client's): `code`
 * listens on 127.0.0.1 port 0 and prints the port on its first line of stdout.
 */
export async function childServer(code) {
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolvePort, reject) => {
    child.stdout.once('data', (c) => resolvePort(Number(String(c).trim())));
    child.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await done;
    },
  };
}

/** Median, min and max of a list of numbers. */
export function stats(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1], n: s.length };
}

/**
 * Runs each variant `runs` times, interleaved (a, b, a, b …) so drift in machine load hits both alike, after
 * `warmup` discarded rounds. Each variant is `() => Promise<number>` returning one measurement.
 */
export async function interleave(variants, runs, warmup = 1) {
  return (await interleaveRaw(variants, runs, warmup)).map(stats);
}

/** interleave()'s measurements themselves: one array per variant, round i at index i. */
export async function interleaveRaw(variants, runs, warmup = 1) {
  const out = variants.map(() => []);
  for (let i = 0; i < warmup + runs; i++) {
    for (let v = 0; v < variants.length; v++) {
      const x = await variants[v]();
      if (i >= warmup) out[v].push(x);
    }
  }
  return out;
}

/** `12.3 ms [11.9–13.0]` */
export function fmt(s, unit, digits = 1) {
  const f = (x) => x.toFixed(digits);
  return `${f(s.median)} ${unit} [${f(s.min)}–${f(s.max)}]`;
}
