import { describe, expect, it } from 'vitest';
import { amountText, totalsText } from '../../../src/contract/money.js';
import { PriceTable, pricesSchema, producedOf } from '../../../src/contract/prices.js';
import { tokensOf } from '../../../src/contract/usage.js';

const table = new PriceTable(
  pricesSchema.parse({
    currency: 'USD',
    models: {
      t: { input_per_million: 1, output_per_million: 40, cached_per_million: 0.5 },
      img: { per_image: 0.04 },
      v: { per_video_second: 0.9, currency: 'CNY' },
      both: { per_image: 0.04, output_per_million: 30 },
    },
  }),
);

describe('prices', () => {
  it('prices the tokens of chat, responses and messages usage, cached ones at their own rate', () => {
    const price = (usage: object) => table.spend('t', producedOf('/v1/chat/completions', { usage }))?.amount;
    // chat: 40 uncached at 1, 60 cached at 0.5, 5 out at 40 (per million).
    expect(
      price({ prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 60 } }),
    ).toBe((40 + 30 + 200) / 1e6);
    // responses: 6 + 4 × 0.5 + 2 × 40.
    expect(price({ input_tokens: 10, output_tokens: 2, input_tokens_details: { cached_tokens: 4 } })).toBe(
      (6 + 2 + 80) / 1e6,
    );
    // messages: 40 in all (the gateway's input_tokens is the total), 30 of them read at the cached rate, 2 out.
    expect(
      price({
        input_tokens: 40,
        output_tokens: 2,
        cache_read_input_tokens: 30,
        cache_creation_input_tokens: 5,
      }),
    ).toBe((10 + 15 + 80) / 1e6);
    // No input figure: nothing to price from.
    expect(price({ output_tokens: 2 })).toBeUndefined();
  });

  it('prices usage, images and video seconds; a model not in the file has no spend', () => {
    const u = {
      prompt_tokens: 1_000_000,
      completion_tokens: 1000,
      prompt_tokens_details: { cached_tokens: 500_000 },
    };
    expect(table.spend('t', { tokens: tokensOf(u) })).toEqual({ currency: 'USD', amount: 0.5 + 0.25 + 0.04 });
    expect(table.spend('img', { images: 3 })).toEqual({ currency: 'USD', amount: 0.12 });
    expect(table.spend('v', { videoSeconds: 5 })).toEqual({ currency: 'CNY', amount: 4.5 });
    expect(table.spend('other', { tokens: tokensOf(u) })).toBeUndefined();
    expect(table.spend('toString', { tokens: tokensOf(u) })).toBeUndefined();
  });

  it('bounds a request by its bytes and output limit; without a limit there is no bound', () => {
    const body = { model: 't', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 };
    const bytes = Buffer.byteLength(JSON.stringify(body));
    expect(table.bound('/v1/chat/completions', body)).toMatchObject({
      currency: 'USD',
      amount: Math.ceil(((bytes * 1 + 100 * 40) / 1e6) * 1e6) / 1e6,
    });
    expect(table.bound('/v1/chat/completions', { model: 't', messages: [] })).toMatchObject({
      reason: expect.stringMatching(/no max_tokens/) as unknown,
    });
    expect(table.bound('/v1/images/generations', { model: 'img', n: 2 })).toMatchObject({ amount: 0.08 });
    expect(table.bound('/v1/chat/completions', { model: 'x', max_tokens: 1 })).toBeUndefined();
  });

  it('bounds videos by seconds; media inputs and image token rates have no bound', () => {
    expect(table.bound('/v1/videos', { model: 'v', seconds: 4 })).toMatchObject({
      currency: 'CNY',
      amount: 3.6,
    });
    expect(table.bound('/v1/videos', { model: 'v' })).toMatchObject({
      reason: expect.stringMatching(/seconds not given/) as unknown,
    });
    const image = { type: 'image_url', image_url: { url: 'https://x/a.png' } };
    const vision = { model: 't', max_tokens: 10, messages: [{ role: 'user', content: [image] }] };
    expect(table.bound('/v1/chat/completions', vision)).toMatchObject({
      reason: expect.stringMatching(/image, audio or file inputs/) as unknown,
    });
    expect(table.bound('/v1/images/generations', { model: 'both', n: 1 })).toMatchObject({
      reason: expect.stringMatching(/per token/) as unknown,
    });
  });

  it('reads what an answer produced: usage, images, video seconds', () => {
    expect(producedOf('/v1/images/generations', { data: [{}, {}] })).toEqual({ images: 2 });
    expect(producedOf('/v1/videos', { seconds: '5' })).toEqual({ videoSeconds: 5 });
    expect(producedOf('/v1/embeddings', { usage: { prompt_tokens: 3 } })).toEqual({
      tokens: { input: 3 },
    });
    expect(producedOf('/v1/chat/completions', {})).toEqual({});
  });

  it('shows cents, or a millionth when an amount has more', () => {
    expect(amountText(3.6)).toBe('3.60');
    expect(amountText(0.1 + 0.2)).toBe('0.30');
    expect(amountText(0.000267)).toBe('0.000267');
    expect(totalsText({ CNY: 3.6, USD: 0.0001 })).toBe('CNY 3.60 + USD 0.0001');
    expect(totalsText({})).toBe('—');
  });
});
