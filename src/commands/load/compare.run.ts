import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { loadCompareFlags } from './compare.js';
import { parentFlags } from './shared.js';

/** `gw load compare`. */
export default async function compare(
  ctx: Context,
  opts: Flags<typeof loadCompareFlags>,
  basePath: string,
  newPath: string,
): Promise<number> {
  const { readReport } = await import('../../load/run.js');
  const { parseTolerance } = await import('../../load/options.js');
  const { compareReports, renderComparison } = await import('../../load/compare.js');
  const tolerance = parseTolerance(opts.tolerance ?? parentFlags(ctx).tolerance);
  const c = compareReports(readReport(basePath, '<base.json>'), readReport(newPath, '<new.json>'), tolerance);
  await renderComparison(ctx, c);
  return c.pass ? 0 : 1;
}
