import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../../cli/context.js';
import { defineVerb, verbCommand } from '../../../cli/verb.js';
import { assetModelFlag } from './flags.js';

export const assetGetFlags = z.object({ model: assetModelFlag() });

/** `gw beta asset get <asset_id>`: GetAsset as key-value lines. */
export const assetGetVerb = defineVerb<typeof assetGetFlags, [string]>({
  name: 'get',
  description: 'show an asset and its Status (Processing, Active, Failed)',
  args: [{ name: '<asset_id>', help: '' }],
  flags: assetGetFlags,
  examples: [
    'for ref in $refs; do gw beta asset get "$ref"; done      # asset://ID, Asset://ID or the bare id',
    'gw beta asset get "$ref" --json | jq -r .Result.Status',
  ],
  handler: () => import('./get.run.js'),
});

export default function getCommand(rt: Runtime): Command {
  return verbCommand(assetGetVerb, rt);
}
