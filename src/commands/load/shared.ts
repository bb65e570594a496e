/** What the `gw load` verbs share: the command line a report names, and flags given before a subcommand. */
import type { LoadFlags } from '../../load/options.js';
import type { CommandLike } from '../../report/index.js';
import type { Context } from '../../cli/context.js';

/** The command that runs (reports name their command line). */
export function commandOf(ctx: Context): CommandLike {
  return ctx.command as CommandLike;
}

/** The flags of `gw load` itself: `gw load --out x merge …` gives merge's --out before the subcommand's name. */
export function parentFlags(ctx: Context): LoadFlags {
  return ctx.command?.parent?.opts<LoadFlags>() ?? {};
}
