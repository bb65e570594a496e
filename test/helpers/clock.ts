import { sleep } from '../../src/client/backoff.js';

/** A fake clock for polls and backoff: `sleep` records each delay and advances `now` by it, at once. */
export function fakeClock(start = 0): {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  sleeps: number[];
  advance: (ms: number) => number;
} {
  let t = start;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: (ms) => {
      sleeps.push(ms);
      t += ms;
      return Promise.resolve();
    },
    sleeps,
    advance: (ms) => (t += ms),
  };
}

/** A clock for in-process runs of gw (`runGw`): the waits' sleeps, recorded. */
export interface RunClock {
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Every delay a wait asked for, in order. */
  sleeps: number[];
}

/**
 * A clock whose sleeps take at most `realMs` of real time but advance `now` by their full length: a wait polls at
 * its real schedule in its own time (limits and Retry-After included) while the test does not wait for it. Real
 * time still passes a little at each sleep, so the simulator's state machines (real timers) move on.
 */
export function fastClock(realMs = 5): RunClock {
  let skipped = 0;
  const sleeps: number[] = [];
  return {
    now: () => Date.now() + skipped,
    sleeps,
    sleep: (ms, signal) => {
      sleeps.push(ms);
      const real = Math.min(Math.max(0, ms), realMs);
      skipped += Math.max(0, ms) - real;
      return sleep(real, signal);
    },
  };
}
