import { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import type { Runtime } from '../context.js';

function money(m: Record<string, number | undefined>): string {
  const parts = Object.entries(m).map(([c, a]) => `${c} ${(a ?? 0).toFixed(2)}`);
  return parts.length > 0 ? parts.join(' + ') : '—';
}

/** `gw batch status <dir>`. */
export function statusCommand(rt: Runtime): Command {
  const command: Command = new Command('status')
    .description("counts per state, spend so far, what is in doubt (--json: with every item's timeline)")
    .argument('<dir>', 'a batch directory (the --out of gw batch run)')
    .option('--html <file>', 'also write a self-contained HTML report (items over time, spend, failures)')
    .addHelpText(
      'after',
      `
Spend is shown twice: estimated (list price of what was submitted) and implied by usage (what finished tasks
report: video seconds, beta output tokens at their SKU price). --json prints {dir, runs, counts, spend:
{estimated, implied_by_usage}, spend_over_time, failures_by_code, in_doubt, items: [{custom_id, status, task_id,
events: [[state, epoch_ms], …]}], finished}.

Examples:
  gw batch status out/
  gw batch status out/ --json | jq '.failures_by_code'`,
    )
    .action(
      rt.action(async (ctx, dir: string, opts: { html?: string }) => {
        const html = opts.html !== undefined ? await import('../../report/index.js') : undefined;
        const writeHtml = html?.htmlReport(opts.html as string, command, html.batchHtml, ctx.redactor);
        const { batchStatus } = await import('../../batch/status.js');
        const doc = await batchStatus(dir, ctx.globals.json || writeHtml !== undefined);
        if (doc === undefined) {
          throw new UsageError(`${dir} is not a batch directory (no state.jsonl)`, { field: 'dir' });
        }
        // The state log does not record the gateway: the report names the one configured now.
        await writeHtml?.(doc, ctx.settings().baseUrl ?? 'not configured');
        if (ctx.globals.json) {
          ctx.out.json(doc);
          return 0;
        }
        const c = doc.counts;
        ctx.out.keyValue([
          ['items', c.total],
          ['succeeded', c.succeeded],
          ['failed', c.failed],
          ['in doubt', c.in_doubt],
          ['running', c.running],
          ['sending', c.sending],
          ['estimated spend', money(doc.spend.estimated)],
          ['implied by usage', money(doc.spend.implied_by_usage)],
          ['last run', doc.finished ? 'finished' : 'stopped before its end (run the same command again)'],
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
        return 0;
      }),
    );
  return command;
}
