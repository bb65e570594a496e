import type { Readable, Writable } from 'node:stream';
import { LOCAL_LIMITS, readStreamText } from '../core/local-file.js';

/** A writable the CLI prints to; `isTTY` decides spinners and streaming defaults. */
export type OutStream = Writable & { isTTY?: boolean; columns?: number };

/** The process boundary of `main()`: tests pass their own streams and environment. */
export interface Io {
  stdout: OutStream;
  stderr: OutStream;
  stdin: Readable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Aborted on Ctrl-C / SIGTERM. */
  signal?: AbortSignal;
  /** The clock of waits (their poll sleeps and limits); default the real one. Embedders and tests pass theirs. */
  clock?: WaitClock;
}

/** What a wait reads the time from and sleeps with. */
export interface WaitClock {
  now(): number;
  /** Resolves after `ms`; rejects (an AbortError) when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Poll options using `io`'s clock, when it has one (spread into a wait's options). */
export function clockOf(io: Io): { now?: () => number; sleep?: WaitClock['sleep'] } {
  const c = io.clock;
  return c === undefined ? {} : { now: () => c.now(), sleep: (ms, signal) => c.sleep(ms, signal) };
}

/** The real process streams. */
export function processIo(signal?: AbortSignal): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // A getter: creating process.stdin costs a stream (~1.5 ms) that most commands never read.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    ...(signal ? { signal } : {}),
  };
}

/**
 * Reads all of standard input as UTF-8 text, at most 16 MiB (`gw chat < /dev/zero` is exit 2, not an OOM); Ctrl-C
 * (`signal`) ends the read even while nothing arrives.
 */
export async function readAll(stdin: Readable, signal?: AbortSignal): Promise<string> {
  return readStreamText(stdin, { what: 'standard input', field: 'stdin', limit: LOCAL_LIMITS.text, signal });
}
