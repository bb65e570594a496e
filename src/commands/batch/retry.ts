import { Command, Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import type { Runtime } from '../context.js';

/** `gw batch retry <dir> [--failed] [--in-doubt]`. */
export function retryCommand(rt: Runtime): Command {
  return new Command('retry')
    .description('re-run chosen items of a finished or interrupted batch (default --failed)')
    .argument('<dir>', 'a batch directory (the --out of gw batch run)')
    .option('--failed', 'resend the items that failed', false)
    .option(
      '--in-doubt',
      'resend the items whose create may have reached the gateway (may bill twice)',
      false,
    )
    .option('--timeout <dur>', 'stop after this long (exit 4)')
    .addOption(new Option('--no-download', 'do not download the results of video tasks'))
    .addHelpText(
      'after',
      `
Runs the batch again with the input and flags of its last run, after forgetting the chosen items, so they are
sent again; their old lines leave errors.jsonl. Everything else resumes as gw batch run would.

Examples:
  gw batch retry out/ --failed
  gw batch status out/ && gw batch retry out/ --in-doubt`,
    )
    .action(
      rt.action(
        async (
          ctx,
          dir: string,
          opts: { failed: boolean; inDoubt: boolean; timeout?: string; download: boolean },
        ) => {
          const { loadState } = await import('../../batch/state.js');
          const { dropErrorLines } = await import('../../batch/retry.js');
          const { runSession } = await import('../../batch/session.js');
          const state = await loadState(dir);
          const last = state?.runs.at(-1);
          if (state === undefined || last === undefined) {
            throw new UsageError(`${dir} is not a batch directory (no state.jsonl)`, { field: 'dir' });
          }
          const failed = opts.failed || !opts.inDoubt;
          const chosen = [...state.status]
            .filter(([, s]) => (failed && s === 'failed') || (opts.inDoubt && s === 'doubt'))
            .map(([id]) => id);
          await dropErrorLines(dir, new Set(chosen));
          const o = last.opts;
          return runSession(ctx, {
            input: last.input,
            dir,
            flags: {
              out: dir,
              concurrency: String(o?.concurrency ?? 8),
              budget: o?.budgets ?? [],
              allowUnpriced: o?.allowUnpriced ?? false,
              maxAttempts: String(o?.maxAttempts ?? 8),
              shard: o?.shard,
              download: opts.download && (o?.download ?? true),
              timeout: opts.timeout,
            },
            reset: (st) => chosen.filter((id) => st.status.has(id)),
          });
        },
      ),
    );
}
