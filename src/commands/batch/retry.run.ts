import { UsageError } from '../../core/errors.js';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { batchRetryFlags } from './retry.js';

/** Re-runs the chosen items of a batch. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchRetryFlags>,
  dir: string,
): Promise<number> {
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
}
