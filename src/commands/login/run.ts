import { UsageError } from '../../core/errors.js';
import { readToken } from '../config/profile.js';
import type { Context } from '../../cli/context.js';
import type { loginFlags } from './index.js';
import type { Flags } from '../../cli/verb.js';
import { normalizeBaseUrl, BaseUrlError } from '../../client/base-url.js';
import * as models from '../../client/resources/models.js';
import { AuthenticationError, PermissionDeniedError } from '../../client/errors.js';

/** Logs in: base URL and token (asked on a terminal), checked with GET /v1/models, saved as the profile. */
export default async function run(ctx: Context, opts: Flags<typeof loginFlags>): Promise<void> {
  ctx.creatingProfile = true;
  const store = ctx.config();
  const profileName = ctx.globals.profile ?? (ctx.io.env.GW_PROFILE || undefined) ?? store.current;
  const existing = store.profile(profileName);
  let baseUrl = ctx.globals.baseUrl;
  if (!ctx.interactive && (baseUrl === undefined || opts.tokenStdin !== true)) {
    throw new UsageError(
      'login: no terminal to ask on; log in non-interactively with\n  printf %s "$TOKEN" | gw login --base-url <url> --token-stdin\nor set GW_BASE_URL and GW_TOKEN',
      { field: 'login' },
    );
  }
  if (baseUrl === undefined) {
    const { input } = await ctx.prompts();
    baseUrl = await input(
      {
        message: 'Gateway base URL (without /v1)',
        ...(existing.baseUrl !== undefined ? { default: existing.baseUrl } : {}),
        validate: (v) => (/^https?:\/\/\S+$/.test(v.trim()) ? true : 'enter an http(s) URL'),
      },
      { input: ctx.io.stdin, output: ctx.io.stderr },
    );
  }
  baseUrl = normalizedBaseUrl(baseUrl);
  const { token, models } = await checkedToken(ctx, baseUrl, opts.tokenStdin === true);
  if ((ctx.io.env.GW_TOKEN ?? '') !== '') {
    ctx.out.warn(
      'GW_TOKEN is set in the environment and overrides the saved token; unset it to use this login',
    );
  }
  store.saveProfile(profileName, { ...existing, baseUrl, token });
  store.use(profileName);
  ctx.out.note(`logged in: profile "${profileName}" sees ${models} models (saved to ${store.path})`);
}

/** Tries a token this many times at a prompt before the refusal is the answer (exit 3). */
const PROMPT_TRIES = 3;

/**
 * Reads the token and checks it with GET /v1/models; returns it with the number of models it sees. At a prompt, a
 * token the gateway refuses (401, 403) is asked for again, as a typo deserves; from standard input it is exit 3.
 */
async function checkedToken(
  ctx: Context,
  baseUrl: string,
  fromStdin: boolean,
): Promise<{ token: string; models: number }> {
  for (let attempt = 1; ; attempt++) {
    const token = await readToken(ctx, fromStdin);
    try {
      const res = await models.list(await ctx.client({ baseUrl, tokenValue: token }), { signal: ctx.signal });
      return { token, models: res.data.data.length };
    } catch (e) {
      const refused = e instanceof AuthenticationError || e instanceof PermissionDeniedError;
      if (!refused || fromStdin || attempt >= PROMPT_TRIES) throw e;
      ctx.out.warn(
        `the gateway refused this token (${e.status} ${e.code}); enter it again, or Ctrl-C to stop`,
      );
    }
  }
}

/** The base URL as every other place stores it (one trailing /v1 and slashes dropped); a bad one is exit 2. */
function normalizedBaseUrl(text: string): string {
  try {
    return normalizeBaseUrl(text);
  } catch (e) {
    if (e instanceof BaseUrlError) throw new UsageError(`base-url: ${e.message}`, { field: 'base-url' });
    throw e;
  }
}
