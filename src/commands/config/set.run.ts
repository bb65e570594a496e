import { assertConfigKey, headerKey, type ConfigStore } from '../../core/config.js';
import { UsageError } from '../../core/errors.js';
import { checkHeader, checkOverride, showHeader } from '../../core/headers.js';
import { readAll } from '../../ui/io.js';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import { profileOf, readToken } from './profile.js';
import type { configSetFlags } from './set.js';
import { normalizeBaseUrl, BaseUrlError } from '../../client/base-url.js';
import { parseDuration } from '../../core/duration.js';

/** `gw config set`. */
export default async function set(
  ctx: Context,
  opts: Flags<typeof configSetFlags>,
  key: string,
  value: string | undefined,
): Promise<void> {
  assertConfigKey(key);
  const store = ctx.config();
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
  } else if (headerKey(key) !== undefined) {
    await setHeader(ctx, store, profile, headerKey(key) ?? '', value);
    return;
  } else {
    if (value === undefined) throw new UsageError(`value: missing value for ${key}`, { field: 'value' });
    let stored = value;
    if (key === 'baseUrl') {
      try {
        stored = normalizeBaseUrl(value);
      } catch (e) {
        if (e instanceof BaseUrlError) throw new UsageError(`baseUrl: ${e.message}`, { field: 'baseUrl' });
        throw e;
      }
    }
    if (key === 'timeout') parseDuration(value, 'timeout');
    store.set(profile, key, stored);
  }
  ctx.out.note(`${key} saved in profile "${profile}" (${store.path})`);
}

/**
 * `gw config set headers.<Name> <value>`; `-` reads the value from standard input (a secret header stays out of
 * shell history). A header gw sets itself needs --header-override here, as on the command line.
 */
async function setHeader(
  ctx: Context,
  store: ConfigStore,
  profile: string,
  name: string,
  given: string | undefined,
): Promise<void> {
  if (given === undefined) {
    throw new UsageError(`value: missing value for headers.${name} (- reads it from standard input)`, {
      field: 'value',
    });
  }
  const value = given === '-' ? (await readAll(ctx.io.stdin, ctx.signal)).trim() : given.trim();
  checkHeader(name, value, 'value');
  checkOverride([{ name, value }], {
    override: ctx.globals.headerOverride === true,
    body: false,
    from: () => `headers.${name}`,
  });
  store.set(profile, `headers.${name}`, value);
  ctx.out.note(`${showHeader({ name, value })} saved in profile "${profile}" (${store.path})`);
}
