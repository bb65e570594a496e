import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/errors.js';
import { readTraceLine, traceShard, type TraceItem } from '../../../src/load/trace.js';

const D = { stream: true, maxTokens: 64, validate: true };
const read = (line: unknown, d = D): TraceItem => readTraceLine(JSON.stringify(line), 7, 't.jsonl', d);
const refusal = (line: unknown): string => {
  try {
    readTraceLine(typeof line === 'string' ? line : JSON.stringify(line), 7, 't.jsonl', D);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('accepted');
};
const body = (item: TraceItem): Record<string, unknown> =>
  JSON.parse((item.body as Buffer).toString('utf8')) as Record<string, unknown>;

describe('trace lines', () => {
  it('synthesises bodies from input_words and max_tokens, streamed as the flags say', () => {
    const chat = read({ t_ms: 5, api: 'chat', model: 'chat-3.7-plus', input_words: 4, max_tokens: 9 });
    expect(chat).toMatchObject({ lineNo: 7, tMs: 5, api: 'chat', stream: true, session: undefined });
    const b = body(chat);
    expect(b.max_tokens).toBe(9);
    expect(b.stream_options).toEqual({ include_usage: true });
    expect(((b.messages as Array<{ content: string }>)[0]?.content ?? '').split(' ')).toHaveLength(4);
    const whole = read({ t_ms: 0, api: 'messages', model: 'chat-3.7-plus' }, { ...D, stream: false });
    expect(whole.stream).toBe(false);
    expect(body(whole).max_tokens).toBe(64);
    expect(read({ t_ms: 0, api: 'embeddings', model: 'text-embedding-v4' }).stream).toBe(false);
    const video = read({ t_ms: 0, api: 'video', model: 'clip-1.1-t2v', input_words: 3 });
    expect(video.body).toMatchObject({ model: 'clip-1.1-t2v', seconds: 3 });
    expect(read({ t_ms: 0, api: 'images', model: 'img-2-gen', input_words: 3 }).api).toBe('images');
  });

  it('takes a body whole, with the line model, and its own stream setting; sessions as strings', () => {
    const item = read({
      t_ms: 1.5,
      api: 'chat',
      model: 'chat-3.7-plus',
      session: 42,
      body: { messages: [{ role: 'user', content: 'hi' }], stream: false },
    });
    expect(item.session).toBe('42');
    expect(item.stream).toBe(false);
    expect(body(item)).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      model: 'chat-3.7-plus',
    });
  });

  it('refuses a bad line naming the file, the line and the field', () => {
    expect(refusal('{oops')).toBe('--replay: t.jsonl line 7: (the line): is not JSON');
    expect(refusal({ api: 'chat', model: 'm' })).toMatch(/line 7: t_ms: must be a number/);
    expect(refusal({ t_ms: -1, api: 'chat', model: 'm' })).toMatch(/line 7: t_ms: must be 0 or more/);
    expect(refusal({ t_ms: 0, api: 'fax', model: 'm' })).toMatch(
      /line 7: api: must be one of chat, responses/,
    );
    expect(refusal({ t_ms: 0, api: 'chat', model: '' })).toMatch(/line 7: model: must not be empty/);
    expect(refusal({ t_ms: 0, api: 'chat', model: 'm', extra: 1 })).toMatch(/line 7: .*extra/);
    expect(refusal({ t_ms: 0, api: 'chat', model: 'm', input_words: 1.5 })).toMatch(
      /input_words: must be an integer/,
    );
    expect(refusal({ t_ms: 0, api: 'chat', model: 'm', body: { messages: [] }, max_tokens: 3 })).toMatch(
      /line 7: max_tokens: does not apply when body is given whole/,
    );
    expect(refusal({ t_ms: 0, api: 'chat', model: 'm', body: { model: 'x', messages: [] } })).toMatch(
      /line 7: body\.model: is "x", not the line's model "m"/,
    );
    expect(refusal({ t_ms: 0, api: 'embeddings', model: 'm', max_tokens: 3 })).toMatch(
      /max_tokens: does not apply/,
    );
    expect(refusal({ t_ms: 0, api: 'video', model: 'clip-1.1-t2v', body: { seconds: 99 } })).toMatch(
      /line 7: body\.seconds: must be an integer from/,
    );
  });

  it('checks bodies against the contract only when the client validates', () => {
    const line = { t_ms: 0, api: 'chat', model: 'm', body: { messages: 'hi' } };
    expect(refusal(line)).toMatch(/line 7: body\.messages/);
    expect(read(line, { ...D, validate: false }).api).toBe('chat');
  });
});

describe('trace shards', () => {
  it('puts every turn of a session on one shard, and other lines by index', () => {
    const n = 3;
    for (const s of ['a', 'conv-17', '42', 'ü']) {
      const shards = new Set([0, 1, 5, 99].map((i) => traceShard(s, i, n)));
      expect(shards.size).toBe(1);
      expect([...shards][0]).toBeGreaterThanOrEqual(1);
      expect([...shards][0]).toBeLessThanOrEqual(n);
    }
    expect([0, 1, 2, 3, 4, 5].map((i) => traceShard(undefined, i, n))).toEqual([1, 2, 3, 1, 2, 3]);
    expect(traceShard('a', 5, 1)).toBe(1);
  });

  it('spreads many sessions over every shard, and splits a trace into disjoint parts that cover it', () => {
    const n = 4;
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) {
      const k = traceShard(`s${i}`, i, n) - 1;
      counts[k] = (counts[k] ?? 0) + 1;
    }
    for (const c of counts) expect(c).toBeGreaterThan(800);
    const lines = Array.from({ length: 50 }, (_, i) => ({
      i,
      session: i % 3 === 0 ? `c${i % 7}` : undefined,
    }));
    const parts = [1, 2, 3, 4].map((k) =>
      lines.filter((l) => traceShard(l.session, l.i, n) === k).map((l) => l.i),
    );
    expect(parts.flat().sort((a, b) => a - b)).toEqual(lines.map((l) => l.i));
  });
});
