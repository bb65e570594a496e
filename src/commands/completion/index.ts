import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';

/** `gw completion bash|zsh|fish`: a completion script generated from the command tree. */
export const completionVerb = defineVerb<never, ['bash' | 'zsh' | 'fish']>({
  name: 'completion',
  description: 'print a shell completion script (bash|zsh|fish), generated from the command tree',
  args: [{ name: '<shell>', help: 'target shell', choices: ['bash', 'zsh', 'fish'] }],
  notes: `Completes commands, flags and their choices (--resolution, --ratio), profile names after --profile, the model
ids of the last \`gw models\` after -m/--model, and ids from the journal (gw history) after get/wait/download.`,
  examples: [
    'source <(gw completion bash)                                 # bash, this shell',
    'gw completion bash > ~/.local/share/bash-completion/completions/gw',
    'gw completion zsh > "${fpath[1]}/_gw"                        # zsh (then restart the shell)',
    'gw completion fish > ~/.config/fish/completions/gw.fish',
  ],
  handler: () => import('./run.js'),
});

export default function command(rt: Runtime): Command {
  return verbCommand(completionVerb, rt);
}
