import type { Context } from '../../../cli/context.js';

/** The model every asset verb uses when `-m` is omitted and the profile has no `defaults.beta`. */
export const ASSET_MODEL_FALLBACK = 'gamma-video-2-0';

/** The model of an asset verb: `-m`, else the profile's `defaults.beta`, else gamma-video-2-0. */
export function assetModel(ctx: Context, given: string | undefined): string {
  return ctx.model(given, 'beta', ASSET_MODEL_FALLBACK);
}

/**
 * The asset id in what a user typed: `asset://ID` (what `upload` prints), `Asset://ID`, or the bare id, so every
 * verb accepts what another prints.
 */
export function assetId(text: string): string {
  return text.trim().replace(/^asset:\/\//i, '');
}
