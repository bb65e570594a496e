import { Command } from 'commander';
import type { Runtime } from '../../context.js';

/** `gw beta asset group create`: CreateAssetGroup (§4.2); prints the group id (journaled first). */
export default function groupCreateCommand(rt: Runtime): Command {
  return new Command('create')
    .description('create an asset group (GroupType AIGC); prints its id')
    .requiredOption('--name <n>', 'group name')
    .option('--description <d>', 'group description')
    .requiredOption('-m, --model <model>', 'public model name of the family (e.g. gamma-video-2-0)')
    .addHelpText(
      'after',
      `
With --json: the gateway's {ResponseMetadata, Result: {Id}}.

Examples:
  group=$(gw beta asset group create --name storyboard -m gamma-video-2-0)`,
    )
    .action(
      rt.action(async (ctx, opts: { name: string; description?: string; model: string }) => {
        const { createGroup } = await import('./journaled.js');
        const client = await ctx.client();
        const { id, data } = await createGroup(ctx, client, opts);
        if (ctx.globals.json) ctx.out.json(data);
        else ctx.out.line(id);
      }),
    );
}
