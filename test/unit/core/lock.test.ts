import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockPart, lockPath } from '../../../src/core/download-part.js';
import { GwError, InterruptedError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/tmp.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** A process that runs until killed, and its pid. */
async function liveProcess(): Promise<ChildProcess & { pid: number }> {
  const c = spawn('sleep', ['600'], { stdio: 'ignore' });
  children.push(c);
  await new Promise<void>((r) => c.once('spawn', () => r()));
  return c as ChildProcess & { pid: number };
}

/** Polls a condition of the process table (no fixed wait decides anything). */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the process never reached the expected state');
}

function procState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return '';
  }
}

/**
 * The pid of a zombie: a child of `sh` killed after its parent became `sleep` (exec), which never reaps it. It
 * still answers kill(pid, 0), as a killed gw whose parent has not waited for it does.
 */
async function zombiePid(): Promise<number> {
  const c = spawn('sh', ['-c', 'sleep 600 & echo $!; exec sleep 600'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(c);
  const pid = await new Promise<number>((r) =>
    c.stdout?.once('data', (b: Buffer) => r(Number(String(b).trim()))),
  );
  // Killed only once its parent runs `sleep`: a shell would reap it.
  await until(() => readFileSync(`/proc/${c.pid}/comm`, 'utf8').trim() === 'sleep');
  process.kill(pid, 'SIGKILL');
  await until(() => procState(pid) === 'Z');
  return pid;
}

describe('the lock helper (downloads and batch directories)', () => {
  it('takes over a lock whose owner is a zombie (it still answers kill(pid, 0))', async () => {
    const pid = await zombiePid();
    expect(() => process.kill(pid, 0)).not.toThrow();
    const part = join(tempDir('gw-lock-'), 'v.mp4.part');
    writeFileSync(lockPath(part), `${pid} ${hostname()}\n`);
    const release = lockPart(part, 'v.mp4');
    expect(readFileSync(lockPath(part), 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    release();
    expect(existsSync(lockPath(part))).toBe(false);
  });

  it('refuses a lock of a live process, naming its pid; takes it over once that process is gone', async () => {
    const owner = await liveProcess();
    const part = join(tempDir('gw-lock-'), 'v.mp4.part');
    writeFileSync(lockPath(part), `${owner.pid} ${hostname()}\n`);
    const e = (() => {
      try {
        lockPart(part, 'v.mp4');
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(GwError);
    expect((e as GwError).code).toBe('download_locked');
    expect((e as GwError).message).toBe(`another gw process (pid ${owner.pid}) is downloading to v.mp4`);
    const gone = new Promise((r) => owner.once('exit', r));
    owner.kill('SIGKILL');
    await gone;
    lockPart(part, 'v.mp4')();
  });

  it('a pid reused by another process (another start time) is not the owner', async () => {
    const { tryLock } = await import('../../../src/core/lock.js');
    const owner = await liveProcess();
    const path = join(tempDir('gw-lock-'), 'x.lock');
    writeFileSync(path, `${owner.pid} ${hostname()} start=1\n`);
    const a = tryLock(path);
    expect('release' in a).toBe(true);
    // Its own start time: held.
    const path2 = join(tempDir('gw-lock-'), 'y.lock');
    const stat = readFileSync(`/proc/${owner.pid}/stat`, 'utf8');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    writeFileSync(path2, `${owner.pid} ${hostname()} start=${start}\n`);
    expect(tryLock(path2)).toEqual({ held: { pid: owner.pid, host: hostname(), start: Number(start) } });
    // Another host's lock is never judged from here.
    const path3 = join(tempDir('gw-lock-'), 'z.lock');
    writeFileSync(path3, `999999999 another-host\n`);
    expect(tryLock(path3)).toEqual({ held: { pid: 999999999, host: 'another-host' } });
  });

  it('waits for a live lock when asked, and a wait ends on abort', async () => {
    const { lock } = await import('../../../src/core/lock.js');
    const owner = await liveProcess();
    const path = join(tempDir('gw-lock-'), 'w.lock');
    writeFileSync(path, `${owner.pid} ${hostname()}\n`);
    const busy = (): Error => new GwError('busy', { code: 'busy' });
    await expect(lock(path, { busy })).rejects.toMatchObject({ code: 'busy' });
    let waited: unknown;
    const taken = lock(path, { busy, wait: true, pollMs: 10, onWait: (o) => (waited = o) });
    await expect.poll(() => waited, { interval: 5 }).toMatchObject({ pid: owner.pid });
    owner.kill('SIGKILL');
    const release = await taken;
    expect(readFileSync(path, 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    const ac = new AbortController();
    const second = lock(path, { busy, wait: true, pollMs: 10, signal: ac.signal });
    ac.abort();
    await expect(second).rejects.toBeInstanceOf(InterruptedError);
    release();
  });
});
