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
