import { describe, expect, it } from 'vitest';
import { ConnectionError, GatewayError, TimeoutError, UserAbortError } from '../../../src/client/errors.js';
import { poll, pollRequestTimeout } from '../../../src/client/poll.js';
import { fakeClock } from '../../helpers/clock.js';

/** A fake clock: sleeping advances it, nothing waits on real time. */
const clock = fakeClock;

/** Answers `running` n times, then `done`. */
function states(n: number): () => Promise<string> {
  let calls = 0;
  return () => Promise.resolve(calls++ < n ? 'running' : 'done');
}

const rateLimited = (retryAfterMs?: number): GatewayError => {
  const e = new GatewayError({ status: 429, code: 'rate_limit_exceeded', message: 'slow down' });
  if (retryAfterMs !== undefined) e.retryAfterMs = retryAfterMs;
  return e;
};

describe('poll', () => {
  it('backs off exponentially from initialMs and caps at maxMs', async () => {
    const c = clock();
    const r = await poll({
      fetch: states(7),
      done: (s) => s === 'done',
      initialMs: 2000,
      maxMs: 30_000,
      random: () => 0.999999, // top of the jitter range: the exponential value itself
      sleep: c.sleep,
      now: c.now,
    });
    expect(r).toBe('done');
    expect(c.sleeps).toEqual([2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('applies jitter within [50%, 100%] of the exponential value', async () => {
    const c = clock();
    await poll({ fetch: states(3), done: (s) => s === 'done', random: () => 0, sleep: c.sleep, now: c.now });
    expect(c.sleeps).toEqual([1000, 2000, 4000]);
  });

  it('honours Retry-After on a 429 and keeps polling', async () => {
    const c = clock();
    let calls = 0;
    const updates: string[] = [];
    const transients: number[] = [];
    const r = await poll({
      fetch: () => {
        calls++;
        if (calls === 2) return Promise.reject(rateLimited(7000));
        return Promise.resolve(calls >= 4 ? 'done' : 'running');
      },
      done: (s) => s === 'done',
      initialMs: 100,
      random: () => 0.999999,
      onUpdate: (s) => updates.push(s),
      onTransient: (_e, ms) => transients.push(ms),
      sleep: c.sleep,
      now: c.now,
    });
    expect(r).toBe('done');
    expect(transients).toEqual([7000]);
    expect(c.sleeps[1]).toBe(7000);
    expect(updates).toEqual(['running', 'running', 'done']);
  });

  it('uses the backoff when a 429 carries no Retry-After, and absorbs dropped connections', async () => {
    const c = clock();
    const errors = [rateLimited(), new ConnectionError('reset')];
    const r = await poll({
      fetch: () => {
        const e = errors.shift();
        return e ? Promise.reject(e) : Promise.resolve('done');
      },
      done: (s) => s === 'done',
      initialMs: 100,
      random: () => 0.999999,
      sleep: c.sleep,
      now: c.now,
    });
    expect(r).toBe('done');
    expect(c.sleeps).toEqual([100, 200]);
  });

  it('without a limit, gives up after maxTransient consecutive transient errors', async () => {
    const c = clock();
    await expect(
      poll({
        fetch: () => Promise.reject(rateLimited(1)),
        done: () => true,
        maxTransient: 3,
        sleep: c.sleep,
        now: c.now,
      }),
    ).rejects.toMatchObject({ status: 429 });
    expect(c.sleeps).toHaveLength(3);
  });

  it('with a limit, absorbs transient errors until the limit, whatever maxTransient says', async () => {
    const c = clock();
    const e = await poll({
      fetch: () => Promise.reject(rateLimited(1000)),
      done: () => true,
      maxTransient: 3,
      timeoutMs: 10_000,
      sleep: c.sleep,
      now: c.now,
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(c.sleeps).toHaveLength(10);
  });

  it('does not retry a non-transient error', async () => {
    const c = clock();
    const e = new GatewayError({ status: 404, code: 'video_not_found', message: 'gone' });
    await expect(
      poll({ fetch: () => Promise.reject(e), done: () => true, sleep: c.sleep, now: c.now }),
    ).rejects.toBe(e);
    expect(c.sleeps).toEqual([]);
  });

  it('throws TimeoutError past timeoutMs, never sleeping beyond the deadline', async () => {
    const c = clock();
    await expect(
      poll({
        fetch: () => Promise.resolve('running'),
        done: (s) => s === 'done',
        initialMs: 2000,
        random: () => 0.999999,
        timeoutMs: 10_000,
        sleep: c.sleep,
        now: c.now,
      }),
    ).rejects.toBeInstanceOf(TimeoutError);
    expect(c.sleeps).toEqual([2000, 4000, 4000]);
    expect(c.now()).toBe(10_000);
  });

  it('takes one last look at the deadline so a task that just finished is not a timeout', async () => {
    const c = clock();
    const r = await poll({
      fetch: () => Promise.resolve(c.now() >= 5000 ? 'done' : 'running'),
      done: (s) => s === 'done',
      initialMs: 4000,
      random: () => 0.999999,
      timeoutMs: 5000,
      sleep: c.sleep,
      now: c.now,
    });
    expect(r).toBe('done');
  });

  it('follows a fixed step schedule, repeating its last step', async () => {
    const c = clock();
    await poll({
      fetch: states(5),
      done: (s) => s === 'done',
      steps: [2000, 5000, 10_000, 20_000],
      sleep: c.sleep,
      now: c.now,
    });
    expect(c.sleeps).toEqual([2000, 5000, 10_000, 20_000, 20_000]);
  });

  it('stops with UserAbortError when the signal aborts', async () => {
    const ac = new AbortController();
    const c = clock();
    await expect(
      poll({
        fetch: () => Promise.resolve('running'),
        done: () => false,
        signal: ac.signal,
        sleep: (ms) => {
          ac.abort();
          return c.sleep(ms).then(() => Promise.reject(new DOMException('aborted', 'AbortError')));
        },
        now: c.now,
      }),
    ).rejects.toBeInstanceOf(UserAbortError);
  });
});

describe('pollRequestTimeout (the limit of one poll of a wait)', () => {
  it('is the shorter of the request timeout and the time left', () => {
    expect(pollRequestTimeout(10_000, 0, 3_000)).toBe(3_000);
    expect(pollRequestTimeout(10_000, 8_000, 3_000)).toBe(2_000);
  });

  it('leaves at least 1 s for the last poll, and takes whichever is set alone', () => {
    expect(pollRequestTimeout(10_000, 9_900, 3_000)).toBe(1_000);
    expect(pollRequestTimeout(10_000, 12_000, undefined)).toBe(1_000);
    expect(pollRequestTimeout(undefined, 0, 3_000)).toBe(3_000);
    expect(pollRequestTimeout(undefined, 0, undefined)).toBeUndefined();
  });
});
