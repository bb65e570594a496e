import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { positiveDurationText } from '../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';
import { waitLockFlag } from './run.js';

export const batchRetryFlags = z.object({
  failed: flag(z.boolean().default(false), { flag: '--failed', help: 'resend the items that failed' }),
  inDoubt: flag(z.boolean().default(false), {
    flag: '--in-doubt',
    help: 'resend the items whose create may have reached the gateway (may bill twice)',
  }),
  timeout: flag(positiveDurationText('--timeout').optional(), {
    flag: '--timeout <dur>',
    help: 'stop after this long (exit 4)',
  }),
  download: flag(z.boolean().default(true), {
    flag: '--no-download',
    help: 'do not download the results of video tasks',
  }),
  waitLock: waitLockFlag,
});

/** `gw batch retry <dir> [--failed] [--in-doubt]`. */
export const batchRetryVerb = defineVerb<typeof batchRetryFlags, [string]>({
  name: 'retry',
  description: 're-run chosen items of a finished or interrupted batch (default --failed)',
  args: [{ name: '<dir>', help: 'a batch directory (the --out of gw batch run)' }],
  flags: batchRetryFlags,
  notes: `Runs the batch again with the input and flags of its last run, after forgetting the chosen items, so they are
sent again; their old lines leave errors.jsonl. Everything else resumes as gw batch run would: created tasks whose
follow stopped short (a download cut) are followed again and their downloads resumed, never created again. Nothing
in the directory changes before the retry is certain to start (the directory's lock taken, the input of the last
run found and checked, the token there). --json prints the same document as gw batch run.`,
  examples: [`gw batch retry out/ --failed`, `gw batch status out/ && gw batch retry out/ --in-doubt`],
  handler: () => import('./retry.run.js'),
});

export function retryCommand(rt: Runtime): Command {
  return verbCommand(batchRetryVerb, rt);
}
