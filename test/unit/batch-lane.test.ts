import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isRateLimited, laneHooks, throughLane } from '../../src/batch/lane.js';
import { Limits } from '../../src/batch/limits.js';
import type { GatewayClient } from '../../src/client/gateway-client.js';
import { errorFromBody, GatewayError, RateLimitError } from '../../src/client/errors.js';
import { wait } from '../../src/client/resources/videos.js';

/** A 429 as the client throws it: a RateLimitError carrying the answer's Retry-After. */
const limited = (ms: number): RateLimitError =>
  new RateLimitError({
    status: 429,
    code: 'rate_limit_exceeded',
    message: 'rate limit exceeded',
    retryAfterMs: ms,
  });

/** A client whose GETs of a video answer from `answers` in turn (an Error is thrown), recording when. */
function stubClient(answers: Array<string | Error>): { client: GatewayClient; at: number[] } {
  const at: number[] = [];
  const client = {
    request: () => {
      at.push(Date.now());
      const a = answers.shift() ?? 'completed';
      if (a instanceof Error) return Promise.reject(a);
      return Promise.resolve({
        data: { id: 'video_1', object: 'video', status: a, created_at: 1 },
        status: 200,
        requestId: 'req-1',
        headers: {},
      });
    },
  };
  return { client: client as unknown as GatewayClient, at };
}

describe('batch polls through the model lane (fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a poll answered 429 pauses its model's lane for creates, halves its limit, and waits out Retry-After", async () => {
    const limits = new Limits(8);
    const lane = laneHooks(limits, 'clip');
    const { client, at } = stubClient([limited(3000), 'completed']);
    const p = wait(client, 'video_1', {
      sleep: lane.sleep,
      onTransient: lane.onTransient,
      random: () => 0.5,
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(at).toEqual([0]);
    expect(limits.canSend('clip')).toBe(false);
    expect(limits.pausedFor('clip')).toBe(3000);
    expect(limits.limitOf('clip')).toBe(4);
    expect(limits.canSend('other')).toBe(true);
    await vi.advanceTimersByTimeAsync(3000);
    expect((await p).data.status).toBe('completed');
    expect(at).toEqual([0, 3000]);
    expect(limits.canSend('clip')).toBe(true);
  });

  it("a poll waits out a pause that a create's 429 put on its lane", async () => {
    const limits = new Limits(8);
    const lane = laneHooks(limits, 'clip');
    const { client, at } = stubClient(['in_progress', 'completed']);
    const p = wait(client, 'video_1', {
      sleep: lane.sleep,
      onTransient: lane.onTransient,
      initialMs: 1000,
      random: () => 0.5,
    });
    await vi.advanceTimersByTimeAsync(0);
    limits.release(limits.take('clip'), 'rate-limited', 10_000);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(at).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect((await p).data.status).toBe('completed');
    expect(at).toEqual([0, 10_000]);
  });

  it('a task whose polls keep getting 429 is still followed (not failed) once the lane opens', async () => {
    const limits = new Limits(8);
    const lane = laneHooks(limits, 'clip');
    // Nine 429s in a row: more than a poll absorbs on its own.
    const { client, at } = stubClient([...Array.from({ length: 9 }, () => limited(500)), 'completed']);
    const signal = new AbortController().signal;
    const p = throughLane(lane, signal, () =>
      wait(client, 'video_1', { signal, sleep: lane.sleep, onTransient: lane.onTransient }),
    );
    await vi.advanceTimersByTimeAsync(20_000);
    expect((await p).data.status).toBe('completed');
    expect(at).toHaveLength(10);
    // Never two polls closer than the Retry-After.
    for (let i = 1; i < at.length; i++)
      expect((at[i] as number) - (at[i - 1] as number)).toBeGreaterThanOrEqual(500);
  });

  it("a download opening answered 429 pauses its model's lane and is run again after the Retry-After", async () => {
    const limits = new Limits(8);
    const lane = laneHooks(limits, 'clip');
    const signal = new AbortController().signal;
    const at: number[] = [];
    const p = throughLane(lane, signal, () => {
      at.push(Date.now());
      return at.length === 1 ? Promise.reject(limited(2000)) : Promise.resolve('saved');
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(limits.canSend('clip')).toBe(false);
    expect(limits.limitOf('clip')).toBe(4);
    await vi.advanceTimersByTimeAsync(2000);
    await expect(p).resolves.toBe('saved');
    expect(at).toEqual([0, 2000]);
  });

  it('the client makes every 429 answer a RateLimitError, and only those are rate limits', () => {
    const body = JSON.stringify({ error: { code: 'rate_limit_exceeded', message: 'slow down' } });
    expect(isRateLimited(errorFromBody(429, body, 'req-1'))).toBe(true);
    expect(isRateLimited(errorFromBody(503, body, 'req-1'))).toBe(false);
    expect(isRateLimited(new GatewayError({ status: 404, code: 'not_found', message: 'x' }))).toBe(false);
    expect(isRateLimited(new Error('429'))).toBe(false);
  });

  it('a poll error other than 429 is not retried by the lane', async () => {
    const limits = new Limits(8);
    const lane = laneHooks(limits, 'clip');
    const signal = new AbortController().signal;
    const err = new GatewayError({ status: 404, code: 'not_found', message: 'no such video' });
    let calls = 0;
    const p = throughLane(lane, signal, () => {
      calls++;
      return Promise.reject(err);
    });
    await expect(p).rejects.toBe(err);
    expect(calls).toBe(1);
  });
});
