import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';

export const useVerb = defineVerb<never, [string]>({
  name: 'use',
  description: 'select the current profile',
  args: [{ name: '<profile>', help: 'profile name' }],
  handler: () => import('./use.run.js'),
});

/** `gw config use`. */
export function useCommand(rt: Runtime): Command {
  return verbCommand(useVerb, rt);
}
