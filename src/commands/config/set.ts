import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const configSetFlags = z.object({
  tokenStdin: flag(z.boolean().optional(), {
    flag: '--token-stdin',
    help: 'read the token from standard input',
  }),
});

export const setVerb = defineVerb<typeof configSetFlags, [string, string | undefined]>({
  name: 'set',
  description: 'set a key of the profile (the token only via --token-stdin or a hidden prompt)',
  args: [
    { name: '<key>', help: 'setting name' },
    { name: '[value]', help: 'value (not for token)' },
  ],
  flags: configSetFlags,
  handler: () => import('./set.run.js'),
});

/** `gw config set`. */
export function setCommand(rt: Runtime): Command {
  return verbCommand(setVerb, rt);
}
