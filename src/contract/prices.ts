/**
 * `--prices <prices.json>` (gw probe, gw load, gw batch): the operator's own prices per model, so spend is on every
 * report and `--budget` covers text, embeddings and images. Spend comes from the `usage` the gateway reports (never
 * a tokenizer); the `--dry-run` bound of a text request counts every byte of its body as an input token (a token
 * is never less than a byte) plus its output limit, so the real spend never passes it. Pure: no I/O.
 */
import * as z from 'zod';
import type { Currency } from './money.js';
import { tokensOf, type Tokens } from './usage.js';

const rate = z.number().nonnegative().finite();
const currency = z.enum(['CNY', 'USD'], { error: 'must be CNY or USD (the currencies --budget takes)' });

const modelPriceSchema = z.strictObject({
  input_per_million: rate.optional(),
  output_per_million: rate.optional(),
  cached_per_million: rate.optional(),
  per_image: rate.optional(),
  per_video_second: rate.optional(),
  currency: currency.optional(),
});

/** The prices file, as CLI.md defines it (a model's own `currency` overrides the file's). */
export const pricesSchema = z.strictObject({
  currency,
  models: z.record(z.string().min(1), modelPriceSchema),
});

export type PricesFile = z.output<typeof pricesSchema>;
export type ModelPrice = z.output<typeof modelPriceSchema>;

/** An amount in a currency. */
export interface Spend {
  currency: Currency;
  amount: number;
}

/** Sums and rounds (to a millionth) spends per currency. */
export function addSpend(into: Partial<Record<Currency, number>>, s: Spend | undefined): void {
  if (s === undefined) return;
  into[s.currency] = Math.round(((into[s.currency] ?? 0) + s.amount) * 1e6) / 1e6;
}

/** `0.000123 USD`. */
export function moneyText(s: Spend): string {
  return `${s.amount} ${s.currency}`;
}

/** `0.0012 USD, 0.3 CNY` (spend per currency), or a 0 that says why. */
export function spendText(total: Partial<Record<string, number>>): string {
  const parts = Object.entries(total).map(([c, a]) => `${a} ${c}`);
  return parts.length > 0 ? parts.join(', ') : '0 (no priced model answered with usage)';
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}
function rec(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

/** What a request's answer reports having produced, to price. */
export interface Produced {
  /** The tokens of its usage (usage.ts tokensOf). */
  tokens?: Tokens | undefined;
  images?: number | undefined;
  videoSeconds?: number | undefined;
}

/** The prices of a file, per model. */
export class PriceTable {
  constructor(readonly file: PricesFile) {}

  /** The model's prices and currency, or undefined when the file does not price it. */
  of(model: string): { price: ModelPrice; currency: Currency } | undefined {
    const price = Object.hasOwn(this.file.models, model) ? this.file.models[model] : undefined;
    return price !== undefined ? { price, currency: price.currency ?? this.file.currency } : undefined;
  }

  /** The spend of what an answer reports (undefined: the model is not priced, or nothing priced was reported). */
  spend(model: string, p: Produced): Spend | undefined {
    const m = this.of(model);
    if (m === undefined) return undefined;
    const { price } = m;
    let amount = 0;
    let priced = false;
    const t = p.tokens;
    // Tokens are priced once the input is known (embeddings report no output); cached ones at their own rate.
    if (
      t?.input !== undefined &&
      (price.input_per_million !== undefined || price.output_per_million !== undefined)
    ) {
      const input = price.input_per_million ?? 0;
      const cached = Math.min(t.cached ?? 0, t.input);
      amount +=
        ((t.input - cached) * input +
          cached * (price.cached_per_million ?? input) +
          (t.output ?? 0) * (price.output_per_million ?? 0)) /
        1e6;
      priced = true;
    }
    if (p.images !== undefined && price.per_image !== undefined) {
      amount += p.images * price.per_image;
      priced = true;
    }
    if (p.videoSeconds !== undefined && price.per_video_second !== undefined) {
      amount += p.videoSeconds * price.per_video_second;
      priced = true;
    }
    return priced ? { currency: m.currency, amount: Math.round(amount * 1e6) / 1e6 } : undefined;
  }

  /**
   * The most a request can cost (`--dry-run`, `--budget`): text and embeddings count each byte of the body as an
   * input token at the dearer of the input and cached rates, plus the output limit (`max_tokens`,
   * `max_completion_tokens`, `max_output_tokens`); images `n` (default 1) per image; videos their `seconds`. A
   * text request without an output limit, or with image, audio or file inputs (billed by the gateway's own count,
   * which no byte count bounds), has no bound: the reason says so.
   */
  bound(
    url: string,
    body: Record<string, unknown>,
  ): (Spend & { basis: string }) | { reason: string } | undefined {
    const model = typeof body.model === 'string' ? body.model : '';
    const m = this.of(model);
    if (m === undefined) return undefined;
    const { price } = m;
    const tokenRated = price.input_per_million !== undefined || price.output_per_million !== undefined;
    if (/\/images\/(generations|edits)$/.test(url) && price.per_image !== undefined) {
      // An image answer's usage is priced too (spend): its tokens have no bound in advance.
      if (tokenRated) return { reason: `${model}: priced per image and per token; the tokens have no bound` };
      const n = num(body.n) ?? 1;
      return { currency: m.currency, amount: n * price.per_image, basis: `${n} image × ${price.per_image}` };
    }
    if (url === '/v1/videos' && price.per_video_second !== undefined) {
      const s = num(body.seconds);
      if (s === undefined)
        return { reason: `${model}: seconds not given, so the video's length has no bound` };
      const amount = Math.ceil(s * price.per_video_second * 1e6) / 1e6;
      return { currency: m.currency, amount, basis: `${s} s × ${price.per_video_second}` };
    }
    if (!tokenRated) return undefined;
    if (hasMediaInput(body)) {
      return { reason: `${model}: image, audio or file inputs are billed by the gateway's own token count` };
    }
    const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
    const inRate = Math.max(price.input_per_million ?? 0, price.cached_per_million ?? 0);
    const embeddings = url.endsWith('/embeddings');
    const limit = embeddings
      ? 0
      : (num(body.max_tokens) ?? num(body.max_completion_tokens) ?? num(body.max_output_tokens));
    if (limit === undefined) {
      return { reason: `${model}: no max_tokens (or max_output_tokens), so its output has no bound` };
    }
    const amount = (bytes * inRate + limit * (price.output_per_million ?? 0)) / 1e6;
    return {
      currency: m.currency,
      amount: Math.ceil(amount * 1e6) / 1e6,
      basis: `≤ ${bytes} input + ${limit} output tokens`,
    };
  }
}

/** Content parts whose tokens the gateway counts its own way (an image URL of 20 bytes may cost 1000 tokens). */
const MEDIA_PARTS = new Set([
  'image_url',
  'input_image',
  'image',
  'input_audio',
  'input_file',
  'file',
  'document',
]);

/** True when the messages or input of a text body hold a media part. */
function hasMediaInput(body: Record<string, unknown>): boolean {
  const turns = [body.messages, body.input].flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : []));
  return turns.some((t) => {
    const parts = rec(t).content;
    const list = Array.isArray(parts) ? (parts as unknown[]) : [t];
    return list.some((p) => MEDIA_PARTS.has(String(rec(p).type)));
  });
}

/**
 * What an answer reports having produced, to price: its `usage` (text, embeddings), the images of an images answer
 * (`data`), the seconds of a finished video task.
 */
export function producedOf(url: string, answer: unknown): Produced {
  const a = rec(answer);
  if (/\/images\/(generations|edits)$/.test(url)) {
    const images = Array.isArray(a.data) ? a.data.length : 0;
    return a.usage !== undefined && a.usage !== null ? { images, tokens: tokensOf(a.usage) } : { images };
  }
  if (url === '/v1/videos') {
    const s = num(Number(a.seconds));
    return s !== undefined ? { videoSeconds: s } : {};
  }
  return a.usage !== undefined && a.usage !== null ? { tokens: tokensOf(a.usage) } : {};
}
