import { Command } from 'commander';
import { GwError } from '../core/errors.js';
import type { Runtime } from './context.js';

/** `gw messages`: not built yet (placeholder so the command table compiles; replaced by its issue). */
export default function command(rt: Runtime): Command {
  return new Command('messages')
    .allowUnknownOption()
    .argument('[args...]')
    .action(
      rt.action(() =>
        Promise.reject(new GwError('gw messages is not implemented yet', { code: 'not_implemented' })),
      ),
    );
}
