import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { fastClock, type RunClock } from './clock.js';
import { tempDir } from './tmp.js';

/** What a gw run produced. */
export interface GwResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Options of a run. */
export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** Standard input: its text, or (in-process only) a stream of one's own. */
  stdin?: string | Readable;
  /** Pretend stdout/stderr/stdin are terminals (in-process only). */
  tty?: boolean;
  signal?: AbortSignal;
  cwd?: string;
  /**
   * The clock of waits (in-process only): default a fastClock(), so polls run at their schedule in virtual time;
   * 'real' for the real one.
   */
  clock?: RunClock | 'real';
}

/** A fresh, isolated config + state directory pair. */
export function isolatedDirs(): { GW_CONFIG_DIR: string; GW_STATE_DIR: string; HOME: string } {
  const dir = tempDir('gw-test-');
  return { GW_CONFIG_DIR: join(dir, 'config'), GW_STATE_DIR: join(dir, 'state'), HOME: dir };
}

/** Runs gw in-process through main(), with captured streams. */
export async function runGw(argv: string[], o: RunOptions = {}): Promise<GwResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const stdin =
    o.stdin instanceof Readable
      ? o.stdin
      : Readable.from(o.stdin !== undefined ? [Buffer.from(o.stdin)] : []);
  if (o.tty) {
    // Enough of tty.WriteStream for ora and the progress bar to draw.
    const ttyLike = {
      isTTY: true,
      columns: 100,
      rows: 40,
      cursorTo: (_x: number, _y?: number | (() => void), cb?: () => void) => (cb?.(), true),
      moveCursor: (_dx: number, _dy: number, cb?: () => void) => (cb?.(), true),
      clearLine: (_dir: number, cb?: () => void) => (cb?.(), true),
      clearScreenDown: (cb?: () => void) => (cb?.(), true),
      getWindowSize: () => [100, 40],
      hasColors: () => false,
      getColorDepth: () => 1,
    };
    Object.assign(stdout, ttyLike);
    Object.assign(stderr, ttyLike);
    Object.assign(stdin, { isTTY: true, setRawMode: () => stdin });
  }
  const env = { NO_COLOR: '1', ...isolatedDirs(), ...o.env };
  const restore = enterCwd(o.cwd);
  let exitCode: number;
  try {
    exitCode = await main(argv, {
      stdout,
      stderr,
      stdin,
      env,
      signal: o.signal ?? new AbortController().signal,
      ...(o.clock === 'real' ? {} : { clock: o.clock ?? fastClock() }),
    });
  } finally {
    restore();
  }
  // Let the streams deliver what was written last before reading the captures.
  await new Promise<void>((r) => setImmediate(r));
  return assertNoStackTrace({ stdout: out, stderr: err, exitCode });
}

/** The directory in-process runs share (relative paths resolve against it), with how many runs use it. */
let cwdInUse: { dir: string; previous: string; runs: number } | undefined;

/**
 * Makes `dir` the working directory of this (forked) test worker for one in-process run, as a spawned gw would
 * have it; returns the function restoring the previous one. Concurrent runs may share a directory, not mix them.
 */
export function enterCwd(dir: string | undefined): () => void {
  if (dir === undefined) return () => {};
  if (cwdInUse !== undefined && cwdInUse.dir !== dir) {
    throw new Error(`runGw: concurrent runs in different directories (${cwdInUse.dir}, ${dir})`);
  }
  if (cwdInUse === undefined) {
    cwdInUse = { dir, previous: process.cwd(), runs: 0 };
    process.chdir(dir);
  }
  const use = cwdInUse;
  use.runs++;
  return () => {
    if (--use.runs === 0) {
      cwdInUse = undefined;
      process.chdir(use.previous);
    }
  };
}

/** Path of the real launcher. */
export const GW_BIN = resolve(import.meta.dirname, '../../bin/gw.js');

/**
 * The single executable the tests may drive (`GW_EXE`, set by .ci/run right after `npm run build:exe`); unset, the
 * tests of the executable are skipped, so a stale dist/exe/gw never stands in for the current sources.
 */
export const GW_EXE = process.env.GW_EXE ? resolve(process.env.GW_EXE) : undefined;

/** Spawns the real `bin/gw` (no TTY, NO_COLOR=1), or the single executable `exe`. */
export function spawnGw(
  argv: string[],
  o: RunOptions & { onSpawn?: (child: ChildProcess) => void; exe?: string } = {},
): Promise<GwResult> {
  return new Promise((resolvePromise, reject) => {
    const [file, args] = o.exe !== undefined ? [o.exe, argv] : [process.execPath, [GW_BIN, ...argv]];
    const child = spawn(file, args, {
      env: { PATH: process.env.PATH, NO_COLOR: '1', ...isolatedDirs(), ...o.env },
      cwd: o.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    collect(child).then(resolvePromise, reject);
    if (o.stdin instanceof Readable) o.stdin.pipe(child.stdin);
    else if (o.stdin !== undefined) child.stdin.end(o.stdin);
    else child.stdin.end();
    o.onSpawn?.(child);
  });
}

/**
 * Samples a process's peak resident memory (VmHWM, Linux) every 20 ms until the returned function is called; that
 * function stops sampling and returns the peak in MB (0 if nothing was read).
 */
export function watchPeakRss(pid: number): () => number {
  let peakKb = 0;
  const timer = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // exited
    }
  }, 20);
  return () => {
    clearInterval(timer);
    return peakKb / 1024;
  };
}

/** A Node stack frame or an unhandled-error report: never acceptable in what gw prints. */
export const STACK_TRACE = /^\s{4}at .+\(?.*:\d+:\d+\)?$|Unhandled|node:internal/m;

/**
 * Throws when a run printed a stack trace. Every spawned run (spawnGw, runBash) passes through it, so no e2e test
 * can pass while gw shows a Node stack frame for an ordinary failure.
 */
export function assertNoStackTrace(r: GwResult, what = 'gw'): GwResult {
  const hit = STACK_TRACE.exec(r.stderr) ?? STACK_TRACE.exec(r.stdout);
  if (hit) {
    throw new Error(`${what} printed a stack trace (${JSON.stringify(hit[0])}):\n${r.stderr.slice(-3000)}`);
  }
  return r;
}

/** Collects a child's stdout and stderr and resolves with its exit code (130 when killed by SIGINT). */
function collect(child: ChildProcess): Promise<GwResult> {
  return collectRaw(child).then((r) => assertNoStackTrace(r));
}

function collectRaw(child: ChildProcess): Promise<GwResult> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code, sig) =>
      resolve({
        stdout: out,
        stderr: err,
        exitCode: code ?? (sig === 'SIGINT' ? 130 : sig === 'SIGTERM' ? 143 : 1),
      }),
    );
  });
}

/** A fresh directory holding a `gw` wrapper around the real launcher, so shell scripts can call plain `gw`. */
export function gwBinDir(): string {
  const dir = tempDir('gw-bin-');
  const wrapper = join(dir, 'gw');
  writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${GW_BIN}" "$@"\n`);
  chmodSync(wrapper, 0o755);
  return dir;
}

/** Runs a bash script with `gw` on PATH (no TTY, NO_COLOR=1); `strict` adds `set -euo pipefail`. */
export function runBash(
  script: string,
  o: { env?: Record<string, string | undefined>; cwd?: string; strict?: boolean } = {},
): Promise<GwResult> {
  const child = spawn('bash', [...(o.strict ? ['-euo', 'pipefail'] : []), '-c', script], {
    cwd: o.cwd,
    env: { PATH: `${gwBinDir()}:${process.env.PATH ?? ''}`, NO_COLOR: '1', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}
