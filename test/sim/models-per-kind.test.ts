import { describe, expect, it } from 'vitest';
import { useSim } from '../helpers/sim.js';

async function post(
  base: string,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });

describe('sim: extra models per kind, misconfigured models, faults per model', () => {
  it('lists extra and misconfigured models per token and serves each extra model only on its kind', async () => {
    const sim = await useSim({
      tokens: {
        'sk-all': { tenant: 'a', models: '*' },
        'sk-few': { tenant: 'b', models: ['chat-3.7-plus', 'claude-sim-4'] },
      },
      extraModels: { 'claude-sim-4': 'messages', 'codex-mini-sim': 'responses' },
      misconfiguredModels: ['chat-broken-1'],
    });
    const list = async (token: string) =>
      (
        (await (
          await fetch(`${sim.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${token}` } })
        ).json()) as {
          data: Array<{ id: string }>;
        }
      ).data.map((m) => m.id);
    const all = await list('sk-all');
    expect(all).toEqual(
      expect.arrayContaining(['claude-sim-4', 'codex-mini-sim', 'chat-broken-1', 'chat-3.7-plus']),
    );
    expect(await list('sk-few')).toEqual(['chat-3.7-plus', 'claude-sim-4']);

    const messages = await post(sim.baseUrl, '/v1/messages', 'sk-all', {
      model: 'claude-sim-4',
      max_tokens: 4,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(messages.status).toBe(200);
    const wrongKind = await post(sim.baseUrl, '/v1/chat/completions', 'sk-all', chat('claude-sim-4'));
    expect(wrongKind.status).toBe(404);
    const responses = await post(sim.baseUrl, '/v1/responses', 'sk-all', {
      model: 'codex-mini-sim',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
    });
    expect(responses.status).toBe(200);
    const invisible = await post(sim.baseUrl, '/v1/responses', 'sk-few', {
      model: 'codex-mini-sim',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
    });
    expect(invisible.status).toBe(404);

    const broken = await post(sim.baseUrl, '/v1/chat/completions', 'sk-all', chat('chat-broken-1'));
    expect(broken.status).toBe(404);
    const err = broken.json.error as { code: string; message: string; request_id: string };
    expect(err.code).toBe('model_not_found');
    expect(err.message).toBe(`The model \`chat-broken-1\` has no available channel (${err.request_id})`);
  });

  it('applies a fault with a model only to requests naming that model', async () => {
    const sim = await useSim({
      faults: [{ route: 'POST /v1/chat/completions', kind: 'status', status: 503, model: 'chat-3-vl-plus' }],
    });
    const token = sim.env.GW_TOKEN;
    expect((await post(sim.baseUrl, '/v1/chat/completions', token, chat('chat-3.7-plus'))).status).toBe(200);
    expect((await post(sim.baseUrl, '/v1/chat/completions', token, chat('chat-3-vl-plus'))).status).toBe(503);
  });
});
