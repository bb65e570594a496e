import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';

export const getVerb = defineVerb<never, [string]>({
  name: 'get',
  description: 'print one key of the profile (the token redacted)',
  args: [{ name: '<key>', help: 'setting name' }],
  handler: () => import('./get.run.js'),
});

/** `gw config get`. */
export function getCommand(rt: Runtime): Command {
  return verbCommand(getVerb, rt);
}
