/** What the `gw load` verbs share: the command line a report names. */
import type { Context } from '../../cli/context.js';
import type { CommandLike } from '../../report/index.js';

/** The command that runs (reports name their command line). */
export function commandOf(ctx: Context): CommandLike {
  return ctx.command as CommandLike;
}
