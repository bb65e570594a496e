import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConnectionError, ResponseShapeError } from '../../../src/client/errors.js';
import type { StreamResult } from '../../../src/client/gateway-client.js';
import { isPlainChunk } from '../../../src/client/resources/chat.js';
import { END, SKIP, typedStream } from '../../../src/client/resources/typed-stream.js';
import type { SseEvent } from '../../../src/client/sse.js';
import { chatChunkSchema } from '../../../src/contract/text.js';

const RUNS = { seed: 42, numRuns: 300 } as const;

/** A StreamResult whose SSE events arrive in the given groups (one group per network read). */
function fakeStream(groups: string[][]): StreamResult {
  const toEvents = (g: string[]): SseEvent[] => g.map((data) => ({ event: undefined, data, id: undefined }));
  async function* batches(): AsyncGenerator<SseEvent[]> {
    for (const g of groups) yield toEvents(g);
  }
  async function* events(): AsyncGenerator<SseEvent> {
    for (const g of groups) yield* toEvents(g);
  }
  return { status: 200, requestId: 'rid-t', headers: {}, events: events(), batches: batches() };
}

/** A step: `end` ends, `skip` is skipped, `boom` throws, anything else is yielded. */
function step(ev: SseEvent): string | typeof END | typeof SKIP {
  if (ev.data === 'end') return END;
  if (ev.data === 'skip') return SKIP;
  if (ev.data === 'boom') throw new Error('boom');
  return ev.data;
}

async function drain<T>(it: AsyncIterable<T>): Promise<{ got: T[]; error: unknown }> {
  const got: T[] = [];
  try {
    for await (const x of it) got.push(x);
  } catch (error) {
    return { got, error };
  }
  return { got, error: undefined };
}

describe('typedStream', () => {
  it('delivers the values of one read as one batch, skips, and stops at END', async () => {
    const s = typedStream(fakeStream([['a', 'skip', 'b'], ['skip'], ['c', 'end', 'd']]), 'W', 'end', step);
    expect(s.batches).toBeDefined();
    const { got, error } = await drain(s.batches);
    expect(error).toBeUndefined();
    expect(got).toEqual([['a', 'b'], ['c']]);
  });

  it('events flattens the same batches', async () => {
    const s = typedStream(
      fakeStream([
        ['a', 'b'],
        ['c', 'end'],
      ]),
      'W',
      'end',
      step,
    );
    expect((await drain(s.events)).got).toEqual(['a', 'b', 'c']);
  });

  it('delivers the values before a failing event, then throws its error', async () => {
    const s = typedStream(fakeStream([['a'], ['b', 'boom', 'c']]), 'W', 'end', step);
    const { got, error } = await drain(s.events);
    expect(got).toEqual(['a', 'b']);
    expect((error as Error).message).toBe('boom');
  });

  it('strictEnd reads on after the final event: an event there is a ResponseShapeError, silence passes', async () => {
    for (const groups of [[['a', 'end', 'late']], [['a', 'end'], [], ['late']], [['a', 'stop'], ['late']]]) {
      const s = typedStream(fakeStream(groups), 'POST /x', 'end', step, (v) => v === 'stop', {
        strictEnd: true,
      });
      const { got, error } = await drain(s.events);
      expect(got[0]).toBe('a');
      expect(error).toBeInstanceOf(ResponseShapeError);
      expect((error as Error).message).toBe('POST /x: an event after the final event (end): data: late');
    }
    const clean = typedStream(fakeStream([['a', 'end'], []]), 'W', 'end', step, undefined, {
      strictEnd: true,
    });
    expect(await drain(clean.events)).toEqual({ got: ['a'], error: undefined });
    // Without it, what follows the final event is never read.
    const lax = typedStream(fakeStream([['a', 'end', 'late']]), 'W', 'end', step);
    expect(await drain(lax.events)).toEqual({ got: ['a'], error: undefined });
  });

  it('ends after a value that `last` marks final', async () => {
    const s = typedStream(fakeStream([['a', 'stop', 'z']]), 'W', 'stop', step, (v) => v === 'stop');
    expect((await drain(s.events)).got).toEqual(['a', 'stop']);
  });

  it('a stream without its final event is a ConnectionError naming it, after the values it had', async () => {
    const s = typedStream(fakeStream([['a']]), 'POST /x', 'data: [DONE]', step);
    const { got, error } = await drain(s.events);
    expect(got).toEqual(['a']);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(
      /POST \/x: the stream ended before its final event \(data: \[DONE\]\)/,
    );
  });
});

/** Field values of every JSON type (and absent), to build chunk-like values the check must judge like the schema. */
const anyField = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.integer(), { maxLength: 2 }),
);
const maybe = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: anyField });
const record = (fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> =>
  fc.record(fields, { requiredKeys: [] }).map((o) =>
    // fc.record leaves optional keys out; an explicit undefined value never comes from JSON.parse
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)),
  );
const nullishStr = fc.oneof(fc.constant(null), fc.string({ maxLength: 6 }));
const delta = record({
  role: maybe(nullishStr),
  content: maybe(nullishStr),
  refusal: maybe(nullishStr),
  x: anyField,
});
const choice = record({
  index: maybe(fc.nat(3)),
  delta: maybe(delta),
  finish_reason: maybe(nullishStr),
  logprobs: anyField,
});
const chunkLike = record({
  id: maybe(fc.string({ maxLength: 6 })),
  object: maybe(fc.constant('chat.completion.chunk')),
  model: maybe(fc.string({ maxLength: 6 })),
  created: anyField,
  choices: maybe(fc.array(maybe(choice), { maxLength: 3 })),
  usage: fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.constant({ prompt_tokens: 1 }),
    fc.constant({ prompt_tokens: 'x' }),
  ),
});

describe('isPlainChunk (the hot-path subset of chatChunkSchema)', () => {
  it('accepts only what the schema accepts (chunk-like values and arbitrary JSON)', () => {
    fc.assert(
      fc.property(fc.oneof(chunkLike, fc.jsonValue()), (v) => {
        if (isPlainChunk(v)) expect(chatChunkSchema.safeParse(v).success).toBe(true);
      }),
      RUNS,
    );
  });

  it('accepts every schema-valid chunk without usage (the fast path is the usual path)', () => {
    fc.assert(
      fc.property(chunkLike, (v) => {
        const usage = v.usage;
        if (usage === undefined || usage === null)
          expect(isPlainChunk(v)).toBe(chatChunkSchema.safeParse(v).success);
      }),
      RUNS,
    );
  });

  it('accepts the chunks gw sim sends and leaves a usage chunk to the schema', () => {
    const c = {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'chat-3.7-plus',
      choices: [{ index: 0, delta: { content: 'hi' }, logprobs: null, finish_reason: null }],
      usage: null,
    };
    expect(isPlainChunk(c)).toBe(true);
    expect(isPlainChunk({ ...c, choices: [], usage: { prompt_tokens: 1 } })).toBe(false);
    expect(isPlainChunk({ ...c, choices: [{ index: 0, delta: { content: 3 } }] })).toBe(false);
  });
});

// The chat stream's error for a chunk the check rejects is still the schema's readable one.
describe('chat stream chunk errors', () => {
  it('a malformed chunk after good ones in the same read is the ResponseShapeError naming the field', async () => {
    const { stream } = await import('../../../src/client/resources/chat.js');
    const good = '{"choices":[{"index":0,"delta":{"content":"ok"}}]}';
    const bad = '{"choices":[{"index":0,"delta":{"content":7}}]}';
    const s = fakeStream([[good, bad, '[DONE]']]);
    const client = { validate: false, stream: () => Promise.resolve(s) };
    const t = await stream(client as never, {
      model: 'chat-3.7-plus',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { got, error } = await drain(t.events);
    expect(got).toHaveLength(1);
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as ResponseShapeError).message).toMatch(
      /^POST \/v1\/chat\/completions: unexpected answer at choices\[0\]\.delta\.content: /,
    );
    expect((error as ResponseShapeError).requestId).toBe('rid-t');
  });
});
