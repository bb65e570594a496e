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

async function streamText(sim: { baseUrl: string; env: { GW_TOKEN: string } }, path: string, body: object) {
  const r = await fetch(`${sim.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sim.env.GW_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  return (await r.text()).split('\n\n').filter((f) => f.trim() !== '');
}

const STREAMS: ReadonlyArray<readonly [string, object, string]> = [
  ['/v1/chat/completions', chat('chat-3.7-plus'), 'data: [DONE]'],
  [
    '/v1/responses',
    { model: 'chat-3.7-plus', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] },
    'event: response.completed',
  ],
  ['/v1/messages', { ...chat('chat-3.7-plus'), max_tokens: 8 }, 'event: message_stop'],
];

describe('sim: stream faults per model, vanished models, generated models', () => {
  it('no-terminal leaves out the terminal event; after-terminal sends an event after it; others untouched', async () => {
    for (const [path, body, terminal] of STREAMS) {
      const sim = await useSim();
      const clean = await streamText(sim, path, body);
      expect(clean.at(-1)).toContain(terminal);
      sim.sim.addFault({ route: `POST ${path}`, kind: 'no-terminal', model: 'chat-3.7-plus' });
      const cut = await streamText(sim, path, body);
      expect(cut).toHaveLength(clean.length - 1);
      expect(cut.join('\n')).not.toContain(terminal);
      sim.sim.clearFaults();
      sim.sim.addFault({ route: `POST ${path}`, kind: 'after-terminal', model: 'chat-3.7-plus' });
      const after = await streamText(sim, path, body);
      expect(after).toHaveLength(clean.length + 1);
      expect(after.at(-2)).toContain(terminal);
      expect(after.at(-1)).toBe(after.at(-3));
      // Another model is not hit.
      expect(await streamText(sim, path, { ...body, model: 'chat-3-vl-plus' })).toHaveLength(clean.length);
    }
  });

  it('vanish drops a model from the list and answers model_not_found for it; generatedModels lists many', async () => {
    const sim = await useSim({ generatedModels: { count: 250 } });
    const list = async () =>
      (
        (await (
          await fetch(`${sim.baseUrl}/v1/models`, {
            headers: { authorization: `Bearer ${sim.env.GW_TOKEN}` },
          })
        ).json()) as { data: Array<{ id: string }> }
      ).data.map((m) => m.id);
    const before = await list();
    expect(before.filter((m) => m.startsWith('sim-chat-'))).toHaveLength(250);
    expect(before).toContain('sim-chat-001');
    expect(before).toContain('sim-chat-250');
    const token = sim.env.GW_TOKEN;
    expect((await post(sim.baseUrl, '/v1/chat/completions', token, chat('sim-chat-017'))).status).toBe(200);
    sim.sim.addFault({ route: '*', kind: 'vanish', model: 'sim-chat-017' });
    const after = await list();
    expect(before.filter((m) => !after.includes(m))).toEqual(['sim-chat-017']);
    const gone = await post(sim.baseUrl, '/v1/chat/completions', token, chat('sim-chat-017'));
    expect([gone.status, (gone.json.error as { code: string }).code]).toEqual([404, 'model_not_found']);
    expect((await post(sim.baseUrl, '/v1/chat/completions', token, chat('sim-chat-018'))).status).toBe(200);
  });
});
