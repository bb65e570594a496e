import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { batchRetryFlags } from './retry.js';
import { retryBatch } from '../../batch/session.js';
import * as shared from './shared.js';

/** Re-runs the chosen items of a batch. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchRetryFlags>,
  dir: string,
): Promise<number> {
  const timeout = opts.timeout ?? ctx.globals.timeout;
  const clients = shared.clientsOf(ctx);
  const { sinks, stop } = await shared.sinksOf(ctx);
  try {
    const doc = await retryBatch({
      ...sinks,
      out: dir,
      client: clients.source,
      failed: opts.failed,
      inDoubt: opts.inDoubt,
      download: opts.download,
      validate: ctx.globals.validate,
      timeoutMs: ctx.waitLimitMs(opts.timeout),
      waitLock: opts.waitLock,
      signal: ctx.signal,
      journal: shared.journalOf(ctx, clients.baseUrl),
      redact: (t) => ctx.redactor.redact(t),
      resume: (input, rec) =>
        shared.resumeCommand(input, dir, {
          concurrency: rec.concurrency,
          budget: rec.budgets,
          allowUnpriced: rec.allowUnpriced,
          prices: rec.prices?.path,
          maxAttempts: rec.maxAttempts,
          shard: rec.shard,
          download: rec.download,
          timeout,
        }),
    });
    stop();
    return await shared.reportRun(ctx, doc);
  } finally {
    stop();
  }
}
