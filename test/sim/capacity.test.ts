import { describe, expect, it } from 'vitest';
import { Capacity, isTokenFrame } from '../../src/sim/capacity.js';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { useSim } from '../helpers/sim.js';

const headers = { authorization: `Bearer ${DEFAULT_SIM_TOKEN}`, 'content-type': 'application/json' };
const chat = JSON.stringify({ model: 'chat-3.7-plus', messages: [{ role: 'user', content: 'hi there' }] });

describe('simulator capacity model', () => {
  it('serves maxConcurrent, queues up to queue, and answers 429 with Retry-After beyond', async () => {
    const sim = await useSim({
      // A first token 2 s away keeps the first two in the simulator while the third is sent, however slowly a
      // loaded machine runs this test (300 ms let the first finish first under load).
      capacity: { maxConcurrent: 1, queue: 1, ttftMs: 2000, tokensPerSecond: 1000, retryAfter: 3 },
    });
    const send = (): Promise<Response> =>
      fetch(`${sim.baseUrl}/v1/chat/completions`, { method: 'POST', headers, body: chat });
    const first = send();
    const second = send();
    // Both are in (one served, one waiting) before the third arrives: the third finds the queue full.
    await expect.poll(() => sim.sim.capacity?.stats().waiting, { timeout: 5000 }).toBe(1);
    const third = await send();
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('3');
    const body = (await third.json()) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.request_id).toBe(third.headers.get('x-gateway-request-id'));
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await Promise.all([a.text(), b.text()]);
    const s = sim.sim.capacity?.stats();
    expect(s).toMatchObject({ admitted: 2, rejected: 1, peakActive: 1, active: 0, waiting: 0 });
  });

  it('shows its counters on GET /sim/capacity without a token', async () => {
    const sim = await useSim({ capacity: { maxConcurrent: 4, queue: 0, ttftMs: 10, tokensPerSecond: 100 } });
    const r = await fetch(`${sim.baseUrl}/sim/capacity`);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ maxConcurrent: 4, queue: 0, admitted: 0, ttftMs: { count: 0 } });
  });

  it('stamps the first token no earlier than the configured time', async () => {
    const sim = await useSim({
      capacity: { maxConcurrent: 4, queue: 4, ttftMs: 120, tokensPerSecond: 1000 },
    });
    const stream = JSON.stringify({ ...JSON.parse(chat), stream: true });
    const r = await fetch(`${sim.baseUrl}/v1/chat/completions`, { method: 'POST', headers, body: stream });
    expect(await r.text()).toContain('[DONE]');
    const t = sim.sim.capacity?.stats().ttftMs;
    expect(t?.count).toBe(1);
    expect(t?.p50).toBeGreaterThanOrEqual(120);
    // Each stamp by request id, in Unix ms another process on the machine can compare with its own clock: that
    // clock (performance.timeOrigin + performance.now()), not Date.now(), which drifts from it by milliseconds in a
    // long-lived process.
    const before = performance.timeOrigin + performance.now();
    const withStamps = (await (await fetch(`${sim.baseUrl}/sim/capacity?stamps=1`)).json()) as {
      stamps: Array<{ request_id: string; arrived_unix_ms: number; first_token_unix_ms: number }>;
    };
    expect(withStamps.stamps).toHaveLength(1);
    const [s] = withStamps.stamps;
    expect(s?.request_id).toBe(r.headers.get('x-gateway-request-id'));
    expect((s?.first_token_unix_ms ?? 0) - (s?.arrived_unix_ms ?? 0)).toBeCloseTo(t?.p50 ?? 0, 2);
    expect(s?.first_token_unix_ms).toBeLessThanOrEqual(before + 1);
    expect(s?.arrived_unix_ms).toBeGreaterThan(before - 60_000);
    const without = (await (await fetch(`${sim.baseUrl}/sim/capacity`)).json()) as Record<string, unknown>;
    expect(without).not.toHaveProperty('stamps');
  });

  it('draws first-token times from a seeded log-normal with the configured median and p99', () => {
    const draw = (seed: number): number[] => {
      const c = new Capacity(
        { maxConcurrent: 1, queue: 0, ttftMs: { p50: 200, p99: 800 }, tokensPerSecond: 1 },
        seed,
      );
      return Array.from({ length: 20_000 }, () => c.drawTtft());
    };
    const a = draw(7);
    expect(draw(7)).toEqual(a);
    expect(draw(8)).not.toEqual(a);
    const s = [...a].sort((x, y) => x - y);
    const p50 = s[10_000] as number;
    const p99 = s[19_800] as number;
    expect(p50).toBeGreaterThan(190);
    expect(p50).toBeLessThan(210);
    expect(p99).toBeGreaterThan(720);
    expect(p99).toBeLessThan(880);
    const fixed = new Capacity({ maxConcurrent: 1, queue: 0, ttftMs: 50, tokensPerSecond: 1 }, 1);
    expect(new Set(Array.from({ length: 10 }, () => fixed.drawTtft()))).toEqual(new Set([50]));
  });

  it('paces only frames that carry a token', () => {
    expect(isTokenFrame({ data: '{"choices":[{"delta":{"content":"hi"}}]}' })).toBe(true);
    expect(isTokenFrame({ data: '{"choices":[{"delta":{"role":"assistant","content":""}}]}' })).toBe(false);
    expect(isTokenFrame({ event: 'response.output_text.delta', data: '{}' })).toBe(true);
    expect(
      isTokenFrame({ event: 'content_block_delta', data: '{"delta":{"type":"text_delta","text":"x"}}' }),
    ).toBe(true);
    expect(isTokenFrame({ data: '[DONE]' })).toBe(false);
  });
});
