import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { groupCommand } from '../../cli/verb.js';
import { createCommand } from './create.js';
import { downloadCommand } from './download.js';
import { getCommand } from './get.js';
import { waitCommand } from './wait.js';

/** `gw video create | get | wait | download`: the asynchronous video tasks. */
export default function videoCommand(rt: Runtime): Command {
  return groupCommand(
    'video',
    'async videos: create | get | wait | download',
    [createCommand(rt), getCommand(rt), waitCommand(rt), downloadCommand(rt)],
    {
      examples: [
        'id=$(gw video create "a red fox in snow" -m clip-1.1-t2v --seconds 5 --resolution 720p)',
        'gw video wait "$id" --timeout 15m && gw video download "$id" -o fox.mp4',
        'gw video get "$id"',
        'gw history --kind video',
      ],
    },
  );
}
