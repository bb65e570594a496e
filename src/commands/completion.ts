import { Argument, Command } from 'commander';
import type { Runtime } from './context.js';

/** `gw completion bash|zsh|fish`: a completion script generated from the loaded command tree. */
export default function command(rt: Runtime): Command {
  const cmd: Command = new Command('completion')
    .description('print a shell completion script (bash|zsh|fish), generated from the command tree')
    .addArgument(new Argument('<shell>', 'target shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      `
Completes commands, flags and their choices (--resolution, --ratio), profile names after --profile, the model
ids of the last \`gw models\` after -m/--model, and ids from the journal (gw history) after get/wait/download.

Examples:
  source <(gw completion bash)                                 # bash, this shell
  gw completion bash > ~/.local/share/bash-completion/completions/gw
  gw completion zsh > "\${fpath[1]}/_gw"                        # zsh (then restart the shell)
  gw completion fish > ~/.config/fish/completions/gw.fish`,
    )
    .action(
      rt.action(async (ctx, shell: 'bash' | 'zsh' | 'fish') => {
        const { completionScript } = await import('../core/completion.js');
        const { BETA_RATIOS, BETA_RESOLUTIONS } = await import('../contract/beta.js');
        const { VIDEO_RESOLUTIONS } = await import('../contract/video.js');
        // main() loads every command group when the target is `completion`, so the root holds the whole tree.
        const root = cmd.parent ?? cmd;
        const ids = (kind: string, paths: string[]): Array<[string, string]> =>
          paths.map((p) => [p, `ids ${kind}`]);
        ctx.out.write(
          completionScript(shell, root, {
            values: {
              '--resolution': [...new Set([...BETA_RESOLUTIONS, ...VIDEO_RESOLUTIONS])],
              '--ratio': BETA_RATIOS,
            },
            // Asked at Tab time: profile names, the model ids of the last `gw models`, journal ids.
            flags: { '--profile': 'profiles', '-m': 'models', '--model': 'models' },
            args: Object.fromEntries([
              ...ids('video', ['video get', 'video wait', 'video download']),
              ...ids('beta-task', [
                'beta task get',
                'beta task wait',
                'beta task download',
                'beta task delete',
              ]),
              ...ids('beta-asset', ['beta asset get', 'beta asset wait']),
            ]),
          }),
        );
      }),
    );
  return cmd;
}
