import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { LoadFlags } from '../../load/options.js';
import type { loadFlags } from './index.js';
import { commandOf } from './shared.js';

/** `gw load`. */
export default async function load(ctx: Context, parsed: Flags<typeof loadFlags>): Promise<number | void> {
  // The schema leaves absent flags out (never `key: undefined`), which is what LoadFlags means.
  const flags = parsed as LoadFlags;
  const html = flags.html !== undefined ? await import('../../report/index.js') : undefined;
  if (flags.api === 'video') {
    const { runVideoLoad, parseVideoFlags } = await import('../../load/video.js');
    // Flags first (exit 2 on a bad one), then the report's path: both before the first paid create.
    const spec = parseVideoFlags(flags);
    const write = html?.htmlReport(flags.html as string, commandOf(ctx), html.loadHtml, ctx.redactor);
    return runVideoLoad(ctx, spec, write && ((r) => write(r, r.target)));
  }
  const { parseLoadFlags } = await import('../../load/options.js');
  const spec = parseLoadFlags(flags);
  const { runLoad } = await import('../../load/run.js');
  const write = html?.htmlReport(flags.html as string, commandOf(ctx), html.loadHtml, ctx.redactor);
  return runLoad(ctx, spec, write && ((r) => write(r, r.target)));
}
