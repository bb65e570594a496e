import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { CommandLike } from '../../report/index.js';
import type { loadMergeFlags } from './merge.js';
import { parentFlags } from './shared.js';

/** `gw load merge`. */
export default async function merge(
  ctx: Context,
  opts: Flags<typeof loadMergeFlags>,
  paths: string[],
): Promise<void> {
  const htmlFile = opts.html ?? parentFlags(ctx).html;
  const html = htmlFile !== undefined ? await import('../../report/index.js') : undefined;
  const cmd = (ctx.command?.parent ?? ctx.command) as CommandLike;
  const write = html?.htmlReport(htmlFile as string, cmd, html.loadHtml, ctx.redactor);
  const { readReport, printReport } = await import('../../load/run.js');
  const { mergeReports } = await import('../../load/merge.js');
  const { checkReportPath, writeReportFile } = await import('../../report/output.js');
  const out = opts.out ?? parentFlags(ctx).out;
  if (out !== undefined) checkReportPath(out, 'out');
  const merged = mergeReports(paths.map((path) => ({ path, report: readReport(path, 'run.json') })));
  if (out !== undefined) await writeReportFile(out, `${JSON.stringify(merged)}\n`, 'the merged report');
  await write?.(merged, merged.target);
  await ctx.out.result(merged, (m) => printReport(ctx, m));
}
