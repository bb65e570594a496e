import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';
import { imageFlagFields } from './flags.js';

export const editFlags = imageFlagFields.extend({
  image: flag(z.array(z.string()), {
    flag: '--image <https url>',
    help: 'input image, a public https URL (repeatable)',
    repeat: 'collect',
  }),
});

/** `gw image edit`: POST /v1/images/edits with public https input images. */
export const editVerb = defineVerb<typeof editFlags, [string[]]>({
  name: 'edit',
  description: 'edit images (POST /v1/images/edits); inputs must be public https URLs',
  args: [{ name: '[prompt...]', help: 'the instruction (default: standard input)' }],
  flags: editFlags,
  notes: `Output: as \`gw image generate\`. An answer without images means, per the gateway documents, that
an input URL is not publicly reachable or the model is not an edit model: gw reports it and exits 1.`,
  examples: [
    'gw image edit -m image-edit-1 --image https://example.com/room.png "paint the walls green"',
    'gw image edit -m image-edit-1 --image https://example.com/a.png --format b64_json --out ./edits "add a hat"',
  ],
  handler: () => import('./edit.run.js'),
});

export default function editCommand(rt: Runtime): Command {
  return verbCommand(editVerb, rt);
}
