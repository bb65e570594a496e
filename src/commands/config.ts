import { Command } from 'commander';
import { assertConfigKey, CONFIG_KEYS } from '../core/config.js';
import { GwError, UsageError } from '../core/errors.js';
import { readAll } from '../ui/io.js';
import { redactToken } from '../ui/redact.js';
import { unknownProfile, type Context, type Runtime } from './context.js';

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

/** `gw config set|get|list|use|unset`: profiles stored with conf (mode 0600). */
export default function configCommand(rt: Runtime): Command {
  const config = new Command('config')
    .description(
      'manage profiles: set | get | list | use | unset (file mode 0600; the token is shown redacted)',
    )
    .addHelpText(
      'after',
      `\nKeys: ${CONFIG_KEYS.join(', ')}\n\nExamples:\n  gw config set baseUrl https://gw.example.com\n  printf %s "$TOKEN" | gw config set token --token-stdin\n  gw --profile staging config set baseUrl https://staging.example.com\n  gw config use staging\n  gw config list`,
    );

  config
    .command('set')
    .description('set a key of the profile (the token only via --token-stdin or a hidden prompt)')
    .argument('<key>', 'setting name')
    .argument('[value]', 'value (not for token)')
    .option('--token-stdin', 'read the token from standard input')
    .action(
      rt.action(async (ctx, key: string, value: string | undefined, opts: { tokenStdin?: boolean }) => {
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
          if (value === undefined)
            throw new UsageError(`value: missing value for ${key}`, { field: 'value' });
          let stored = value;
          if (key === 'baseUrl') {
            const { normalizeBaseUrl, BaseUrlError } = await import('../client/base-url.js');
            try {
              stored = normalizeBaseUrl(value);
            } catch (e) {
              if (e instanceof BaseUrlError)
                throw new UsageError(`baseUrl: ${e.message}`, { field: 'baseUrl' });
              throw e;
            }
          }
          if (key === 'timeout') (await import('../core/duration.js')).parseDuration(value, 'timeout');
          store.set(profile, key, stored);
        }
        ctx.out.note(`${key} saved in profile "${profile}" (${store.path})`);
      }),
    );

  config
    .command('get')
    .description('print one key of the profile (the token redacted)')
    .argument('<key>', 'setting name')
    .action(
      rt.action(async (ctx, key: string) => {
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
      }),
    );

  config
    .command('list')
    .description('list profiles (tokens redacted)')
    .action(
      rt.action(async (ctx) => {
        const store = await ctx.config();
        const rows = Object.entries(store.profiles).map(([name, p]) => ({
          profile: name,
          current: name === store.current,
          baseUrl: p.baseUrl,
          token: p.token !== undefined ? redactToken(p.token) : undefined,
          timeout: p.timeout,
          probe: p.probe,
        }));
        if (ctx.globals.json) {
          ctx.out.json({ path: store.path, current: store.current, profiles: rows });
          return;
        }
        await ctx.out.table(
          ['profile', 'current', 'baseUrl', 'token', 'timeout'],
          rows.map((r) => [r.profile, r.current ? '*' : '', r.baseUrl, r.token, r.timeout]),
        );
      }),
    );

  config
    .command('use')
    .description('select the current profile')
    .argument('<profile>', 'profile name')
    .action(
      rt.action(async (ctx, profile: string) => {
        const store = await ctx.config();
        if (store.profiles[profile] === undefined) {
          throw unknownProfile(profile, Object.keys(store.profiles), 'config use');
        }
        store.use(profile);
        ctx.out.note(`current profile: ${profile}`);
      }),
    );

  config
    .command('unset')
    .description('remove a key from the profile')
    .argument('<key>', 'setting name')
    .action(
      rt.action(async (ctx, key: string) => {
        assertConfigKey(key);
        const store = await ctx.config();
        store.unset(profileOf(ctx, store.current), key);
      }),
    );
  return config;
}
