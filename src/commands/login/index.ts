import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const loginFlags = z.object({
  tokenStdin: flag(z.boolean().optional(), {
    flag: '--token-stdin',
    help: 'read the token from standard input (non-interactive login)',
  }),
});

/** `gw login`: ask for base URL and token, check them with GET /v1/models, save a profile. */
export const loginVerb = defineVerb<typeof loginFlags>({
  name: 'login',
  description: 'save a profile: asks for base URL and token, checks them with GET /v1/models',
  flags: loginFlags,
  examples: [
    'gw login',
    'printf %s "$TOKEN" | gw login --base-url https://gw.example.com --token-stdin',
    'gw --profile staging login',
  ],
  handler: () => import('./run.js'),
});

export default function loginCommand(rt: Runtime): Command {
  return verbCommand(loginVerb, rt);
}
