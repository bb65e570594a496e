import { afterEach, describe, expect, it } from 'vitest';
import { startProbeSim, type ProbeSim } from '../../../src/probe/sim.js';

let sim: ProbeSim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function status(s: ProbeSim, method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(`${s.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  await res.arrayBuffer();
  return res.status;
}

const chatBody = { model: 'chat-3.7-plus', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 };

describe('the probe simulator', () => {
  it('serves models and videos at once, the text family once asked for, and nothing the probe never calls', async () => {
    sim = await startProbeSim();
    expect(await status(sim, 'GET', '/v1/models')).toBe(200);
    // A body breaking common.md §2.3 reaches the videos route (400), not a missing one (404).
    expect(await status(sim, 'POST', '/v1/videos', { model: 'clip-1.1-t2v', prompt: 'p', seconds: 1 })).toBe(
      400,
    );
    expect(await status(sim, 'POST', '/v1/chat/completions', chatBody)).toBe(404);
    await sim.ready('video');
    await sim.ready('text');
    expect(await status(sim, 'POST', '/v1/chat/completions', chatBody)).toBe(200);
    // Asking twice registers once.
    await sim.ready('text');
    expect(await status(sim, 'POST', '/v1/chat/completions', chatBody)).toBe(200);
    expect(await status(sim, 'GET', '/beta/api/v3/contents/generations/tasks')).toBe(404);
  });
});
