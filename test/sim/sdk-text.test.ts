/**
 * The official SDKs as third-party peers of the simulator (issue 3): if they cannot talk to `gw sim`, the simulator
 * is wrong. openai: baseURL = sim + '/v1'; @anthropic-ai/sdk: baseURL = sim, Bearer via `authToken` (common.md §1).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { EMBEDDING_DIMS, embeddingVector } from '../../src/sim/routes/text.js';
import { PNG_SIGNATURE } from '../../src/sim/png.js';
import { useSim } from '../helpers/sim.js';

async function openai(): Promise<{ client: OpenAI; sim: Awaited<ReturnType<typeof useSim>> }> {
  const sim = await useSim();
  return {
    sim,
    client: new OpenAI({ baseURL: `${sim.baseUrl}/v1`, apiKey: DEFAULT_SIM_TOKEN, maxRetries: 0 }),
  };
}

async function anthropic(): Promise<{ client: Anthropic; sim: Awaited<ReturnType<typeof useSim>> }> {
  const sim = await useSim();
  return {
    sim,
    client: new Anthropic({
      baseURL: sim.baseUrl,
      authToken: DEFAULT_SIM_TOKEN,
      apiKey: null,
      maxRetries: 0,
    }),
  };
}

describe('openai SDK against gw sim', () => {
  it('lists models', async () => {
    const { client } = await openai();
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toContain('chat-3.7-plus');
    expect(ids).toContain('text-embedding-v4');
  });

  it('chat: plain', async () => {
    const { client, sim } = await openai();
    const r = await client.chat.completions.create({
      model: 'chat-3.7-plus',
      messages: [{ role: 'user', content: 'hello sdk' }],
    });
    expect(r.choices[0]?.message.content).toBe('Simulated reply to: hello sdk');
    expect(r.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(sim.requests[0]?.headers.authorization).toBe(`Bearer ${DEFAULT_SIM_TOKEN}`);
  });

  it('chat: stream with usage, and the stream helper', async () => {
    const { client } = await openai();
    const stream = await client.chat.completions.create({
      model: 'chat-3.7-plus',
      messages: [{ role: 'user', content: 'stream me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Simulated reply to: stream me');
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(5);

    const helper = client.chat.completions.stream({
      model: 'chat-3.7-plus',
      messages: [{ role: 'user', content: 'héllo [sim:utf8]' }],
    });
    const final = await helper.finalChatCompletion();
    expect(final.choices[0]?.message.content).toBe('héllo 世界 🦊');
  });

  it('chat: an error frame mid-stream is raised as an API error', async () => {
    const { client } = await openai();
    const stream = await client.chat.completions.create({
      model: 'chat-3.7-plus',
      messages: [{ role: 'user', content: 'break [sim:error]' }],
      stream: true,
    });
    await expect(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    ).rejects.toThrow(/upstream stream failed/);
  });

  it('chat: model_not_found is a 404 NotFoundError with the common error body', async () => {
    const { client } = await openai();
    const err = await client.chat.completions
      .create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const e = err as InstanceType<typeof OpenAI.NotFoundError>;
    expect(e.code).toBe('model_not_found');
    expect(e.message).toMatch(/\(req-sim-[0-9a-z]+\)/);
  });

  it('responses: plain and stream', async () => {
    const { client } = await openai();
    const input: OpenAI.Responses.ResponseInput = [
      { role: 'user', content: [{ type: 'input_text', text: 'resp test' }] },
    ];
    const r = await client.responses.create({ model: 'chat-3.7-plus', input });
    expect(r.output_text).toBe('Simulated reply to: resp test');
    expect(r.usage?.input_tokens).toBeGreaterThan(0);

    const s = await client.responses.create({ model: 'chat-3.7-plus', input, stream: true });
    const types: string[] = [];
    let text = '';
    for await (const ev of s) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
    expect(text).toBe('Simulated reply to: resp test');
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');

    const helper = client.responses.stream({ model: 'chat-3.7-plus', input });
    const final = await helper.finalResponse();
    expect(final.output_text).toBe('Simulated reply to: resp test');
  });

  it('embeddings: float and base64 (the SDK default)', async () => {
    const { client, sim } = await openai();
    const f = await client.embeddings.create({
      model: 'text-embedding-v4',
      input: ['alpha'],
      encoding_format: 'float',
    });
    const b = await client.embeddings.create({ model: 'text-embedding-v4', input: ['alpha', 'beta'] });
    expect((sim.requests[1]?.body as { encoding_format?: string }).encoding_format).toBe('base64');
    expect(f.data[0]?.embedding).toHaveLength(EMBEDDING_DIMS);
    expect(b.data).toHaveLength(2);
    // The SDK decodes base64 little-endian float32 back to numbers: the same vector as the float answer.
    expect(b.data[0]?.embedding).toEqual(f.data[0]?.embedding);
    expect(b.data[1]?.embedding).toEqual(embeddingVector('beta', EMBEDDING_DIMS));
  });

  it('images: generation as url and as b64_json', async () => {
    const { client } = await openai();
    const u = await client.images.generate({ model: 'image-gen-1', prompt: 'a fox', size: '1024x1024' });
    const url = u.data?.[0]?.url ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/.+\.png$/);
    const png = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);

    const b = await client.images.generate({
      model: 'image-gen-1',
      prompt: 'a fox',
      size: '16x8',
      n: 2,
      response_format: 'b64_json',
    });
    expect(b.data).toHaveLength(2);
    const bytes = Buffer.from(b.data?.[0]?.b64_json ?? '', 'base64');
    expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(bytes.readUInt32BE(16)).toBe(16);
    expect(bytes.readUInt32BE(20)).toBe(8);
  });
});

describe('@anthropic-ai/sdk against gw sim', () => {
  it('messages: plain, with Bearer auth and the /v1/messages path', async () => {
    const { client, sim } = await anthropic();
    const m = await client.messages.create({
      model: 'chat-3.7-plus',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi claude-style' }],
    });
    expect(m.content[0]).toMatchObject({ type: 'text', text: 'Simulated reply to: hi claude-style' });
    expect(m.usage.input_tokens).toBeGreaterThan(0);
    expect(sim.requests[0]?.path).toBe('/v1/messages');
    expect(sim.requests[0]?.headers.authorization).toBe(`Bearer ${DEFAULT_SIM_TOKEN}`);
  });

  it('messages: raw stream events and the MessageStream helper', async () => {
    const { client } = await anthropic();
    const raw = await client.messages.create({
      model: 'chat-3.7-plus',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: 'stream it' }],
    });
    const names: string[] = [];
    let text = '';
    for await (const ev of raw) {
      names.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    expect(text).toBe('Simulated reply to: stream it');
    expect(names[0]).toBe('message_start');
    expect(names.at(-1)).toBe('message_stop');

    const helper = client.messages.stream({
      model: 'chat-3.7-plus',
      max_tokens: 64,
      thinking: { type: 'enabled', budget_tokens: 32 },
      messages: [{ role: 'user', content: 'think [sim:utf8]' }],
    });
    const final = await helper.finalMessage();
    expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(await helper.finalText()).toBe('héllo 世界 🦊');
    expect(final.usage.output_tokens).toBe(3);
    expect(final.stop_reason).toBe('end_turn');
  });

  it('messages: an error event mid-stream is thrown', async () => {
    const { client } = await anthropic();
    const helper = client.messages.stream({
      model: 'chat-3.7-plus',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'oops [sim:error]' }],
    });
    await expect(helper.finalMessage()).rejects.toThrow(/upstream stream failed/);
  });
});
