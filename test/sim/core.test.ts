import { connect } from 'node:net';
import { spawn } from 'node:child_process';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { GW_BIN } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';

const auth = { authorization: `Bearer ${DEFAULT_SIM_TOKEN}` };

describe('simulator core', () => {
  it('puts X-Gateway-Request-Id on every response, errors included', async () => {
    const sim = await useSim();
    const ok = await fetch(`${sim.baseUrl}/v1/models`, { headers: auth });
    const missing = await fetch(`${sim.baseUrl}/v1/nothing`, { headers: auth });
    expect(ok.headers.get('x-gateway-request-id')).toMatch(/^req-sim-/);
    expect(missing.status).toBe(404);
    const body = (await missing.json()) as { error: { message: string; request_id: string } };
    expect(missing.headers.get('x-gateway-request-id')).toBe(body.error.request_id);
    expect(body.error.message.endsWith(`(${body.error.request_id})`)).toBe(true);
  });

  it('answers 401 for a missing or unknown token, in the common §2.4 shape', async () => {
    const sim = await useSim();
    for (const headers of [{}, { authorization: 'Bearer nope' }]) {
      const r = await fetch(`${sim.baseUrl}/v1/models`, { headers });
      expect(r.status).toBe(401);
      const b = (await r.json()) as { error: Record<string, string> };
      expect(b.error).toMatchObject({ type: 'authentication_error' });
      expect(b.error.request_id).toBe(r.headers.get('x-gateway-request-id'));
    }
  });

  it('isolates visibility per token from the config', async () => {
    const sim = await useSim({ tokens: { 'sk-a-00000001': { tenant: 'a', models: ['text-embedding-v4'] } } });
    const r = await fetch(`${sim.baseUrl}/v1/models`, { headers: { authorization: 'Bearer sk-a-00000001' } });
    expect(((await r.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual([
      'text-embedding-v4',
    ]);
  });

  it('applies faults by route, deterministically and a bounded number of times', async () => {
    const sim = await useSim({
      faults: [{ route: 'GET /v1/models', kind: 'status', status: 429, retryAfter: 3, times: 1 }],
    });
    const first = await fetch(`${sim.baseUrl}/v1/models`, { headers: auth });
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('3');
    expect(((await first.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    expect((await fetch(`${sim.baseUrl}/v1/models`, { headers: auth })).status).toBe(200);
  });

  it('serves an HTML 502 page, malformed JSON, and a response without request id on demand', async () => {
    const sim = await useSim();
    sim.sim.addFault({ route: 'GET /v1/models', kind: 'html502', times: 1 });
    const html = await fetch(`${sim.baseUrl}/v1/models`, { headers: auth });
    expect(html.status).toBe(502);
    expect(await html.text()).toContain('<title>502 Bad Gateway</title>');
    sim.sim.addFault({ route: 'GET /v1/models', kind: 'malformed', times: 1 });
    const bad = await fetch(`${sim.baseUrl}/v1/models`, { headers: auth });
    await expect(bad.json()).rejects.toThrow();
    sim.sim.addFault({ route: 'GET /v1/models', kind: 'no-request-id', times: 1 });
    const noId = await fetch(`${sim.baseUrl}/v1/models`, { headers: auth });
    expect(noId.headers.get('x-gateway-request-id')).toBeNull();
  });

  it('rejects a body that is not JSON with 400', async () => {
    const sim = await useSim();
    sim.sim.router.add('POST', '/v1/test-echo', (_req, reply) => reply.json(200, {}));
    const r = await fetch(`${sim.baseUrl}/v1/test-echo`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(r.status).toBe(400);
  });

  it('CDN origin serves ranges and refuses expired objects', async () => {
    const sim = await useSim();
    const url = sim.sim.cdn.publish({
      bytes: Buffer.from('0123456789'),
      contentType: 'video/mp4',
      expiresAt: Date.now() + 60_000,
    });
    const old = sim.sim.cdn.publish({
      bytes: Buffer.from('x'),
      contentType: 'video/mp4',
      expiresAt: Date.now() - 1,
    });
    const part = await fetch(url, { headers: { range: 'bytes=4-' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 4-9/10');
    expect(await part.text()).toBe('456789');
    expect((await fetch(old)).status).toBe(403);
  });
});

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('gw sim (process)', () => {
  it('prints its base URL and a ready line, serves 200 concurrent streaming chats, and stops on SIGTERM with no leftover listener', async () => {
    const child = spawn(process.execPath, [GW_BIN, 'sim', '--port', '0'], {
      env: { PATH: process.env.PATH, NO_COLOR: '1' },
    });
    let out = '';
    const ready = new Promise<void>((resolve) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (/^ready$/m.test(out)) resolve();
      });
    });
    await ready;
    const base = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
    expect(base).not.toBeNull();
    expect(out).toContain(`default token: ${DEFAULT_SIM_TOKEN}`);
    const port = Number(base?.[2]);
    const r = await fetch(`${base?.[1]}/v1/models`, { headers: auth });
    expect(r.status).toBe(200);

    // 200 concurrent streaming chats, each read to its [DONE].
    const agent = new Agent({ connections: 256 });
    const one = async (i: number): Promise<string[]> => {
      const res = await request(`${base?.[1]}/v1/chat/completions`, {
        dispatcher: agent,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({
          model: 'chat-3.7-plus',
          stream: true,
          messages: [{ role: 'user', content: `hello number ${i}` }],
        }),
      });
      expect(res.statusCode).toBe(200);
      const text = await res.body.text();
      return text
        .split('\n\n')
        .filter((f) => f.startsWith('data: '))
        .map((f) => f.slice(6));
    };
    const all = await Promise.all(Array.from({ length: 200 }, (_, i) => one(i)));
    await agent.close();
    for (const [i, frames] of all.entries()) {
      expect(frames.at(-1)).toBe('[DONE]');
      const text = frames
        .slice(0, -1)
        .map((f) => JSON.parse(f) as { choices: Array<{ delta?: { content?: string } }> })
        .map((c) => c.choices[0]?.delta?.content ?? '')
        .join('');
      expect(text).toContain(`hello number ${i}`);
    }

    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await portOpen(port)).toBe(false);
  });
});

describe('simulator ids', () => {
  it('are unique across restarts, so a journal never sees one twice', async () => {
    const a = await useSim();
    const b = await useSim();
    expect(a.sim.id('video_')).not.toBe(b.sim.id('video_'));
    expect(a.sim.id('video_')).toMatch(/^video_[0-9a-z]{16}$/);
  });
});

describe('simulator error messages stand on their own', () => {
  it('never cite a contract document or its sections (a user of gw sim does not have them)', async () => {
    const sim = await useSim({
      tokens: {
        [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' },
        'sk-closed-2222': { tenant: 'c', models: '*', notOpened: ['beta-tasks', 'asset-library'] },
      },
    });
    const closed = { authorization: 'Bearer sk-closed-2222' };
    const json = { 'content-type': 'application/json' };
    const tasks = `${sim.baseUrl}/beta/api/v3/contents/generations/tasks`;
    const assets = (action: string, version = '2024-01-01') =>
      `${sim.baseUrl}/beta/?Action=${action}&Version=${version}`;
    const asks: Array<[string, RequestInit]> = [
      [tasks, { method: 'POST', headers: { ...auth, ...json }, body: 'x' }],
      [`${tasks}?page_size=501`, { headers: auth }],
      [`${tasks}?filter.status=nope`, { headers: auth }],
      [tasks, { method: 'POST', headers: { ...closed, ...json }, body: '{}' }],
      [assets('UpdateAsset'), { method: 'POST', headers: { ...auth, ...json }, body: '{}' }],
      [assets('GetAsset', '2020-01-01'), { method: 'POST', headers: { ...auth, ...json }, body: '{}' }],
      [assets('GetAsset'), { method: 'POST', headers: { ...closed, ...json }, body: '{}' }],
      [
        `${sim.baseUrl}/alpha/v1/videos/image2video`,
        { method: 'POST', headers: { ...auth, ...json }, body: '[]' },
      ],
      [
        `${sim.baseUrl}/alpha/v1/videos/image2video`,
        { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'x' },
      ],
    ];
    for (const [url, init] of asks) {
      const r = await fetch(url, init);
      const text = await r.text();
      expect(r.status, `${url}: ${text}`).toBeGreaterThanOrEqual(400);
      expect(text, url).not.toMatch(/\.md\b|§/);
    }
  });
});
