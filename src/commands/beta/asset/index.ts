import { Command } from 'commander';
import { groupCommand } from '../../../cli/verb.js';
import type { Runtime } from '../../../cli/context.js';
import createCommand from './create.js';
import getCommand from './get.js';
import groupCreateCommand from './group-create.js';
import listCommand from './list.js';
import uploadCommand from './upload.js';
import waitCommand from './wait.js';

/**
 * `gw beta asset`: the asset library (beta-tasks-assets.md §4.2). Only the offered actions exist here: there is
 * no update, no delete and no moderation skip (§4.2, §7).
 */
export default function assetCommand(rt: Runtime): Command {
  return new Command('asset')
    .description(
      'asset library: group create | create | get | list | wait | upload (assets must be Active to use)',
    )
    .addCommand(
      groupCommand('group', 'asset groups: create', [groupCreateCommand(rt)], {
        examples: ['group=$(gw beta asset group create --name storyboard)'],
      }),
    )
    .addCommand(createCommand(rt))
    .addCommand(getCommand(rt))
    .addCommand(listCommand(rt))
    .addCommand(waitCommand(rt))
    .addCommand(uploadCommand(rt))
    .addHelpText(
      'after',
      `
Update*, Delete* and Moderation.Strategy=Skip are not offered by the asset library.

Examples:
  gw beta asset upload                                   # interactive on a terminal
  gw beta asset upload --group "$group" --url https://example.com/cat.png --url https://example.com/theme.mp3`,
    );
}
