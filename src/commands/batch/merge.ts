import { Command } from 'commander';
import type { Runtime } from '../context.js';

/** `gw batch merge <dir>... --out <dir>`. */
export function mergeCommand(rt: Runtime): Command {
  return new Command('merge')
    .description('join the outputs of sharded runs into one batch directory')
    .argument('<dirs...>', 'batch directories (e.g. one per --shard)')
    .requiredOption('--out <dir>', 'the merged directory')
    .addHelpText(
      'after',
      `
Each custom_id appears once in the merged results.jsonl (a success wins over a failure in another directory);
errors.jsonl keeps the items that failed everywhere; files are copied under <out>/files/; the state logs are joined
so gw batch status <out> covers the whole batch. Prints the merged directory (--json: {out, results, errors,
duplicates}).

Examples:
  for k in 1 2 3; do gw batch run jobs.jsonl --out "part$k" --shard "$k/3"; done
  gw batch merge part1 part2 part3 --out all && gw batch status all`,
    )
    .action(
      rt.action(async (ctx, dirs: string[], opts: { out: string }) => {
        const { mergeBatches } = await import('../../batch/merge.js');
        const r = await mergeBatches(dirs, opts.out);
        if (r.duplicates.length > 0) {
          ctx.out.warn(
            `${r.duplicates.length} custom_id(s) succeeded in more than one directory; the first kept: ${r.duplicates.slice(0, 5).join(', ')}`,
          );
        }
        if (ctx.globals.json) ctx.out.json(r);
        else ctx.out.line(r.out);
        return 0;
      }),
    );
}
