import { Command } from 'commander';
import type { Cell } from '../../../ui/output.js';
import type { Runtime } from '../../context.js';

/** `gw beta asset get <asset_id>`: GetAsset (§4.2) as key-value lines. */
export default function getCommand(rt: Runtime): Command {
  return new Command('get')
    .description('show an asset and its Status (Processing, Active, Failed)')
    .argument('<asset_id>')
    .requiredOption('-m, --model <model>', 'public model name (e.g. gamma-video-2-0)')
    .addHelpText(
      'after',
      '\nExamples:\n  gw beta asset get asset-20260528140922-d9646 -m gamma-video-2-0\n  gw beta asset get asset-1 -m gamma-video-2-0 --json | jq -r .Result.Status',
    )
    .action(
      rt.action(async (ctx, id: string, opts: { model: string }) => {
        const assets = await import('../../../client/resources/beta-assets.js');
        const client = await ctx.client();
        const res = await assets.getAsset(client, { model: opts.model, Id: id }, { signal: ctx.signal });
        if (ctx.globals.json) {
          ctx.out.json(res.data);
          return;
        }
        const a = res.data.Result;
        const rows: Array<[string, Cell]> = [
          ['id', a.Id],
          ['group', a.GroupId],
          ['type', a.AssetType],
          ['status', a.Status],
        ];
        // Fields beyond the four of §2.6 are not documented: shown when the gateway sends them.
        for (const [k, v] of Object.entries(a)) {
          if (
            !['Id', 'GroupId', 'AssetType', 'Status'].includes(k) &&
            (typeof v === 'string' || typeof v === 'number')
          ) {
            rows.push([k, v]);
          }
        }
        ctx.out.keyValue(rows);
        if (a.Status === 'Active') ctx.out.tip(`reference it as asset://${a.Id}`);
        if (a.Status === 'Failed')
          ctx.out.tip('review or preprocessing failed; the library shows no reason (§2.6)');
      }),
    );
}
