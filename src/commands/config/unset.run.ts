import { assertConfigKey } from '../../core/config.js';
import type { Context } from '../../cli/context.js';
import { profileOf } from './profile.js';

/** `gw config unset`. */
export default function unset(ctx: Context, _opts: unknown, key: string): void {
  assertConfigKey(key);
  const store = ctx.config();
  store.unset(profileOf(ctx, store.current), key);
}
