import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';

export const listVerb = defineVerb<never>({
  name: 'list',
  description: 'list profiles (tokens redacted)',
  handler: () => import('./list.run.js'),
});

/** `gw config list`. */
export function listCommand(rt: Runtime): Command {
  return verbCommand(listVerb, rt);
}
