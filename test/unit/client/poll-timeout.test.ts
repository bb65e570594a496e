import { describe, expect, it } from 'vitest';
import { ConnectionError, GatewayError, TimeoutError } from '../../../src/client/errors.js';
import { poll } from '../../../src/client/poll.js';
import { fakeClock } from '../../helpers/clock.js';

function clock(): { now: () => number; sleep: (ms: number) => Promise<void> } {
  const { now, sleep } = fakeClock();
  return { now, sleep };
}

describe('poll: a limit reached while the gateway keeps failing', () => {
  it('names the last failure and carries its request id (exit 4)', async () => {
    const c = clock();
    const err = new GatewayError({ status: 503, code: 'service_error', message: 'down', requestId: 'req-9' });
    const e = await poll({
      fetch: () => Promise.reject(err),
      done: () => true,
      timeoutMs: 10_000,
      initialMs: 1000,
      maxTransient: 100,
      random: () => 0,
      ...c,
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect((e as TimeoutError).message).toMatch(/the last poll failed: down/);
    expect((e as TimeoutError).requestId).toBe('req-9');
    expect((e as TimeoutError).cause).toBe(err);
  });

  it('a limit reached while the task runs stays a plain timeout', async () => {
    const c = clock();
    let n = 0;
    const e = await poll({
      fetch: () => (n++ === 0 ? Promise.reject(new ConnectionError('reset')) : Promise.resolve('running')),
      done: () => false,
      timeoutMs: 5000,
      initialMs: 1000,
      random: () => 0,
      ...c,
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect((e as TimeoutError).message).toMatch(/^still running after \d+s$/);
    expect((e as TimeoutError).requestId).toBeUndefined();
  });
});
