import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import { mergeReports } from '../../load/merge.js';
import { checkReportPath, writeReportFile } from '../../report/output.js';
import type { loadMergeFlags } from './merge.js';
import { printReport } from './print.js';
import { readReport } from './reports.js';
import { commandOf } from './shared.js';

/** `gw load merge`. */
export default async function merge(
  ctx: Context,
  opts: Flags<typeof loadMergeFlags>,
  paths: string[],
): Promise<void> {
  const html = opts.html !== undefined ? await import('../../report/index.js') : undefined;
  const cmd = commandOf(ctx).parent ?? commandOf(ctx);
  const write = html?.htmlReport(opts.html as string, cmd, html.loadHtml, ctx.redactor);
  if (opts.out !== undefined) checkReportPath(opts.out, 'out');
  const reports = await Promise.all(
    paths.map(async (path) => ({ path, report: await readReport(path, 'run.json', ctx.signal) })),
  );
  const merged = mergeReports(reports, { allowMissing: opts.allowMissing });
  const missing = merged.shards?.missing ?? [];
  if (missing.length > 0) ctx.out.warn(`merged without shard(s) ${missing.join(', ')} (--allow-missing)`);
  for (const x of merged.shards?.skipped ?? [])
    ctx.out.warn(`shard ${x.shard} is also in ${x.file}: taken once, from the finished or fuller report`);
  if (opts.out !== undefined)
    await writeReportFile(opts.out, `${JSON.stringify(merged)}\n`, 'the merged report');
  await write?.(merged, merged.target);
  await ctx.out.result(merged, (m) => printReport(ctx, m));
}
