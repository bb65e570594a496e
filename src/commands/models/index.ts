import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';

/** `gw models`: list the models visible to the token. */
export const modelsVerb = defineVerb({
  name: 'models',
  description: 'list the models visible to the token (GET /v1/models)',
  examples: ['gw models', "gw models --json | jq -r '.data[].id'"],
  handler: () => import('./run.js'),
});

export default function modelsCommand(rt: Runtime): Command {
  return verbCommand(modelsVerb, rt);
}
