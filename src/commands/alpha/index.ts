import { Command } from 'commander';
import type { Runtime } from '../context.js';
import i2vCommand from './i2v.js';

/** `gw alpha`: the first video family (alpha-image2video.md). */
export default function alphaCommand(rt: Runtime): Command {
  return new Command('alpha')
    .description('first video family: i2v (image-to-video)')
    .addCommand(i2vCommand(rt))
    .addHelpText('after', '\nExamples:\n  gw alpha i2v --image first.png --prompt "waves roll in"');
}
