import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const batchStatusFlags = z.object({
  html: flag(z.string().optional(), {
    flag: '--html <file>',
    help: 'also write a self-contained HTML report (items over time, spend, failures)',
  }),
});

/** `gw batch status <dir>`. */
export const batchStatusVerb = defineVerb<typeof batchStatusFlags, [string]>({
  name: 'status',
  description: "counts per state, spend so far, what is in doubt (--json: with every item's timeline)",
  args: [{ name: '<dir>', help: 'a batch directory (the --out of gw batch run)' }],
  flags: batchStatusFlags,
  notes: `Spend is shown twice: estimated (list price of what was submitted) and implied by usage (what finished tasks
report: video seconds, beta output tokens at their SKU price). --json prints {dir, runs, counts, spend:
{estimated, implied_by_usage}, spend_over_time, failures_by_code, in_doubt, items: [{custom_id, status, task_id,
events: [[state, epoch_ms], …]}], finished}; counts.unfinished are running items whose last follow was cut (a
download dropped): gw batch run or retry resumes them. Currencies are always in the order CNY, USD. A state log
line gw did not write is exit 2 naming the file and line.`,
  examples: [`gw batch status out/`, `gw batch status out/ --json | jq '.failures_by_code'`],
  handler: () => import('./status.run.js'),
});

export function statusCommand(rt: Runtime): Command {
  return verbCommand(batchStatusVerb, rt);
}
