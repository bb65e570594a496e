/**
 * The text and image routes of the simulator against common.md and the public wire formats: validation answers,
 * model visibility, stream shapes, triggers, PNG files, and the split-UTF-8 writes.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { decodeSse } from '../../src/client/sse.js';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { SimReply, type SimRequest } from '../../src/sim/http.js';
import { PNG_SIGNATURE } from '../../src/sim/png.js';
import { UTF8_REPLY, base64Floats, embeddingVector } from '../../src/sim/routes/text.js';
import { useSim } from '../helpers/sim.js';

type Sim = Awaited<ReturnType<typeof useSim>>;

async function post(
  sim: Sim,
  path: string,
  body: unknown,
  token = DEFAULT_SIM_TOKEN,
): Promise<{ status: number; rid: string | null; json: Record<string, unknown>; text: string }> {
  const res = await fetch(sim.baseUrl + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* a stream */
  }
  return { status: res.status, rid: res.headers.get('x-gateway-request-id'), json, text };
}

async function* toAsync(text: string): AsyncGenerator<string> {
  yield await Promise.resolve(text);
}

async function events(text: string): Promise<Array<{ event: string | undefined; data: string }>> {
  const out: Array<{ event: string | undefined; data: string }> = [];
  for await (const e of decodeSse(toAsync(text))) out.push({ event: e.event, data: e.data });
  return out;
}

const chatBody = (content: string, extra: object = {}): object => ({
  model: 'chat-3.7-plus',
  messages: [{ role: 'user', content }],
  ...extra,
});

describe('common §2.4 errors of the text routes', () => {
  it('a rule violation is 400 invalid_request naming the field, message ending with the request id', async () => {
    const sim = await useSim();
    const r = await post(sim, '/v1/messages', {
      model: 'chat-3.7-plus',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(r.status).toBe(400);
    const e = r.json.error as Record<string, unknown>;
    expect(e).toMatchObject({ code: 'invalid_request', type: 'invalid_request_error', param: 'max_tokens' });
    expect(e.request_id).toBe(r.rid);
    expect(e.message).toBe(`max_tokens: is required (${r.rid})`);
  });

  it('a body that is not an object is 400', async () => {
    const sim = await useSim();
    const r = await post(sim, '/v1/embeddings', ['a']);
    expect(r.status).toBe(400);
    expect((r.json.error as { param: string }).param).toBe('body');
  });

  it('model_not_found (404) for unknown, invisible and wrong-kind models on every route', async () => {
    const sim = await useSim({
      tokens: {
        [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' },
        'sk-emb': { tenant: 'e', models: ['text-embedding-v4'] },
      },
    });
    const cases: Array<[string, object, string]> = [
      ['/v1/chat/completions', chatBody('x', { model: 'ghost' }), DEFAULT_SIM_TOKEN],
      ['/v1/chat/completions', chatBody('x'), 'sk-emb'],
      ['/v1/chat/completions', chatBody('x', { model: 'clip-1.1-t2v' }), DEFAULT_SIM_TOKEN],
      [
        '/v1/responses',
        { model: 'text-embedding-v4', input: [{ role: 'user', content: [] }] },
        DEFAULT_SIM_TOKEN,
      ],
      [
        '/v1/messages',
        { model: 'ghost', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
        DEFAULT_SIM_TOKEN,
      ],
      ['/v1/embeddings', { model: 'chat-3.7-plus', input: ['x'] }, DEFAULT_SIM_TOKEN],
      ['/v1/images/generations', { model: 'chat-3.7-plus', prompt: 'x' }, DEFAULT_SIM_TOKEN],
      [
        '/v1/images/edits',
        { model: 'ghost', prompt: 'x', images: [{ image_url: 'https://e.com/a.png' }] },
        DEFAULT_SIM_TOKEN,
      ],
    ];
    for (const [path, body, token] of cases) {
      const r = await post(sim, path, body, token);
      expect([path, r.status]).toEqual([path, 404]);
      const e = r.json.error as Record<string, string>;
      expect(e.code).toBe('model_not_found');
      expect(e.message?.endsWith(`(${r.rid})`)).toBe(true);
    }
    const ok = await post(sim, '/v1/embeddings', { model: 'text-embedding-v4', input: ['x'] }, 'sk-emb');
    expect(ok.status).toBe(200);
  });

  it('[sim:error] without streaming is a 502 upstream_error', async () => {
    const sim = await useSim();
    for (const [path, body] of [
      ['/v1/chat/completions', chatBody('x [sim:error]')],
      [
        '/v1/responses',
        {
          model: 'chat-3.7-plus',
          input: [{ role: 'user', content: [{ type: 'input_text', text: '[sim:error]' }] }],
        },
      ],
      [
        '/v1/messages',
        { model: 'chat-3.7-plus', max_tokens: 9, messages: [{ role: 'user', content: '[sim:error]' }] },
      ],
    ] as const) {
      const r = await post(sim, path, body);
      expect(r.status).toBe(502);
      expect((r.json.error as { code: string }).code).toBe('upstream_error');
    }
  });
});

describe('chat wire format', () => {
  it('without include_usage: no usage fields, finish chunk, [DONE]', async () => {
    const sim = await useSim();
    const r = await post(sim, '/v1/chat/completions', chatBody('hi', { stream: true }));
    const evs = await events(r.text);
    expect(evs.at(-1)?.data).toBe('[DONE]');
    const chunks = evs.slice(0, -1).map((e) => JSON.parse(e.data) as Record<string, unknown>);
    expect(chunks.every((c) => !('usage' in c) && c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [{ delta: {}, finish_reason: 'stop' }] });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('max_tokens cuts the answer with finish_reason length', async () => {
    const sim = await useSim();
    const r = await post(sim, '/v1/chat/completions', chatBody('one two three four', { max_tokens: 2 }));
    expect(r.json).toMatchObject({
      choices: [{ message: { content: 'Simulated reply ' }, finish_reason: 'length' }],
      usage: { completion_tokens: 2 },
    });
  });

  it('streamChunks makes a stream of exactly that many content chunks (50 000)', async () => {
    const sim = await useSim({ streamChunks: 50_000 });
    const r = await post(
      sim,
      '/v1/chat/completions',
      chatBody('bench', { stream: true, stream_options: { include_usage: true } }),
    );
    const evs = await events(r.text);
    const chunks = evs
      .filter((e) => e.data !== '[DONE]')
      .map((e) => JSON.parse(e.data) as { choices: Array<{ delta: { content?: string } }> });
    const content = chunks.filter(
      (c) => c.choices[0]?.delta.content !== undefined && c.choices[0].delta.content !== '',
    );
    expect(content).toHaveLength(50_000);
    expect(evs.at(-1)?.data).toBe('[DONE]');
  });
});

describe('responses and messages wire formats', () => {
  it('responses: event names equal types, sequence numbers from 0, incomplete on max_output_tokens', async () => {
    const sim = await useSim();
    const input = [{ role: 'user', content: [{ type: 'input_text', text: 'a b c' }] }];
    const r = await post(sim, '/v1/responses', { model: 'chat-3.7-plus', input, stream: true });
    const evs = await events(r.text);
    const parsed = evs.map((e) => JSON.parse(e.data) as { type: string; sequence_number: number });
    expect(evs.every((e, i) => e.event === parsed[i]?.type)).toBe(true);
    expect(parsed.map((p) => p.sequence_number)).toEqual(parsed.map((_, i) => i));
    expect(r.text).not.toContain('[DONE]');
    const cut = await post(sim, '/v1/responses', { model: 'chat-3.7-plus', input, max_output_tokens: 1 });
    expect(cut.json).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
  });

  it('messages: event lines, a ping, cumulative message_delta usage, message_stop last', async () => {
    const sim = await useSim();
    const r = await post(sim, '/v1/messages', {
      model: 'chat-3.7-plus',
      max_tokens: 50,
      stream: true,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    const evs = await events(r.text);
    expect(evs.map((e) => e.event)).toContain('ping');
    expect(evs.every((e) => e.event === (JSON.parse(e.data) as { type: string }).type)).toBe(true);
    expect(evs.at(-1)?.event).toBe('message_stop');
    const delta = JSON.parse(evs.find((e) => e.event === 'message_delta')?.data ?? '{}') as {
      usage: { output_tokens: number };
    };
    expect(delta.usage.output_tokens).toBe(4);
  });
});

describe('embeddings', () => {
  it('floats by default, base64 little-endian float32 on request, dimensions honoured', async () => {
    const sim = await useSim();
    const f = await post(sim, '/v1/embeddings', { model: 'text-embedding-v4', input: ['q'], dimensions: 8 });
    const b = await post(sim, '/v1/embeddings', {
      model: 'text-embedding-v4',
      input: ['q'],
      dimensions: 8,
      encoding_format: 'base64',
    });
    const fv = (f.json.data as Array<{ embedding: number[] }>)[0]?.embedding;
    expect(fv).toEqual(embeddingVector('q', 8));
    expect((b.json.data as Array<{ embedding: string }>)[0]?.embedding).toBe(base64Floats(fv ?? []));
    expect(Math.hypot(...(fv ?? []))).toBeCloseTo(1, 5);
    expect(f.json.usage).toMatchObject({ prompt_tokens: 1, total_tokens: 1 });
  });
});

describe('images', () => {
  it('b64_json is a real PNG of the size asked; very large sizes are drawn scaled down', async () => {
    const sim = await useSim();
    const r = await post(sim, '/v1/images/generations', {
      model: 'image-gen-1',
      prompt: 'p',
      size: '7x3',
      response_format: 'b64_json',
    });
    const png = Buffer.from((r.json.data as Array<{ b64_json: string }>)[0]?.b64_json ?? '', 'base64');
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([7, 3]);
    const big = await post(sim, '/v1/images/generations', {
      model: 'image-gen-1',
      prompt: 'p',
      size: '8192x2048',
      response_format: 'b64_json',
    });
    const bp = Buffer.from((big.json.data as Array<{ b64_json: string }>)[0]?.b64_json ?? '', 'base64');
    expect([bp.readUInt32BE(16), bp.readUInt32BE(20)]).toEqual([4096, 1024]);
    expect(big.json.size).toBe('8192x2048');
  });

  it('edit: "no product" (empty data) for a non-public URL or a non-edit model (common.md §7)', async () => {
    const sim = await useSim();
    const base = { model: 'image-edit-1', prompt: 'p', size: '4x4' };
    const ok = await post(sim, '/v1/images/edits', {
      ...base,
      images: [{ image_url: 'https://example.com/a.png' }],
    });
    expect(ok.json.data).toHaveLength(1);
    for (const body of [
      { ...base, images: [{ image_url: 'http://example.com/a.png' }] },
      {
        ...base,
        images: [{ image_url: 'https://example.com/a.png' }, { image_url: 'https://192.168.0.2/b.png' }],
      },
      { ...base, model: 'image-gen-1', images: [{ image_url: 'https://example.com/a.png' }] },
    ]) {
      const r = await post(sim, '/v1/images/edits', body);
      expect(r.status).toBe(200);
      expect(r.json.data).toEqual([]);
    }
    const bad = await post(sim, '/v1/images/edits', { ...base, images: 'https://example.com/a.png' });
    expect(bad.status).toBe(400);
  });
});

describe('SimReply.sse', () => {
  function fakeReply(): { reply: SimReply; writes: Buffer[] } {
    const writes: Buffer[] = [];
    const res = Object.assign(new EventEmitter(), {
      destroyed: false,
      writeHead: () => res,
      write: (c: string | Buffer) => {
        writes.push(Buffer.from(c));
        return true;
      },
      end: (c?: string | Buffer) => {
        if (c !== undefined && c.length > 0) writes.push(Buffer.from(c));
      },
    });
    const req = { requestId: 'r', query: new URLSearchParams() } as unknown as SimRequest;
    return { reply: new SimReply(req, res as unknown as ServerResponse, [], 0), writes };
  }

  it('splitUtf8 writes a frame in two writes cut inside a multi-byte character', async () => {
    const { reply, writes } = fakeReply();
    await reply.sse(
      [{ data: '{"a":"ok"}' }, { data: JSON.stringify({ t: UTF8_REPLY }), splitUtf8: true }],
      new AbortController().signal,
      {
        coalesceBytes: 1024,
      },
    );
    const cut = writes.findIndex((w) => {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(w);
        return false;
      } catch {
        return true;
      }
    });
    expect(cut).toBeGreaterThanOrEqual(0);
    expect(Buffer.concat(writes).toString('utf8')).toBe(
      `data: {"a":"ok"}\n\ndata: ${JSON.stringify({ t: UTF8_REPLY })}\n\n`,
    );
  });

  it('coalesces frames into few writes when there is no delay', async () => {
    const { reply, writes } = fakeReply();
    const frames = Array.from({ length: 1000 }, (_, i) => ({ data: `{"i":${i}}` }));
    await reply.sse(frames, new AbortController().signal, { coalesceBytes: 4096 });
    expect(writes.length).toBeLessThan(10);
    expect(Buffer.concat(writes).toString().split('\n\n').length - 1).toBe(1000);
  });
});
