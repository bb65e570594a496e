import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../../cli/verb.js';
import { assetModelFlag } from './flags.js';

export const groupCreateFlags = z.object({
  name: flag(z.string(), { flag: '--name <n>', help: 'group name' }),
  description: flag(z.string().optional(), { flag: '--description <d>', help: 'group description' }),
  model: assetModelFlag(),
});

/** `gw beta asset group create`: CreateAssetGroup; prints the group id (journaled first). */
export const groupCreateVerb = defineVerb<typeof groupCreateFlags>({
  name: 'create',
  description: 'create an asset group (GroupType AIGC); prints its id',
  flags: groupCreateFlags,
  notes: "With --json: the gateway's {ResponseMetadata, Result: {Id}}.",
  examples: ['group=$(gw beta asset group create --name storyboard)'],
  handler: () => import('./group-create.run.js'),
});

export default function groupCreateCommand(rt: Runtime): Command {
  return verbCommand(groupCreateVerb, rt);
}
