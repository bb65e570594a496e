import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../../cli/context.js';
import { positiveDurationText } from '../../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../../cli/verb.js';
import { assetModelFlag } from './flags.js';

export const assetWaitFlags = z.object({
  model: assetModelFlag(),
  timeout: flag(positiveDurationText('--timeout').optional(), {
    flag: '--timeout <dur>',
    help: 'give up after this long (exit 4, the resume command on stderr); default: no limit',
  }),
});

/** `gw beta asset wait <asset_id>...`: exit 0 when all are Active, 1 when any Failed, 4 on timeout. */
export const assetWaitVerb = defineVerb<typeof assetWaitFlags, [string[]]>({
  name: 'wait',
  description:
    'wait until assets are Active or Failed (polls at 2, 5, 10, 20 s): exit 0 all Active, 1 any Failed',
  args: [{ name: '<asset_id...>', help: '' }],
  flags: assetWaitFlags,
  notes: `Prints nothing on stdout and "<asset_id> <final status>" per asset on stderr (a live table on a terminal), as every
wait does; with --json {assets: [GetAsset Result, ...]}.`,
  examples: ['gw beta asset wait $refs --timeout 5m'],
  handler: () => import('./wait.run.js'),
});

export default function waitCommand(rt: Runtime): Command {
  return verbCommand(assetWaitVerb, rt);
}
