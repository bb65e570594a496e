/** What the `gw config` verbs share: the token prompt and the profile a verb acts on. */
import { UsageError } from '../../core/errors.js';
import { readAll } from '../../ui/io.js';
import type { Context } from '../../cli/context.js';

/** The environment variable that overrides a config key, if any. */
export const ENV_OF: Partial<Record<string, string>> = {
  baseUrl: 'GW_BASE_URL',
  token: 'GW_TOKEN',
  timeout: 'GW_TIMEOUT',
};

/** Reads a token from stdin (`--token-stdin`) or, on a TTY, from a hidden prompt. */
export async function readToken(ctx: Context, fromStdin: boolean): Promise<string> {
  let token: string;
  if (fromStdin) token = (await readAll(ctx.io.stdin, ctx.signal)).trim();
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

/** The profile a verb acts on: --profile, then GW_PROFILE, then the current one. */
export function profileOf(ctx: Context, current: string): string {
  return ctx.globals.profile ?? (ctx.io.env.GW_PROFILE || undefined) ?? current;
}
