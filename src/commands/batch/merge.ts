import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const batchMergeFlags = z.object({
  out: flag(z.string(), { flag: '--out <dir>', help: 'the merged directory' }),
});

/** `gw batch merge <dir>... --out <dir>`. */
export const batchMergeVerb = defineVerb<typeof batchMergeFlags, [string[]]>({
  name: 'merge',
  description: 'join the outputs of sharded runs into one batch directory',
  args: [{ name: '<dirs...>', help: 'batch directories (e.g. one per --shard)' }],
  flags: batchMergeFlags,
  notes: `Each custom_id appears once in the merged results.jsonl (a success wins over a failure in another directory);
errors.jsonl keeps the items that failed everywhere; files are copied under <out>/files/; the state logs are joined
so gw batch status <out> covers the whole batch. Prints the merged directory (--json: {out, results, errors,
duplicates}).`,
  examples: [
    `for k in 1 2 3; do gw batch run jobs.jsonl --out "part$k" --shard "$k/3"; done`,
    `gw batch merge part1 part2 part3 --out all && gw batch status all`,
  ],
  handler: () => import('./merge.run.js'),
});

export function mergeCommand(rt: Runtime): Command {
  return verbCommand(batchMergeVerb, rt);
}
