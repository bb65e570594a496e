import type { LoadFlags } from '../load/options.js';
import type { CommandLike } from '../report/index.js';
import type { Context } from './context.js';
import type { loadCompareFlags, loadFlags, loadMergeFlags } from './load.js';
import type { Flags } from './verb.js';

/** The command that runs (reports name their command line). */
function commandOf(ctx: Context): CommandLike {
  return ctx.command as CommandLike;
}

/** The flags of `gw load` itself: `gw load --out x merge …` gives merge's --out before the subcommand's name. */
function parentFlags(ctx: Context): LoadFlags {
  return ctx.command?.parent?.opts<LoadFlags>() ?? {};
}

/** `gw load`. */
export async function load(ctx: Context, parsed: Flags<typeof loadFlags>): Promise<number | void> {
  // The schema leaves absent flags out (never `key: undefined`), which is what LoadFlags means.
  const flags = parsed as LoadFlags;
  const html = flags.html !== undefined ? await import('../report/index.js') : undefined;
  if (flags.api === 'video') {
    const { runVideoLoad, parseVideoFlags } = await import('../load/video.js');
    // Flags first (exit 2 on a bad one), then the report's path: both before the first paid create.
    const spec = parseVideoFlags(flags);
    const write = html?.htmlReport(flags.html as string, commandOf(ctx), html.loadHtml, ctx.redactor);
    return runVideoLoad(ctx, spec, write && ((r) => write(r, r.target)));
  }
  const { parseLoadFlags } = await import('../load/options.js');
  const spec = parseLoadFlags(flags);
  const { runLoad } = await import('../load/run.js');
  const write = html?.htmlReport(flags.html as string, commandOf(ctx), html.loadHtml, ctx.redactor);
  return runLoad(ctx, spec, write && ((r) => write(r, r.target)));
}

/** `gw load merge`. */
export async function merge(
  ctx: Context,
  opts: Flags<typeof loadMergeFlags>,
  paths: string[],
): Promise<void> {
  const htmlFile = opts.html ?? parentFlags(ctx).html;
  const html = htmlFile !== undefined ? await import('../report/index.js') : undefined;
  const cmd = (ctx.command?.parent ?? ctx.command) as CommandLike;
  const write = html?.htmlReport(htmlFile as string, cmd, html.loadHtml, ctx.redactor);
  const { readReport, printReport } = await import('../load/run.js');
  const { mergeReports } = await import('../load/merge.js');
  const { checkReportPath, writeReportFile } = await import('../report/output.js');
  const out = opts.out ?? parentFlags(ctx).out;
  if (out !== undefined) checkReportPath(out, 'out');
  const merged = mergeReports(paths.map((path) => ({ path, report: readReport(path, 'run.json') })));
  if (out !== undefined) await writeReportFile(out, `${JSON.stringify(merged)}\n`, 'the merged report');
  await write?.(merged, merged.target);
  await ctx.out.result(merged, (m) => printReport(ctx, m));
}

/** `gw load compare`. */
export async function compare(
  ctx: Context,
  opts: Flags<typeof loadCompareFlags>,
  basePath: string,
  newPath: string,
): Promise<number> {
  const { readReport } = await import('../load/run.js');
  const { parseTolerance } = await import('../load/options.js');
  const { compareReports, renderComparison } = await import('../load/compare.js');
  const tolerance = parseTolerance(opts.tolerance ?? parentFlags(ctx).tolerance);
  const c = compareReports(readReport(basePath, '<base.json>'), readReport(newPath, '<new.json>'), tolerance);
  await renderComparison(ctx, c);
  return c.pass ? 0 : 1;
}
