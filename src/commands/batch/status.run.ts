import { totalsText } from '../../contract/money.js';
import { UsageError } from '../../core/errors.js';
import { type StatusDoc, batchStatus } from '../../batch/status.js';
import type { CommandLike } from '../../report/index.js';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { batchStatusFlags } from './status.js';

/** Counts, spend and what is in doubt of a batch directory. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchStatusFlags>,
  dir: string,
): Promise<number> {
  const command = ctx.command as CommandLike;
  const html = opts.html !== undefined ? await import('../../report/index.js') : undefined;
  const writeHtml = html?.htmlReport(opts.html as string, command, html.batchHtml, ctx.redactor);
  const doc = await batchStatus(dir, ctx.out.opts.json || writeHtml !== undefined);
  if (doc === undefined) {
    throw new UsageError(`${dir} is not a batch directory (no state.jsonl)`, { field: 'dir' });
  }
  // The state log does not record the gateway: the report names the one configured now.
  await writeHtml?.(doc, ctx.settings().baseUrl ?? 'not configured');
  await ctx.out.result(doc, () => human(ctx, doc, dir));
  return 0;
}

/** The shard a directory holds, or what a merge joined and what it lacks. */
function shardRows(doc: StatusDoc): Array<[string, string]> {
  const run = (r: string | null): string => (r !== null ? ` of run ${r}` : '');
  if (doc.merge !== undefined) {
    const m = doc.merge;
    return [
      ['merged shards', `${m.merged.join(', ') || 'none'}${run(m.run)}`],
      ['missing shards', m.missing.length > 0 ? m.missing.join(', ') : 'none'],
    ];
  }
  return doc.shard !== undefined ? [['shard', `${doc.shard.shard}${run(doc.shard.run)}`]] : [];
}

async function human(ctx: Context, doc: StatusDoc, dir: string): Promise<void> {
  const c = doc.counts;
  ctx.out.keyValue([
    ['items', c.total],
    ['succeeded', c.succeeded],
    ['failed', c.failed],
    ['in doubt', c.in_doubt],
    ['running', c.running],
    ['of them unfinished', c.unfinished],
    ['sending', c.sending],
    ['estimated spend', totalsText(doc.spend.estimated)],
    ['implied by usage', totalsText(doc.spend.implied_by_usage)],
    ['last run', doc.finished ? 'finished' : 'stopped before its end (run the same command again)'],
    ...shardRows(doc),
  ]);
  const codes = Object.entries(doc.failures_by_code);
  if (codes.length > 0) {
    ctx.out.line('');
    await ctx.out.table(['failure code', 'items'], codes);
  }
  if (doc.in_doubt.length > 0) {
    ctx.out.line('');
    ctx.out.line(`in doubt (not resent; gw batch retry ${dir} --in-doubt resends them):`);
    for (const id of doc.in_doubt.slice(0, 50)) ctx.out.line(`  ${id}`);
    if (doc.in_doubt.length > 50) ctx.out.line(`  … and ${doc.in_doubt.length - 50} more`);
  }
}
