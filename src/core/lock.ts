/**
 * The one lock helper of gw: an exclusive lock file (`O_EXCL` create) holding the owner's pid, host and, where
 * /proc tells it, the process's start time. Downloads (`<file>.part.lock`) and batch directories (run, retry,
 * merge, download) take it. A lock is stale when its owner on this host is gone: no such pid, a zombie (killed but
 * not yet reaped by its parent, which still answers `kill(pid, 0)`), or a pid reused by a process that started at
 * another time. A stale lock is taken over; a live one is refused, or waited for.
 */
import {
  closeSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { InterruptedError } from './errors.js';
import { errnoOf, fsError } from './fs-errors.js';

/** Who holds a lock, as its file says. */
export interface LockOwner {
  pid: number;
  host: string;
  /** The owner's start time in clock ticks since boot (/proc/<pid>/stat field 22), when known. */
  start?: number | undefined;
}

/** The release function of a lock taken. */
export type Release = () => void;

/** What `/proc/<pid>/stat` says of a process: its state letter and start time; undefined without /proc. */
function procStat(pid: number): { state: string; start: number } | 'gone' | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    if (errnoOf(e) !== 'ENOENT') return undefined;
    // No entry for the pid: gone, unless this system has no /proc at all.
    try {
      statSync('/proc/self/stat');
      return 'gone';
    } catch {
      return undefined;
    }
  }
  // The command name (field 2) is in parentheses and may hold spaces or parentheses: fields follow the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', start: Number(fields[19]) };
}

function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoOf(e) === 'EPERM';
  }
}

/** True when the owner of a lock of this host no longer runs (gone, a zombie, or its pid reused). */
export function ownerGone(owner: LockOwner): boolean {
  if (owner.pid === process.pid) return false;
  const st = procStat(owner.pid);
  if (st === 'gone') return true;
  if (st !== undefined) {
    if (st.state === 'Z' || st.state === 'X') return true;
    if (owner.start !== undefined && Number.isFinite(st.start) && st.start !== owner.start) return true;
    return false;
  }
  return !signalable(owner.pid);
}

/** Parses a lock file's text (`pid host [start=N]`); undefined when it is not one (e.g. empty: a crash mid-create). */
export function parseOwner(text: string): LockOwner | undefined {
  const m = /^(\d+) (\S+)(?: start=(\d+))?\s*$/m.exec(text.trim());
  if (m === null) return undefined;
  return { pid: Number(m[1]), host: m[2] as string, ...(m[3] !== undefined ? { start: Number(m[3]) } : {}) };
}

function ownText(): string {
  const st = procStat(process.pid);
  const start = st !== undefined && st !== 'gone' && Number.isFinite(st.start) ? ` start=${st.start}` : '';
  return `${process.pid} ${hostname()}${start}\n`;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * True when the lock at `path` (whose text is `text`) may be taken over: its owner on this host is gone, or the
 * file names no owner and is older than a minute (a crash between its create and its write). A lock of another
 * host (a shared disk) is never judged from here.
 */
function isStale(path: string, text: string): boolean {
  const owner = parseOwner(text);
  if (owner === undefined) {
    try {
      return Date.now() - statSync(path).mtimeMs > 60_000;
    } catch {
      return true;
    }
  }
  return owner.host === hostname() && ownerGone(owner);
}

/**
 * Removes a stale lock. It is first renamed aside, and the copy checked: when another process replaced the stale
 * lock with its own meanwhile, that one is put back (link fails if a third took the place) instead of deleted.
 */
function takeOver(path: string, staleText: string): void {
  const aside = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else took it over first: the next attempt tells
  }
  if (readText(aside) !== staleText) {
    try {
      linkSync(aside, path);
    } catch {
      // the place is taken again: the next attempt tells
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // already gone
  }
}

/** The outcome of one attempt: the release function, or the owner that holds the lock (undefined: unreadable). */
export type Attempt = { release: Release } | { held: LockOwner | undefined };

/** One attempt at the lock at `path`: takes it (over a stale one), or says who holds it. */
export function tryLock(path: string): Attempt {
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') {
        throw fsError(e, {
          path,
          action: 'create the lock file',
          hint: 'check that the directory is writable',
        });
      }
      const text = readText(path);
      if (text === undefined) {
        if (attempt < 3) continue; // released meanwhile
        return { held: undefined };
      }
      if (attempt < 3 && isStale(path, text)) {
        takeOver(path, text);
        continue;
      }
      return { held: parseOwner(text) };
    }
    try {
      writeSync(fd, ownText());
    } finally {
      closeSync(fd);
    }
    return {
      release: () => {
        try {
          unlinkSync(path);
        } catch {
          // already removed
        }
      },
    };
  }
}

/** Options of `lock`. */
export interface LockOptions {
  /** The error when the lock is held and no wait was asked for (it gets the owner, when known). */
  busy: (owner: LockOwner | undefined) => Error;
  /** Wait until the lock is free instead of failing. */
  wait?: boolean | undefined;
  /** Called once when a wait begins. */
  onWait?: ((owner: LockOwner | undefined) => void) | undefined;
  /** Ends a wait (InterruptedError). */
  signal?: AbortSignal | undefined;
  /** Pause between two attempts of a wait (default 250 ms). */
  pollMs?: number | undefined;
}

/** Takes the lock at `path`, or fails with `busy`, or (with `wait`) waits for it. Returns the release function. */
export async function lock(path: string, o: LockOptions): Promise<Release> {
  let told = false;
  for (;;) {
    if (o.signal?.aborted === true) throw new InterruptedError();
    const a = tryLock(path);
    if ('release' in a) return a.release;
    if (o.wait !== true) throw o.busy(a.held);
    if (!told) {
      told = true;
      o.onWait?.(a.held);
    }
    // A lock file has no wake-up of its own: poll it (a few syscalls per attempt).
    await pause(o.pollMs ?? 250, o.signal);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    const t = setTimeout(done, ms);
    const stop = (): void => {
      clearTimeout(t);
      reject(new InterruptedError());
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** `pid 123 on host-a` for messages. */
export function describeOwner(owner: LockOwner | undefined): string {
  if (owner === undefined) return 'another gw process';
  return `another gw process (pid ${owner.pid}${owner.host !== hostname() ? ` on ${owner.host}` : ''})`;
}
