import { describe, expect, it } from 'vitest';
import {
  GatewayError,
  RequestValidationError,
  TaskFailedError,
  TimeoutError,
} from '../../../src/client/errors.js';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import * as videos from '../../../src/client/resources/videos.js';
import { DEFAULT_SIM_TOKEN } from '../../../src/sim/config.js';
import { useSim } from '../../helpers/sim.js';
import { fakeClock } from '../../helpers/clock.js';

async function setup(o: Parameters<typeof useSim>[0] = {}, validate = true) {
  const sim = await useSim(o);
  const client = new GatewayClient({ baseUrl: sim.baseUrl, token: DEFAULT_SIM_TOKEN, validate });
  return { sim, client };
}

const fast = { initialMs: 5, maxMs: 20 };

describe('client/resources/videos', () => {
  it('create → wait → content through the redirect (no token to the CDN)', async () => {
    const { sim, client } = await setup();
    const created = await videos.create(client, { model: 'vid-2.7-t2v', prompt: 'fox', seconds: 4 });
    expect(created.data.video_id).toMatch(/^video_/);
    expect(created.requestId).toMatch(/^req-sim-/);
    const seen: string[] = [];
    const done = await videos.wait(client, created.data.video_id, {
      ...fast,
      onUpdate: (r) => seen.push(r.status),
    });
    expect(done.data.status).toBe('completed');
    expect(seen.at(-1)).toBe('completed');
    expect(videos.failureOf(created.data.video_id, done)).toBeUndefined();
    const raw = await videos.content(client, created.data.video_id);
    const bytes = Buffer.from(await raw.body.arrayBuffer());
    expect(raw.status).toBe(200);
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const ranged = await videos.content(client, created.data.video_id, { headers: { range: 'bytes=8-' } });
    expect(ranged.status).toBe(206);
    await ranged.body.dump();
    expect(sim.sim.cdn.authorizationSeen).toEqual([]);
    await client.close();
  });

  it('checks §2.3 before sending (a RequestValidationError carrying the documented code), unless validation is off', async () => {
    const { sim, client } = await setup();
    const err = await videos.create(client, { model: 'clip-1.1-t2v', seconds: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequestValidationError);
    expect(err).toMatchObject({ code: 'invalid_duration', param: 'seconds' });
    expect(sim.requests).toHaveLength(0);
    const loose = new GatewayClient({ baseUrl: sim.baseUrl, token: DEFAULT_SIM_TOKEN, validate: false });
    const gw = await videos.create(loose, { model: 'clip-1.1-t2v', seconds: 2 }).catch((e: unknown) => e);
    expect(gw).toBeInstanceOf(GatewayError);
    expect(gw).toMatchObject({ status: 400, code: 'invalid_duration' });
    await Promise.all([client.close(), loose.close()]);
  });

  it('content before completion is a GatewayError video_not_ready', async () => {
    const { client } = await setup();
    const { data } = await videos.create(client, { model: 'vid-2.7-t2v', prompt: '[sim:never]' });
    await expect(videos.content(client, data.video_id)).rejects.toMatchObject({
      status: 404,
      code: 'video_not_ready',
    });
    await client.close();
  });

  it('wait returns a failed record; failureOf turns it into a TaskFailedError with the error and request id', async () => {
    const { client } = await setup();
    const { data } = await videos.create(client, { model: 'vid-2.7-t2v', prompt: '[sim:fail]' });
    const done = await videos.wait(client, data.video_id, fast);
    expect(done.data.status).toBe('failed');
    const f = videos.failureOf(data.video_id, done);
    expect(f).toBeInstanceOf(TaskFailedError);
    expect(f).toMatchObject({
      state: 'failed',
      taskId: data.video_id,
      code: 'video_failed',
      requestId: done.requestId,
    });
    expect(f?.message).toContain('upstream_task_failed');
    await client.close();
  });

  it('wait stops with a TimeoutError', async () => {
    const { client } = await setup();
    const { data } = await videos.create(client, { model: 'vid-2.7-t2v', prompt: '[sim:never]' });
    await expect(videos.wait(client, data.video_id, { ...fast, timeoutMs: 60 })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    await client.close();
  });

  it('wait keeps to its limit: a 429 with a long Retry-After is the poll’s to absorb, never a client retry', async () => {
    const sim = await useSim();
    const clientSleeps: number[] = [];
    const client = new GatewayClient({
      baseUrl: sim.baseUrl,
      token: DEFAULT_SIM_TOKEN,
      sleep: (ms) => {
        clientSleeps.push(ms);
        return Promise.resolve();
      },
    });
    const { data } = await videos.create(client, { model: 'vid-2.7-t2v', prompt: '[sim:never]' });
    sim.sim.addFault({ route: 'GET /v1/videos/:id', kind: 'status', status: 429, retryAfter: 30 });
    const clock = fakeClock();
    const err = await videos
      .wait(client, data.video_id, {
        ...fast,
        timeoutMs: 3000,
        now: clock.now,
        sleep: clock.sleep,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).message).toMatch(/last poll failed/);
    // The 30 s Retry-After was cut to the 3 s left; the client itself never slept or retried: two GETs, the
    // first poll and the last look at the deadline.
    expect(clock.sleeps).toEqual([3000]);
    expect(clientSleeps).toEqual([]);
    expect(sim.requests.filter((r) => r.method === 'GET')).toHaveLength(2);
    await client.close();
  });

  it('retrieve reads a gateway that answers only `id` (video_id filled in)', async () => {
    const { sim, client } = await setup();
    sim.sim.router.add('GET', '/v1/videos-alt/:id', (req, reply) =>
      reply.json(200, { id: req.params.id, status: 'success' }),
    );
    const r = await client.request({
      method: 'GET',
      path: '/v1/videos-alt/abc',
      schema: (await import('../../../src/contract/video.js')).videoRecordSchema,
    });
    expect(r.data.video_id).toBe('abc');
    await client.close();
  });
});
