import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { groupCommand } from '../../cli/verb.js';
import editCommand from './edit.js';
import generateCommand from './generate.js';

/** `gw image`: image generation and editing. */
export default function imageCommand(rt: Runtime): Command {
  return groupCommand('image', 'images: generate | edit', [generateCommand(rt), editCommand(rt)], {
    examples: [
      'gw image generate -m image-gen-1 "a red fox" --size 1024x1024',
      'gw image edit -m image-edit-1 --image https://example.com/in.png "make it blue" --format b64_json --out ./out',
    ],
  });
}
