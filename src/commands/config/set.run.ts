import { assertConfigKey } from '../../core/config.js';
import { UsageError } from '../../core/errors.js';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import { profileOf, readToken } from './profile.js';
import type { configSetFlags } from './set.js';

/** `gw config set`. */
export default async function set(
  ctx: Context,
  opts: Flags<typeof configSetFlags>,
  key: string,
  value: string | undefined,
): Promise<void> {
  assertConfigKey(key);
  const store = await ctx.config();
  const profile = profileOf(ctx, store.current);
  if (key === 'token') {
    if (value !== undefined) {
      throw new UsageError(
        'token: never pass the token as an argument (it stays in shell history); use --token-stdin',
        {
          field: 'token',
        },
      );
    }
    store.set(profile, 'token', await readToken(ctx, opts.tokenStdin === true));
  } else {
    if (value === undefined) throw new UsageError(`value: missing value for ${key}`, { field: 'value' });
    let stored = value;
    if (key === 'baseUrl') {
      const { normalizeBaseUrl, BaseUrlError } = await import('../../client/base-url.js');
      try {
        stored = normalizeBaseUrl(value);
      } catch (e) {
        if (e instanceof BaseUrlError) throw new UsageError(`baseUrl: ${e.message}`, { field: 'baseUrl' });
        throw e;
      }
    }
    if (key === 'timeout') (await import('../../core/duration.js')).parseDuration(value, 'timeout');
    store.set(profile, key, stored);
  }
  ctx.out.note(`${key} saved in profile "${profile}" (${store.path})`);
}
