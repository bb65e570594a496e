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
Examples:
  source <(gw completion bash)                                 # bash, this shell
  gw completion bash > ~/.local/share/bash-completion/completions/gw
  gw completion zsh > "\${fpath[1]}/_gw"                        # zsh (then restart the shell)
  gw completion fish > ~/.config/fish/completions/gw.fish`,
    )
    .action(
      rt.action(async (ctx, shell: 'bash' | 'zsh' | 'fish') => {
        const { completionScript } = await import('../core/completion.js');
        // main() loads every command group when the target is `completion`, so the root holds the whole tree.
        const root = cmd.parent ?? cmd;
        ctx.out.write(completionScript(shell, root));
      }),
    );
  return cmd;
}
