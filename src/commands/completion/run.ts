import type { Context } from '../../cli/context.js';
import { completionScript } from '../../core/completion.js';
import { offeredValues } from '../../cli/verb.js';

/** Prints the completion script of the whole command tree (every group's definitions, no handler). */
export default function run(ctx: Context, _flags: unknown, shell: 'bash' | 'zsh' | 'fish'): void {
  // main() loads every command group when the target is `completion`, so the root holds the whole tree.
  const root = ctx.command?.parent ?? ctx.command;
  if (root === undefined) throw new Error('completion: run through main()');
  const ids = (kind: string, paths: string[]): Array<[string, string]> =>
    paths.map((p) => [p, `ids ${kind}`]);
  ctx.out.write(
    completionScript(shell, root, {
      // Each verb's own values (the list its contract checks), never one list per flag name for every verb.
      offers: (o) => offeredValues.get(o),
      // Asked at Tab time: profile names, the model ids of the last `gw models`, journal ids.
      flags: { '--profile': 'profiles', '-m': 'models', '--model': 'models' },
      args: Object.fromEntries([
        ...ids('video', ['video get', 'video wait', 'video download']),
        ...ids('beta-task', ['beta task get', 'beta task wait', 'beta task download', 'beta task delete']),
        ...ids('beta-asset', ['beta asset get', 'beta asset wait']),
      ]),
    }),
  );
}
