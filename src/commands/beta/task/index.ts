import { Command } from 'commander';
import type { Runtime } from '../../context.js';
import createCommand from './create.js';
import deleteCommand from './delete.js';
import downloadCommand from './download.js';
import getCommand from './get.js';
import listCommand from './list.js';
import waitCommand from './wait.js';

/** `gw beta task`: native video tasks (beta-tasks-assets.md §4.1). */
export default function taskCommand(rt: Runtime): Command {
  return new Command('task')
    .description('native video tasks: create | get | list | delete | wait | download')
    .addCommand(createCommand(rt))
    .addCommand(getCommand(rt))
    .addCommand(listCommand(rt))
    .addCommand(deleteCommand(rt))
    .addCommand(waitCommand(rt))
    .addCommand(downloadCommand(rt))
    .addHelpText(
      'after',
      '\nExamples:\n  gw beta task create "a paper boat in the rain" -m gamma-video-2-0-fast --duration 5 --wait --download boat.mp4\n  gw beta task list --status running',
    );
}
