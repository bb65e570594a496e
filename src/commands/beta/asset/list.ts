import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../../cli/context.js';
import { positiveInt } from '../../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../../cli/verb.js';
import { assetModelFlag } from './flags.js';

export const assetListFlags = z.object({
  group: flag(z.array(z.string()), {
    flag: '--group <id>',
    help: 'group id (repeatable)',
    repeat: 'collect',
  }),
  model: assetModelFlag(),
  page: flag(positiveInt('page').optional(), { flag: '--page <n>', help: 'PageNumber, from 1' }),
  pageSize: flag(positiveInt('page-size').optional(), { flag: '--page-size <n>', help: 'PageSize' }),
  all: flag(z.boolean().optional(), { flag: '--all', help: 'walk every page from --page (default 1)' }),
});

/** `gw beta asset list --group <id>...`: ListAssets as a table; `--all` walks every page. */
export const assetListVerb = defineVerb<typeof assetListFlags>({
  name: 'list',
  description: 'list assets of groups (table: id, group, type, status)',
  flags: assetListFlags,
  notes:
    "With --json: the gateway's {ResponseMetadata, Result}; with --all one document {Items, TotalCount}.",
  examples: ['gw beta asset list --group "$group" --all'],
  handler: () => import('./list.run.js'),
});

export default function listCommand(rt: Runtime): Command {
  return verbCommand(assetListVerb, rt);
}
