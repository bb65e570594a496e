import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { groupCommand } from '../../cli/verb.js';
import i2vCommand from './i2v.js';

/** `gw alpha`: the first video family. */
export default function alphaCommand(rt: Runtime): Command {
  return groupCommand('alpha', 'first video family: i2v (image-to-video)', [i2vCommand(rt)], {
    examples: ['gw alpha i2v --image first.png --prompt "waves roll in"'],
  });
}
