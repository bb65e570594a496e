import type { Command } from 'commander';
import * as z from 'zod';
import { ASSET_TYPES } from '../../../contract/beta-assets.js';
import type { Runtime } from '../../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../../cli/verb.js';
import { assetModelFlag } from './flags.js';

export const assetCreateFlags = z.object({
  group: flag(z.string(), {
    flag: '--group <id>',
    help: 'asset group id (gw beta asset group create)',
    fills: ['GroupId'],
  }),
  url: flag(z.string(), {
    flag: '--url <https url>',
    help: 'publicly downloadable URL (no cookies, login or one-time links)',
    fills: ['URL'],
  }),
  type: flag(z.string().optional(), {
    flag: '--type <t>',
    help: `${ASSET_TYPES.join('|')} (default: guessed from the file extension)`,
    offer: ASSET_TYPES,
    fills: ['AssetType'],
  }),
  name: flag(z.string().optional(), {
    flag: '--name <n>',
    help: 'asset name (default: the file name)',
    fills: ['Name'],
  }),
  model: assetModelFlag(),
  wait: flag(z.boolean().optional(), {
    flag: '--wait',
    help: 'wait until Active (exit 0) or Failed (exit 1); polls at 2, 5, 10, 20 s (limit: --timeout)',
  }),
});

/** `gw beta asset create`: CreateAsset; prints the asset id (journaled first); `--wait` polls to Active. */
export const assetCreateVerb = defineVerb<typeof assetCreateFlags>({
  name: 'create',
  description: 'register an asset from a public https URL; prints its id (it starts Processing)',
  flags: assetCreateFlags,
  notes: `A failed review or download shows only later, as Status Failed, never as a create error.
With --json: the gateway's {ResponseMetadata, Result: {Id}}; with --wait {id, asset}.`,
  examples: [
    'gw beta asset create --group "$group" --url https://example.com/cat.png --type Image --name cat --wait',
  ],
  handler: () => import('./create.run.js'),
});

export default function createCommand(rt: Runtime): Command {
  return verbCommand(assetCreateVerb, rt);
}
