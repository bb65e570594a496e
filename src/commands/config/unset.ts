import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';

export const unsetVerb = defineVerb<never, [string]>({
  name: 'unset',
  description: 'remove a key from the profile',
  args: [{ name: '<key>', help: 'setting name' }],
  handler: () => import('./unset.run.js'),
});

/** `gw config unset`. */
export function unsetCommand(rt: Runtime): Command {
  return verbCommand(unsetVerb, rt);
}
