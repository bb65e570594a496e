import { describe, expect, it } from 'vitest';
import { TraceContext, usageOf } from '../../../src/client/trace.js';

describe('TraceContext', () => {
  it('makes W3C traceparent values: one trace id, a new span id each time, sampled', () => {
    const t = new TraceContext();
    expect(t.traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = new Set(Array.from({ length: 2000 }, () => t.spanId()));
    expect(spans.size).toBe(2000);
    for (const s of spans) expect(s).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
    expect(t.header('00f067aa0ba902b7')).toBe(`00-${t.traceId}-00f067aa0ba902b7-01`);
    expect(new TraceContext().traceId).not.toBe(t.traceId);
  });

  it('takes a given trace id, and refuses one that is not 32 hex digits or is all zeros', () => {
    expect(new TraceContext('4bf92f3577b34da6a3ce929d0e0e4736').traceId).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    for (const bad of ['0'.repeat(32), '4BF92F3577B34DA6A3CE929D0E0E4736', 'abc', `${'a'.repeat(31)}g`]) {
      expect(() => new TraceContext(bad)).toThrow(/trace id/);
    }
  });
});

describe('usageOf', () => {
  it('reads the input and output tokens of every api family, and nothing from what is not usage', () => {
    expect(usageOf({ usage: { prompt_tokens: 3, completion_tokens: 5 } })).toEqual({
      inputTokens: 3,
      outputTokens: 5,
    });
    expect(usageOf({ usage: { input_tokens: 7, output_tokens: 2 } })).toEqual({
      inputTokens: 7,
      outputTokens: 2,
    });
    expect(usageOf({ usage: { prompt_tokens: 4, total_tokens: 4 } })).toEqual({ inputTokens: 4 });
    // Every input token, cached ones included (GenAI conventions): the gateway's input_tokens is that total.
    expect(
      usageOf({
        usage: {
          input_tokens: 40,
          output_tokens: 2,
          cache_read_input_tokens: 30,
          cache_creation_input_tokens: 3,
        },
      }),
    ).toEqual({ inputTokens: 40, cachedInputTokens: 30, outputTokens: 2 });
    expect(
      usageOf({
        usage: { prompt_tokens: 9, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 4 } },
      }),
    ).toEqual({ inputTokens: 9, cachedInputTokens: 4, outputTokens: 1 });
    for (const v of [null, 'x', {}, { usage: null }, { usage: { prompt_tokens: -1, output_tokens: 'a' } }]) {
      expect(usageOf(v)).toEqual({});
    }
  });
});
