import { assertConfigKey, headerKey } from '../../core/config.js';
import { maskValue } from '../../core/headers.js';
import { GwError } from '../../core/errors.js';
import { redactToken } from '../../ui/redact.js';
import type { Context } from '../../cli/context.js';
import { ENV_OF, profileOf } from './profile.js';

/** `gw config get`. */
export default function get(ctx: Context, _opts: unknown, key: string): number {
  assertConfigKey(key);
  const store = ctx.config();
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
  // A header's value may be a secret: shown as the token is (`…last4`).
  ctx.out.line(key === 'token' ? redactToken(v) : headerKey(key) !== undefined ? maskValue(v) : v);
  return 0;
}
