/** `gw load --api video`: not measured by this version (see the README "Load" section). */
import { UsageError } from '../core/errors.js';
import type { Context } from '../commands/context.js';
import type { LoadFlags } from './options.js';

/** Checks --budget and refuses: video load is not implemented yet. */
export function runVideoLoad(_ctx: Context, flags: LoadFlags): Promise<number> {
  if (flags.budget === undefined || flags.budget.length === 0) {
    throw new UsageError(
      '--budget: --api video creates paid tasks, so it needs --budget (e.g. --budget 50CNY)',
      {
        field: '--budget',
      },
    );
  }
  throw new UsageError('--api: video load tests are not supported by this version of gw', { field: '--api' });
}
