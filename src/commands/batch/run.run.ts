import { resolve } from 'node:path';
import { totalsText } from '../../contract/money.js';
import { readPrices } from '../shared/prices.js';
import type { BatchPlanDoc } from '../../batch/plan.js';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { batchRunFlags } from './run.js';
import { planBatch } from '../../batch/plan.js';
import { runBatch } from '../../batch/session.js';
import { checkSaveDir } from '../../core/download.js';
import { parseBudgets } from '../../core/budget.js';
import { resolveShard } from '../../core/shard.js';
import * as shared from './shared.js';
import { startOtlp } from '../shared/otlp.js';

async function printPlan(ctx: Context, plan: BatchPlanDoc): Promise<void> {
  await ctx.out.result(plan, async () => {
    await ctx.out.table(
      ['endpoint', 'model', 'lines', 'to send', 'estimated', 'unpriced'],
      plan.groups.map((g) => [g.url, g.model, g.count, g.pending, totalsText(g.estimated), g.unpriced]),
    );
    const basis = plan.upper_bound === true ? 'upper bound at --prices and list prices' : 'list prices';
    ctx.out.line(`estimated total: ${totalsText(plan.estimated_total)} (${basis}; nothing was sent)`);
    if (plan.unpriced > 0) {
      const why =
        plan.unpriced_reason ?? 'billed by tokens, images or a default length the request does not fix';
      ctx.out.line(`unpriced lines: ${plan.unpriced} (${why})`);
    }
  });
}

/** Runs (or resumes) a batch. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchRunFlags>,
  file: string,
): Promise<number> {
  // --shard k/n, or the scheduler's (auto, GW_SHARD): a partial set of its variables is exit 2 here.
  const shard = resolveShard(opts.shard, ctx.io.env);
  // The batch directory (created by the run when missing) is checked before anything is read or sent.
  checkSaveDir(opts.out, '--out');
  const budgets = Object.fromEntries(parseBudgets(opts.budget ?? []));
  // The run's own --timeout (after `run`), else the global one written before the command name.
  const timeout = opts.timeout ?? ctx.globals.timeout;
  const timeoutMs = ctx.waitLimitMs(opts.timeout);
  const input = file === '-' ? ctx.io.stdin : file;
  if (shard !== undefined && shard.source !== '--shard')
    ctx.out.note(`shard ${shard.k}/${shard.n} from ${shard.source}`);
  // Read (and a damaged file refused, exit 2) before anything is read from the input or sent.
  const prices = opts.prices !== undefined ? await readPrices(opts.prices, ctx.signal) : undefined;
  if (opts.dryRun) {
    const o = { input, out: opts.out, validate: ctx.globals.validate, shard, prices };
    await printPlan(ctx, await planBatch(o));
    return 0;
  }
  await startOtlp(ctx, opts.otlp);
  const clients = shared.clientsOf(ctx);
  const { sinks, stop } = await shared.sinksOf(ctx);
  try {
    const doc = await runBatch({
      ...sinks,
      input,
      out: opts.out,
      client: clients.source,
      validate: ctx.globals.validate,
      concurrency: opts.concurrency,
      budgets,
      allowUnpriced: opts.allowUnpriced,
      prices,
      pricesPath: opts.prices !== undefined ? resolve(opts.prices) : undefined,
      maxAttempts: opts.maxAttempts,
      shard,
      download: opts.download,
      timeoutMs,
      resendInDoubt: opts.resendInDoubt,
      waitLock: opts.waitLock,
      signal: ctx.signal,
      journal: shared.journalOf(ctx, clients.baseUrl),
      redact: (t) => ctx.redactor.redact(t),
      // Standard input is kept in the batch directory: the resume command reads that copy, and names the shard
      // the run works on (as k/n: it resumes outside the scheduler too).
      resume: (kept, rec) =>
        shared.resumeCommand(file === '-' ? kept : file, opts.out, { ...opts, shard: rec.shard, timeout }),
    });
    stop();
    return await shared.reportRun(ctx, doc);
  } finally {
    stop();
  }
}
