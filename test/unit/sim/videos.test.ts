import { describe, expect, it } from 'vitest';
import { parseMp4Boxes } from '../../../src/sim/mp4.js';
import { DEFAULT_SIM_TOKEN } from '../../../src/sim/config.js';
import { fillerByte } from '../../../src/sim/cdn.js';
import { useSim } from '../../helpers/sim.js';

/** A simulator on a hand-driven clock (timings: queued 20 ms, running 40 ms). */
async function sim(o: Parameters<typeof useSim>[0] = {}) {
  let t = 1_800_000_000_000;
  const s = await useSim({ now: () => t, ...o });
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    token = DEFAULT_SIM_TOKEN,
  ): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> => {
    const res = await fetch(s.baseUrl + path, {
      method,
      redirect: 'manual',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return {
      status: res.status,
      json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      headers: res.headers,
    };
  };
  return { s, call, advance: (ms: number) => (t += ms), now: () => t };
}

const err = (j: Record<string, unknown>): Record<string, unknown> => j.error as Record<string, unknown>;

describe('sim POST /v1/videos (common.md §2.3, §7)', () => {
  it('creates a queued video carrying video_id', async () => {
    const { call } = await sim();
    const r = await call('POST', '/v1/videos', {
      model: 'clip-1.1-t2v',
      prompt: 'a fox',
      seconds: 5,
      resolution: '720p',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-gateway-request-id')).toMatch(/^req-sim-/);
    expect(r.json).toMatchObject({ object: 'video', status: 'queued', model: 'clip-1.1-t2v', url: null });
    expect(r.json.video_id).toBe(r.json.id);
  });

  it.each([
    [{ model: 'clip-1.1-t2v', seconds: 2 }, 400, 'invalid_duration'],
    [{ model: 'vid-2.7-t2v', seconds: 16 }, 400, 'invalid_duration'],
    [{ model: 'vid-2.7-t2v', seconds: '5' }, 400, 'invalid_duration'],
    [{ model: 'vid-2.7-t2v', resolution: '4k' }, 400, 'invalid_resolution'],
    [{ model: 'vid-2.7-t2v', seed: '42' }, 400, 'invalid_seed'],
    [{ model: 'vid-2.7-t2v', seed: 2147483648 }, 400, 'invalid_seed'],
    [
      { model: 'clip-1.1-t2v', input_reference: { image_url: 'https://x.test/a.png' } },
      400,
      'invalid_reference',
    ],
    [
      { model: 'clip-1.1-i2v', input_reference: { image_url: 'http://x.test/a.png' } },
      400,
      'invalid_reference',
    ],
    [{ model: 'vid-2.7-r2v', references: { video: ['https://x.test/a.avi'] } }, 400, 'invalid_reference'],
    [{ model: 'vid-2.7-t2v', size: '1280x720' }, 400, 'invalid_request'],
    [{ model: 'no-such-model' }, 404, 'model_not_found'],
    [{ model: 'chat-3.7-plus' }, 404, 'model_not_found'],
    [{}, 404, 'model_not_found'],
    [[1, 2], 400, 'invalid_request'],
  ])('%j → %i %s in the §2.4 body', async (body, status, code) => {
    const { call } = await sim();
    const r = await call('POST', '/v1/videos', body);
    expect(r.status).toBe(status);
    const e = err(r.json);
    expect(e.code).toBe(code);
    expect(e.request_id).toBe(r.headers.get('x-gateway-request-id'));
    expect(String(e.message).endsWith(`(${String(e.request_id)})`)).toBe(true);
  });

  it('model_not_found for a video model the token does not see', async () => {
    const { call } = await sim({
      tokens: { 'sk-narrow': { tenant: 't2', models: ['vid-2.7-t2v'] } },
    });
    expect((await call('POST', '/v1/videos', { model: 'clip-1.1-t2v' }, 'sk-narrow')).status).toBe(404);
    expect((await call('POST', '/v1/videos', { model: 'vid-2.7-t2v' }, 'sk-narrow')).status).toBe(200);
  });
});

describe('sim GET /v1/videos/:id state machine (common.md §3)', () => {
  it('queued → in_progress → processing → completed, with a result URL and expires_at = now + TTL', async () => {
    const { s, call, advance, now } = await sim();
    const id = (await call('POST', '/v1/videos', { model: 'vid-2.7-t2v', prompt: 'x' })).json
      .video_id as string;
    const states: string[] = [];
    for (const step of [0, 25, 25, 30]) {
      advance(step);
      states.push((await call('GET', `/v1/videos/${id}`)).json.status as string);
    }
    expect(states).toEqual(['queued', 'in_progress', 'processing', 'completed']);
    const rec = (await call('GET', `/v1/videos/${id}`)).json;
    expect(String(rec.url).startsWith(s.cdnUrl)).toBe(true);
    const completedAt = Math.floor((now() - 20) / 1000);
    expect(rec.completed_at).toBe(completedAt);
    expect(rec.expires_at).toBe(Math.floor((now() - 20 + s.sim.config.timings.resultTtlMs) / 1000));
    expect(rec.progress).toBe(100);
  });

  it('answers success instead of completed when configured', async () => {
    const { call, advance } = await sim({ videoSuccessState: 'success' });
    const id = (await call('POST', '/v1/videos', { model: 'vid-2.7-t2v' })).json.video_id as string;
    advance(100);
    expect((await call('GET', `/v1/videos/${id}`)).json.status).toBe('success');
  });

  it.each([
    ['[sim:fail]', 'failed', 'upstream_task_failed'],
    ['[sim:cancel]', 'cancelled', 'upstream_task_cancelled'],
  ])('%s ends %s with an error object', async (trigger, state, code) => {
    const { call, advance } = await sim();
    const id = (await call('POST', '/v1/videos', { model: 'vid-2.7-t2v', prompt: `x ${trigger}` })).json
      .video_id as string;
    advance(100);
    const rec = (await call('GET', `/v1/videos/${id}`)).json;
    expect(rec.status).toBe(state);
    expect(err(rec).code).toBe(code);
    expect(rec.url).toBeNull();
  });

  it('[sim:never] stays in_progress', async () => {
    const { call, advance } = await sim();
    const id = (await call('POST', '/v1/videos', { model: 'vid-2.7-t2v', prompt: '[sim:never]' })).json
      .video_id as string;
    advance(3_600_000);
    expect((await call('GET', `/v1/videos/${id}`)).json.status).toBe('in_progress');
  });

  it('a video is visible only to its tenant', async () => {
    const { call } = await sim({
      tokens: { [DEFAULT_SIM_TOKEN]: { tenant: 'a', models: '*' }, 'sk-other': { tenant: 'b', models: '*' } },
    });
    const id = (await call('POST', '/v1/videos', { model: 'vid-2.7-t2v' })).json.video_id as string;
    const r = await call('GET', `/v1/videos/${id}`, undefined, 'sk-other');
    expect(r.status).toBe(404);
    expect(err(r.json).code).toBe('video_not_found');
    expect((await call('GET', `/v1/videos/${id}/content`, undefined, 'sk-other')).status).toBe(404);
  });
});

describe('sim GET /v1/videos/:id/content and the CDN origin', () => {
  it('404 video_not_ready before completion; a 302 to the CDN after, which serves an MP4 with Range support', async () => {
    const { s, call, advance } = await sim();
    const id = (await call('POST', '/v1/videos', { model: 'clip-1.1-t2v', seconds: 4, resolution: '720p' }))
      .json.video_id as string;
    const early = await call('GET', `/v1/videos/${id}/content`);
    expect(early.status).toBe(404);
    expect(err(early.json).code).toBe('video_not_ready');
    advance(100);
    const res = await fetch(`${s.baseUrl}/v1/videos/${id}/content`, {
      redirect: 'manual',
      headers: { authorization: `Bearer ${DEFAULT_SIM_TOKEN}` },
    });
    expect(res.status).toBe(302);
    const location = res.headers.get('location') ?? '';
    expect(location.startsWith(s.cdnUrl)).toBe(true);
    const file = await fetch(location);
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect(Number(file.headers.get('content-length'))).toBe(bytes.length);
    expect(parseMp4Boxes(bytes).map((b) => b.type)).toEqual(['ftyp', 'moov', 'mdat']);
    const part = await fetch(location, { headers: { range: 'bytes=10-' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-${bytes.length - 1}/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10))).toBe(true);
    expect(s.sim.cdn.authorizationSeen).toEqual([]);
  });

  it('failed videos have no content', async () => {
    const { call, advance } = await sim();
    const id = (await call('POST', '/v1/videos', { model: 'vid-2.7-t2v', prompt: '[sim:fail]' })).json
      .video_id as string;
    advance(100);
    const r = await call('GET', `/v1/videos/${id}/content`);
    expect([r.status, err(r.json).code]).toEqual([404, 'video_failed']);
  });

  it('[sim:expired]: expires_at in the past and the CDN answers 403', async () => {
    const { call, advance, now } = await sim();
    const id = (await call('POST', '/v1/videos', { model: 'vid-2.7-t2v', prompt: '[sim:expired]' })).json
      .video_id as string;
    advance(100);
    const rec = (await call('GET', `/v1/videos/${id}`)).json;
    expect(rec.status).toBe('completed');
    expect((rec.expires_at as number) * 1000).toBeLessThan(now());
    expect((await fetch(String(rec.url))).status).toBe(403);
  });

  it('serves videoBytes generated bytes when configured', async () => {
    const { call, advance } = await sim({ videoBytes: 300_000 });
    const id = (await call('POST', '/v1/videos', { model: 'vid-2.7-t2v' })).json.video_id as string;
    advance(100);
    const rec = (await call('GET', `/v1/videos/${id}`)).json;
    const res = await fetch(String(rec.url));
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(300_000);
    expect(bytes[123_456]).toBe(fillerByte(123_456));
  });
});
