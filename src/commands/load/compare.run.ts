import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import { compareReports } from '../../load/compare.js';
import type { loadCompareFlags } from './compare.js';
import { DEFAULT_TOLERANCE } from './flags.js';
import { printComparison } from './print.js';
import { readReport } from './reports.js';

/** `gw load compare`. */
export default async function compare(
  ctx: Context,
  opts: Flags<typeof loadCompareFlags>,
  basePath: string,
  newPath: string,
): Promise<number> {
  const base = await readReport(basePath, '<base.json>', ctx.signal);
  const next = await readReport(newPath, '<new.json>', ctx.signal);
  const c = compareReports(base, next, opts.tolerance ?? DEFAULT_TOLERANCE);
  await printComparison(ctx, c);
  return c.pass ? 0 : 1;
}
