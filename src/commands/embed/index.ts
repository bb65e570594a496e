import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const embedFlags = z.object({
  model: flag(z.string().optional(), {
    flag: '-m, --model <model>',
    help: "model name (see `gw models`; default: the profile's defaults.embed)",
  }),
  file: flag(z.string().optional(), {
    flag: '--file <path>',
    help: 'read the inputs from a file, one per line (blank lines skipped)',
  }),
});

/** `gw embed`: embeddings of one or more texts (POST /v1/embeddings). */
export const embedVerb = defineVerb<typeof embedFlags, [string[]]>({
  name: 'embed',
  description: 'embeddings (POST /v1/embeddings): table of index, dimensions and first values',
  args: [
    { name: '[text...]', help: 'texts to embed, one input per argument (default: --file or standard input)' },
  ],
  flags: embedFlags,
  notes: "Output: a table (index, dims, first values); --json prints the gateway's answer unchanged.",
  examples: [
    'gw embed -m text-embedding-v4 "first text" "second text"',
    "gw embed -m text-embedding-v4 --file lines.txt --json | jq '.data[0].embedding | length'",
  ],
  handler: () => import('./run.js'),
});

export default function embedCommand(rt: Runtime): Command {
  return verbCommand(embedVerb, rt);
}
