import { Command } from 'commander';
import type { Cell } from '../../../ui/output.js';
import type { Runtime } from '../../context.js';
import { formatLocalTime } from '../../video/shared.js';
import { ASSET_MODEL_FLAG, ASSET_MODEL_HELP, assetId, assetModel } from './ids.js';

/** A time field of an asset (ISO text or epoch seconds) in gw's one date format; anything else as sent. */
function asTime(v: string | number): string | number {
  const ms = typeof v === 'number' ? v * 1000 : /^\d{4}-\d\d-\d\d/.test(v) ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? formatLocalTime(new Date(ms)) : v;
}

/** `gw beta asset get <asset_id>`: GetAsset (§4.2) as key-value lines. */
export default function getCommand(rt: Runtime): Command {
  return new Command('get')
    .description('show an asset and its Status (Processing, Active, Failed)')
    .argument('<asset_id>')
    .option(ASSET_MODEL_FLAG, ASSET_MODEL_HELP)
    .addHelpText(
      'after',
      '\nExamples:\n  for ref in $refs; do gw beta asset get "$ref"; done      # asset://ID, Asset://ID or the bare id\n  gw beta asset get "$ref" --json | jq -r .Result.Status',
    )
    .action(
      rt.action(async (ctx, ref: string, opts: { model?: string }) => {
        const id = assetId(ref);
        const model = assetModel(ctx, opts.model);
        const assets = await import('../../../client/resources/beta-assets.js');
        const client = await ctx.client();
        const res = await assets.getAsset(client, { model, Id: id }, { signal: ctx.signal });
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
            rows.push([k, /(Time|At)$/.test(k) ? asTime(v) : v]);
          }
        }
        ctx.out.keyValue(rows);
        if (a.Status === 'Active') ctx.out.tip(`reference it as asset://${a.Id}`);
        if (a.Status === 'Failed') ctx.out.tip('review or preprocessing failed; the library shows no reason');
      }),
    );
}
