import { Command } from 'commander';
import { GwError } from '../../core/errors.js';
import type { Runtime } from '../context.js';

/** `gw alpha`: not built yet (placeholder so the command table compiles; replaced by its issue). */
export default function command(rt: Runtime): Command {
  return new Command('alpha')
    .allowUnknownOption()
    .argument('[args...]')
    .action(
      rt.action(() =>
        Promise.reject(new GwError('gw alpha is not implemented yet', { code: 'not_implemented' })),
      ),
    );
}
