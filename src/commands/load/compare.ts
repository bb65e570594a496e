import * as z from 'zod';
import { defineVerb, flag } from '../../cli/verb.js';

export const loadCompareFlags = z.object({
  tolerance: flag(z.string().optional(), {
    flag: '--tolerance <pct>',
    help: 'allowed regression (default 10%)',
  }),
});

/** `gw load compare`: exit 1 on a regression beyond --tolerance. */
export const loadCompareVerb = defineVerb<typeof loadCompareFlags, [string, string]>({
  name: 'compare',
  description: 'exit 1 when a percentile or the error rate regressed beyond --tolerance',
  args: [
    { name: '<base.json>', help: 'the baseline report' },
    { name: '<new.json>', help: 'the report to judge' },
  ],
  flags: loadCompareFlags,
  notes: `Compares p50/p90/p95/p99 of ttft, itl, tpot and e2e, step by step: a percentile regresses when it is more than the
tolerance (and at least 1 ms) above the baseline; the error rate when it rose by more than the tolerance and by at
least 0.1 percentage point. Exit 0 no regression, 1 regression, 2 unreadable report. --json prints
{tolerance, pass, rows, regressions, notes}.`,
  handler: () => import('./compare.run.js'),
});
