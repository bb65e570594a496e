import { maskUserinfo } from '../../client/base-url.js';
import { showHeader } from '../../core/headers.js';
import { redactToken } from '../../ui/redact.js';
import type { Context } from '../../cli/context.js';

/** `gw config list`. */
export default async function list(ctx: Context): Promise<void> {
  const store = ctx.config();
  const rows = Object.entries(store.profiles).map(([name, p]) => ({
    profile: name,
    current: name === store.current,
    baseUrl: p.baseUrl !== undefined ? maskUserinfo(p.baseUrl) : undefined,
    token: p.token !== undefined ? redactToken(p.token) : undefined,
    timeout: p.timeout,
    probe: p.probe,
    headers: Object.entries(p.headers ?? {}).map(([name, value]) => showHeader({ name, value })),
  }));
  await ctx.out.result({ path: store.path, current: store.current, profiles: rows }, (d) =>
    ctx.out.table(
      ['profile', 'current', 'baseUrl', 'token', 'timeout', 'headers'],
      d.profiles.map((r) => [
        r.profile,
        r.current ? '*' : '',
        r.baseUrl,
        r.token,
        r.timeout,
        r.headers.join('\n'),
      ]),
    ),
  );
}
