import { Command } from 'commander';
import type { Runtime } from '../../context.js';
import { ASSET_MODEL_FLAG, ASSET_MODEL_HELP, assetModel } from './ids.js';

/** `gw beta asset group create`: CreateAssetGroup (§4.2); prints the group id (journaled first). */
export default function groupCreateCommand(rt: Runtime): Command {
  return new Command('create')
    .description('create an asset group (GroupType AIGC); prints its id')
    .requiredOption('--name <n>', 'group name')
    .option('--description <d>', 'group description')
    .option(ASSET_MODEL_FLAG, ASSET_MODEL_HELP)
    .addHelpText(
      'after',
      `
With --json: the gateway's {ResponseMetadata, Result: {Id}}.

Examples:
  group=$(gw beta asset group create --name storyboard)`,
    )
    .action(
      rt.action(async (ctx, o: { name: string; description?: string; model?: string }) => {
        const opts = { ...o, model: assetModel(ctx, o.model) };
        const { createGroup } = await import('./journaled.js');
        const client = await ctx.client();
        const { id, data } = await createGroup(ctx, client, opts);
        if (ctx.globals.json) ctx.out.json(data);
        else ctx.out.line(id);
      }),
    );
}
