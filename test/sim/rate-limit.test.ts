import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { useSim } from '../helpers/sim.js';

const auth = { authorization: `Bearer ${DEFAULT_SIM_TOKEN}`, 'content-type': 'application/json' };

describe('sim rate limits and the lost-answer fault', () => {
  it('answers 429 with Retry-After past the token bucket, in the route family envelope', async () => {
    let now = 1_000_000;
    const sim = await useSim({ rateLimit: { requestsPerSecond: 2, burst: 2 }, now: () => now });
    const get = () => request(`${sim.baseUrl}/v1/models`, { headers: auth });
    expect((await get()).statusCode).toBe(200);
    expect((await get()).statusCode).toBe(200);
    const limited = await get();
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['retry-after-ms']).toBe('500');
    expect(await limited.body.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    const beta = await request(`${sim.baseUrl}/beta/api/v3/contents/generations/tasks/x`, { headers: auth });
    expect(beta.statusCode).toBe(429);
    expect(await beta.body.json()).toMatchObject({
      error: { code: 'rate_limit_exceeded', type: 'rate_limit_error' },
    });
    now += 500;
    expect((await get()).statusCode).toBe(200);
  });

  it('lost-answer creates the task and drops the connection before any answer byte', async () => {
    const sim = await useSim({ faults: [{ route: 'POST /v1/videos', kind: 'lost-answer', times: 1 }] });
    const body = JSON.stringify({ model: 'clip-1.1-t2v', prompt: 'fox', seconds: 3, resolution: '720p' });
    await expect(
      request(`${sim.baseUrl}/v1/videos`, { method: 'POST', headers: auth, body }),
    ).rejects.toThrow();
    const list = sim.sim.store<Map<string, unknown>>('videos', () => new Map());
    expect(list.size).toBe(1);
    const ok = await request(`${sim.baseUrl}/v1/videos`, { method: 'POST', headers: auth, body });
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
  });
});
