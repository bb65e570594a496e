import { describe, expect, it } from 'vitest';
import { mergeUsage, tokensOf } from '../../../src/contract/usage.js';

describe('tokensOf: the one reader of usage', () => {
  it('reads chat usage: the cached tokens are inside prompt_tokens', () => {
    expect(
      tokensOf({
        prompt_tokens: 100,
        completion_tokens: 5,
        total_tokens: 105,
        prompt_tokens_details: { cached_tokens: 60, cache_creation_input_tokens: 10 },
      }),
    ).toEqual({ input: 100, cached: 60, output: 5 });
    expect(tokensOf({ prompt_tokens: 7, completion_tokens: 2 })).toEqual({ input: 7, output: 2 });
    // A gateway that adds the messages field to a chat usage still counts it inside prompt_tokens.
    expect(tokensOf({ prompt_tokens: 50, completion_tokens: 1, cache_read_input_tokens: 20 })).toEqual({
      input: 50,
      cached: 20,
      output: 1,
    });
  });

  it('reads responses usage: input_tokens_details.cached_tokens inside input_tokens', () => {
    expect(
      tokensOf({
        input_tokens: 10,
        output_tokens: 2,
        input_tokens_details: { cached_tokens: 4, cache_write_tokens: 1 },
        total_tokens: 12,
      }),
    ).toEqual({ input: 10, cached: 4, output: 2 });
  });

  it("reads messages usage as the gateway's: input_tokens is the total, cache reads and writes inside it", () => {
    expect(
      tokensOf({
        input_tokens: 10,
        output_tokens: 2,
        cache_read_input_tokens: 30,
        cache_creation_input_tokens: 5,
      }),
    ).toEqual({ input: 10, cached: 10, output: 2 });
    expect(tokensOf({ input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: 5 })).toEqual({
      input: 10,
      output: 2,
    });
    // message_delta of the wire format: the output alone.
    expect(tokensOf({ output_tokens: 15 })).toEqual({ output: 15 });
  });

  it('reads embeddings usage: prompt_tokens, or the total when that is all it gives', () => {
    expect(tokensOf({ prompt_tokens: 8, total_tokens: 8 })).toEqual({ input: 8 });
    expect(tokensOf({ total_tokens: 9 })).toEqual({ input: 9 });
    // With output tokens the total is not the input.
    expect(tokensOf({ completion_tokens: 3, total_tokens: 9 })).toEqual({ output: 3 });
  });

  it('reads nothing from what is not a usage, nor from negative or non-numeric figures', () => {
    for (const v of [undefined, null, 'x', 3, [], {}, { prompt_tokens: -1, output_tokens: 'a' }]) {
      expect(tokensOf(v)).toEqual({});
    }
  });
});

describe('mergeUsage', () => {
  it('adds a later report field by field; a null or absent field keeps the earlier value', () => {
    const u: Record<string, unknown> = {};
    mergeUsage(u, { input_tokens: 65, output_tokens: 1, cache_read_input_tokens: 40 });
    mergeUsage(u, { input_tokens: null, output_tokens: 15 });
    expect(tokensOf(u)).toEqual({ input: 65, cached: 40, output: 15 });
    mergeUsage(u, null);
    mergeUsage(u, 'x');
    expect(u).toEqual({ input_tokens: 65, output_tokens: 15, cache_read_input_tokens: 40 });
  });
});
