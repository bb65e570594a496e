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
        const assets = await import('../../../client/resources/beta-assets.js');
        const client = await ctx.client();
        const res = await assets.createGroup(
          client,
          { model: opts.model, Name: opts.name, Description: opts.description },
          { signal: ctx.signal },
        );
        const id = res.data.Result.Id;
        // Groups are journaled with the assets (kind beta-asset, object group) so `asset upload` can offer them.
        ctx.recordCreated(client, {
          kind: 'beta-asset',
          id,
          model: opts.model,
          requestId: res.requestId,
          extra: { object: 'group', name: opts.name },
        });
        if (ctx.globals.json) ctx.out.json(res.data);
        else ctx.out.line(id);
      }),
    );
}
