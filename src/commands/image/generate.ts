import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';
import { imageFlagFields } from './flags.js';

/** `gw image generate`: POST /v1/images/generations. */
export const generateVerb = defineVerb<typeof imageFlagFields, [string[]]>({
  name: 'generate',
  description: 'generate images (POST /v1/images/generations)',
  args: [{ name: '[prompt...]', help: 'the prompt (default: standard input)' }],
  flags: imageFlagFields,
  notes: `Output: image URLs one per line; with --format b64_json the images are written as files (never overwriting
without --force) and their paths printed. --json prints the gateway's answer unchanged.`,
  examples: [
    'gw image generate -m image-gen-1 "a red fox in the snow" --size 1024x1024',
    'gw image generate -m image-gen-1 "a logo" -n 2 --format b64_json --out ./images',
  ],
  handler: () => import('./generate.run.js'),
});

export default function generateCommand(rt: Runtime): Command {
  return verbCommand(generateVerb, rt);
}
