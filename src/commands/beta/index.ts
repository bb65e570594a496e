import { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import assetCommand from './asset/index.js';
import taskCommand from './task/index.js';

/** `gw beta`: the second video family (beta-tasks-assets.md): native tasks and the asset library. */
export default function betaCommand(rt: Runtime): Command {
  return new Command('beta')
    .description('second video family: task … (native video tasks) | asset … (asset library)')
    .addCommand(taskCommand(rt))
    .addCommand(assetCommand(rt))
    .addHelpText(
      'after',
      `
Examples:
  ref=$(gw beta asset upload --url https://example.com/cat.png)
  id=$(gw beta task create "the cat surfs a wave" -m gamma-video-2-0 --first-frame "$ref" --resolution 720p)
  gw beta task wait "$id" && gw beta task download "$id" -o surf.mp4`,
    );
}
