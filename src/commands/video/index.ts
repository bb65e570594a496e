import { Command } from 'commander';
import { GwError } from '../../core/errors.js';
import type { Runtime } from '../context.js';

/** `gw video`: not built yet (placeholder so the command table compiles; replaced by its issue). */
export default function command(rt: Runtime): Command {
  return new Command('video')
    .allowUnknownOption()
    .argument('[args...]')
    .action(
      rt.action(() =>
        Promise.reject(new GwError('gw video is not implemented yet', { code: 'not_implemented' })),
      ),
    );
}
