import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';
import { waitLockFlag } from './run.js';

export const batchMergeFlags = z.object({
  out: flag(z.string(), { flag: '--out <dir>', help: 'the merged directory (new, or empty)' }),
  force: flag(z.boolean().default(false), {
    flag: '--force',
    help: 'write into a non-empty --out: its results.jsonl, errors.jsonl and state.jsonl are replaced',
  }),
  allowMissing: flag(z.boolean().default(false), {
    flag: '--allow-missing',
    help: 'merge even when shards of the run are missing (--json names them)',
  }),
  waitLock: waitLockFlag,
});

/** `gw batch merge <dir>... --out <dir>`. */
export const batchMergeVerb = defineVerb<typeof batchMergeFlags, [string[]]>({
  name: 'merge',
  description: 'join the outputs of sharded runs into one batch directory',
  args: [{ name: '<dirs...>', help: 'batch directories (e.g. one per --shard)' }],
  flags: batchMergeFlags,
  notes: `The directories must be the shards of one run: the same run (each run records a hash of its input file and
its shard count; an unsharded run is 1/1), or exit 2 naming the two. A shard given by two directories (a scheduler
that ran an index twice, each time into a new directory) is taken once, from the directory with more items done
(then the one written last); the other is named in a warning and under shards.skipped. Missing shards are named
and exit 1 unless --allow-missing; the merged directory records what is missing, and gw batch status <out> says
it. Nothing is trusted: every line is read through its schema (a torn last line is skipped, a damaged line is exit
2 naming the file and line), and a file a result names is taken only from that shard's own files/ by its name,
with the size its line says. All of that is checked before anything is written; the directories' locks are held
meanwhile, so no run writes them. Each custom_id appears once in the merged results.jsonl (a success wins over a
failure in another directory); errors.jsonl keeps the items that failed everywhere; files are copied under
<out>/files/ (paths in results.jsonl are relative to the batch directory); the state logs are joined so
gw batch status <out> covers the whole batch. --out must be new or empty unless --force. Prints the merged
directory (--json: {out, results, errors, duplicates, shards: {run, merged, missing, skipped: [{shard, dir}]}}).`,
  examples: [
    `for k in 1 2 3; do gw batch run jobs.jsonl --out "part$k" --shard "$k/3"; done`,
    `gw batch merge part1 part2 part3 --out all && gw batch status all`,
  ],
  handler: () => import('./merge.run.js'),
});

export function mergeCommand(rt: Runtime): Command {
  return verbCommand(batchMergeVerb, rt);
}
