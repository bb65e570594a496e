import { Command } from 'commander';
import type { Runtime } from '../context.js';
import editCommand from './edit.js';
import generateCommand from './generate.js';

/** `gw image`: image generation and editing (common.md §2.2, §4). */
export default function imageCommand(rt: Runtime): Command {
  return new Command('image')
    .description('images: generate | edit')
    .addHelpText(
      'after',
      '\nExamples:\n  gw image generate -m image-gen-1 "a red fox" --size 1024x1024\n  gw image edit -m image-edit-1 --image https://example.com/in.png "make it blue" --format b64_json --out ./out',
    )
    .addCommand(generateCommand(rt))
    .addCommand(editCommand(rt));
}
