/**
 * The one price estimator of gw: what a create request will cost at list price, from the contract's price tables
 * (clip-1.1 per second in CNY; the beta SKU table in USD per million tokens). Used by `gw batch` (`--dry-run`,
 * `--budget`, `status`) and by the `--dry-run` of the create commands (`gw video create`, `gw beta task create`,
 * `gw alpha i2v`), which print its details. Pure: no I/O.
 */
import { quoteBetaTask, skuFor, type BetaQuote } from './beta.js';
import { videoListPrice, type VideoListPrice } from './video.js';
import type { Currency } from './money.js';
import { tokensOf } from './usage.js';

export { parseBudget, type Currency } from './money.js';

/** The details behind an estimate, for a create command's `--dry-run` to print. */
export interface EstimateDetail {
  /** `/v1/videos`: the clip-1.1 list price (undefined: the model has none). */
  video?: VideoListPrice | undefined;
  /** Beta tasks: the SKU (or the candidates) and its price per million tokens. */
  beta?: BetaQuote | undefined;
}

/** What one request is expected to cost. */
export type Estimate = (
  | { priced: true; currency: Currency; amount: number; basis: string }
  | { priced: false; reason: string; currency?: Currency | undefined }
) &
  EstimateDetail;

const VIDEOS = '/v1/videos';
const ALPHA_I2V = '/alpha/v1/videos/image2video';
const BETA_TASKS = '/beta/api/v3/contents/generations/tasks';

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The list price of a create request (`url` relative to the base URL), or why it cannot be fixed in advance. */
export function estimateRequest(url: string, body: unknown): Estimate {
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const model = str(b.model) ?? str(b.model_name) ?? '';
  if (url === VIDEOS) {
    const seconds = typeof b.seconds === 'number' ? b.seconds : undefined;
    const price = videoListPrice(model, seconds, str(b.resolution));
    if (price === undefined) {
      return { priced: false, reason: `no list price for ${model || 'this model'}`, video: undefined };
    }
    if (price.amount === undefined) {
      return {
        priced: false,
        video: price,
        currency: 'CNY',
        reason: `seconds not given: the gateway's default length applies (CNY ${price.perSecond.toFixed(2)}/s)`,
      };
    }
    return {
      priced: true,
      currency: 'CNY',
      amount: price.amount,
      basis: `${price.seconds} s × CNY ${price.perSecond.toFixed(2)}/s at ${price.resolution}`,
      video: price,
    };
  }
  if (url === ALPHA_I2V) {
    return { priced: false, reason: 'no list price is published for image-to-video (alpha) tasks' };
  }
  if (url === BETA_TASKS) {
    const beta = quoteBetaTask(b);
    const c = beta.candidates;
    const names = c.map((q) => `${q.sku} ${q.price} USD/M tokens`).join(', ');
    return {
      priced: false,
      currency: 'USD',
      beta,
      reason:
        c.length > 0
          ? `billed by output tokens the request does not fix (${names})`
          : `no SKU for ${model || 'this model'}`,
    };
  }
  return { priced: false, reason: 'billed by usage (tokens or images); no list price in advance' };
}

/** The spend a finished item's own report implies (video seconds, beta usage tokens), where the tables allow. */
export function impliedSpend(
  url: string,
  body: unknown,
  task: Record<string, unknown> | undefined,
): { currency: Currency; amount: number } | undefined {
  if (task === undefined) return undefined;
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (url === VIDEOS) {
    const seconds = Number(task.seconds ?? b.seconds);
    const res = str(task.resolution) ?? str(b.resolution);
    const price = videoListPrice(
      str(b.model) ?? str(task.model) ?? '',
      Number.isFinite(seconds) ? seconds : undefined,
      res,
    );
    return price?.amount !== undefined ? { currency: 'CNY', amount: price.amount } : undefined;
  }
  if (url === BETA_TASKS) {
    const tokens = tokensOf(task.usage).output;
    if (tokens === undefined) return undefined;
    const sku = skuFor({
      ...(b as Parameters<typeof skuFor>[0]),
      ...(str(task.resolution) !== undefined ? { resolution: str(task.resolution) } : {}),
    });
    if (sku === undefined) return undefined;
    return { currency: 'USD', amount: Math.round((tokens / 1e6) * sku.price * 1e6) / 1e6 };
  }
  return undefined;
}
