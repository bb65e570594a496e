import * as z from 'zod';
import { defineVerb } from '../../cli/verb.js';
import { toleranceFlag } from './flags.js';

export const loadCompareFlags = z.object({
  tolerance: toleranceFlag('allowed regression (default 10%)'),
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
  // `gw load --tolerance 5% compare a.json b.json`: written before `compare`, commander gives it to `gw load`.
  inherit: ['tolerance'],
  notes: `Compares p50/p90/p95/p99 of ttft, itl, tpot and e2e, step by step: a percentile regresses when it is more than the
tolerance (and at least 1 ms) above the baseline; the error rate when it rose by more than the tolerance and by at
least 0.1 percentage point. Exit 0 no regression, 1 regression, 2 a file that is not a complete gw load report
(named with the field that breaks it). Off a terminal the table is TSV with a header naming every column and the
verdict goes to stderr. --json prints {tolerance, pass, rows, regressions, notes}.`,
  handler: () => import('./compare.run.js'),
});
