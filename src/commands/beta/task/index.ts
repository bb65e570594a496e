import type { Command } from 'commander';
import type { Runtime } from '../../../cli/context.js';
import { groupCommand } from '../../../cli/verb.js';
import createCommand from './create.js';
import deleteCommand from './delete.js';
import downloadCommand from './download.js';
import getCommand from './get.js';
import listCommand from './list.js';
import waitCommand from './wait.js';

/** `gw beta task`: native video tasks. */
export default function taskCommand(rt: Runtime): Command {
  return groupCommand(
    'task',
    'native video tasks: create | get | list | delete | wait | download',
    [
      createCommand(rt),
      getCommand(rt),
      listCommand(rt),
      deleteCommand(rt),
      waitCommand(rt),
      downloadCommand(rt),
    ],
    {
      examples: [
        'gw beta task create "a paper boat in the rain" -m gamma-video-2-0-fast --duration 5 --wait --download boat.mp4',
        'gw beta task list --status running',
      ],
    },
  );
}
