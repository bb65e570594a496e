import { assertConfigKey } from '../core/config.js';
import { GwError, UsageError } from '../core/errors.js';
import { readAll } from '../ui/io.js';
import { redactToken } from '../ui/redact.js';
import { unknownProfile, type Context } from './context.js';
import type { configSetFlags } from './config.js';
import type { Flags } from './verb.js';

/** The environment variable that overrides a config key, if any. */
const ENV_OF: Partial<Record<string, string>> = {
  baseUrl: 'GW_BASE_URL',
  token: 'GW_TOKEN',
  timeout: 'GW_TIMEOUT',
};

/** Reads a token from stdin (`--token-stdin`) or, on a TTY, from a hidden prompt. */
export async function readToken(ctx: Context, fromStdin: boolean): Promise<string> {
  let token: string;
  if (fromStdin) token = (await readAll(ctx.io.stdin)).trim();
  else if (ctx.interactive) {
    const { password } = await ctx.prompts();
    token = (
      await password({ message: 'Gateway token', mask: '*' }, { input: ctx.io.stdin, output: ctx.io.stderr })
    ).trim();
  } else {
    throw new UsageError('token: pass it on standard input with --token-stdin (never as an argument)', {
      field: 'token',
    });
  }
  if (token === '') throw new UsageError('token: empty token', { field: 'token' });
  ctx.redactor.add(token);
  return token;
}

function profileOf(ctx: Context, current: string): string {
  return ctx.globals.profile ?? (ctx.io.env.GW_PROFILE || undefined) ?? current;
}

/** `gw config set`. */
export async function set(
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
      const { normalizeBaseUrl, BaseUrlError } = await import('../client/base-url.js');
      try {
        stored = normalizeBaseUrl(value);
      } catch (e) {
        if (e instanceof BaseUrlError) throw new UsageError(`baseUrl: ${e.message}`, { field: 'baseUrl' });
        throw e;
      }
    }
    if (key === 'timeout') (await import('../core/duration.js')).parseDuration(value, 'timeout');
    store.set(profile, key, stored);
  }
  ctx.out.note(`${key} saved in profile "${profile}" (${store.path})`);
}

/** `gw config get`. */
export async function get(ctx: Context, _opts: unknown, key: string): Promise<number> {
  assertConfigKey(key);
  const store = await ctx.config();
  const profile = profileOf(ctx, store.current);
  const v = store.get(profile, key);
  const envName = ENV_OF[key];
  const fromEnv = envName !== undefined ? ctx.io.env[envName] || undefined : undefined;
  if (v === undefined) {
    throw new GwError(`${key} is not set in profile "${profile}"`, {
      code: 'not_set',
      hint:
        fromEnv !== undefined
          ? `the value in effect comes from the environment: ${envName}=${key === 'token' ? redactToken(fromEnv) : fromEnv}`
          : `set it with \`gw config set ${key}${key === 'token' ? ' --token-stdin' : ' <value>'}\``,
    });
  }
  if (fromEnv !== undefined && fromEnv !== v) {
    ctx.out.warn(`${envName} is set in the environment and overrides this value`);
  }
  ctx.out.line(key === 'token' ? redactToken(v) : v);
  return 0;
}

/** `gw config list`. */
export async function list(ctx: Context): Promise<void> {
  const store = await ctx.config();
  const rows = Object.entries(store.profiles).map(([name, p]) => ({
    profile: name,
    current: name === store.current,
    baseUrl: p.baseUrl,
    token: p.token !== undefined ? redactToken(p.token) : undefined,
    timeout: p.timeout,
    probe: p.probe,
  }));
  await ctx.out.result({ path: store.path, current: store.current, profiles: rows }, (d) =>
    ctx.out.table(
      ['profile', 'current', 'baseUrl', 'token', 'timeout'],
      d.profiles.map((r) => [r.profile, r.current ? '*' : '', r.baseUrl, r.token, r.timeout]),
    ),
  );
}

/** `gw config use`. */
export async function use(ctx: Context, _opts: unknown, profile: string): Promise<void> {
  const store = await ctx.config();
  if (store.profiles[profile] === undefined) {
    throw unknownProfile(profile, Object.keys(store.profiles), 'config use');
  }
  store.use(profile);
  ctx.out.note(`current profile: ${profile}`);
}

/** `gw config unset`. */
export async function unset(ctx: Context, _opts: unknown, key: string): Promise<void> {
  assertConfigKey(key);
  const store = await ctx.config();
  store.unset(profileOf(ctx, store.current), key);
}
