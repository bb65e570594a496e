import type { Command } from 'commander';
import * as z from 'zod';
import { CONFIG_KEYS } from '../core/config.js';
import type { Runtime } from './context.js';
import { defineVerb, flag, groupCommand, verbCommand } from './verb.js';

export const configSetFlags = z.object({
  tokenStdin: flag(z.boolean().optional(), {
    flag: '--token-stdin',
    help: 'read the token from standard input',
  }),
});

const run = () => import('./config.run.js');

const setVerb = defineVerb<typeof configSetFlags, [string, string | undefined]>({
  name: 'set',
  description: 'set a key of the profile (the token only via --token-stdin or a hidden prompt)',
  args: [
    { name: '<key>', help: 'setting name' },
    { name: '[value]', help: 'value (not for token)' },
  ],
  flags: configSetFlags,
  handler: async () => ({ default: (await run()).set }),
});

const getVerb = defineVerb<never, [string]>({
  name: 'get',
  description: 'print one key of the profile (the token redacted)',
  args: [{ name: '<key>', help: 'setting name' }],
  handler: async () => ({ default: (await run()).get }),
});

const listVerb = defineVerb<never>({
  name: 'list',
  description: 'list profiles (tokens redacted)',
  handler: async () => ({ default: (await run()).list }),
});

const useVerb = defineVerb<never, [string]>({
  name: 'use',
  description: 'select the current profile',
  args: [{ name: '<profile>', help: 'profile name' }],
  handler: async () => ({ default: (await run()).use }),
});

const unsetVerb = defineVerb<never, [string]>({
  name: 'unset',
  description: 'remove a key from the profile',
  args: [{ name: '<key>', help: 'setting name' }],
  handler: async () => ({ default: (await run()).unset }),
});

/** `gw config set|get|list|use|unset`: profiles stored with conf (mode 0600). */
export default function configCommand(rt: Runtime): Command {
  return groupCommand(
    'config',
    'manage profiles: set | get | list | use | unset (file mode 0600; the token is shown redacted)',
    [
      verbCommand(setVerb, rt),
      verbCommand(getVerb, rt),
      verbCommand(listVerb, rt),
      verbCommand(useVerb, rt),
      verbCommand(unsetVerb, rt),
    ],
    {
      notes: `Keys: ${CONFIG_KEYS.join(', ')}`,
      examples: [
        'gw config set baseUrl https://gw.example.com',
        'printf %s "$TOKEN" | gw config set token --token-stdin',
        'gw --profile staging config set baseUrl https://staging.example.com',
        'gw config use staging',
        'gw config list',
      ],
    },
  );
}
