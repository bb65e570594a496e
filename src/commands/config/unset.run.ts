import { assertConfigKey } from '../../core/config.js';
import type { Context } from '../../cli/context.js';
import { profileOf } from './profile.js';

/** `gw config unset`. */
export default async function unset(ctx: Context, _opts: unknown, key: string): Promise<void> {
  assertConfigKey(key);
  const store = await ctx.config();
  store.unset(profileOf(ctx, store.current), key);
}
