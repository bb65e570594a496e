import type { Asset } from '../../../contract/beta-assets.js';
import type { Cell } from '../../../ui/output.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { assetGetFlags } from './get.js';
import { formatLocalTime } from '../../video/shared.js';
import { assetId, assetModel } from './ids.js';
import * as assets from '../../../client/resources/beta-assets.js';

/** A time field of an asset (ISO text or epoch seconds) in gw's one date format; anything else as sent. */
function asTime(v: string | number): string | number {
  const ms = typeof v === 'number' ? v * 1000 : /^\d{4}-\d\d-\d\d/.test(v) ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? formatLocalTime(new Date(ms)) : v;
}

/** Shows one asset. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof assetGetFlags>,
  ref: string,
): Promise<void> {
  const id = assetId(ref);
  const model = assetModel(ctx, opts.model);
  const client = await ctx.client();
  const res = await assets.getAsset(client, { model, Id: id }, { signal: ctx.signal });
  await ctx.out.result(res.data, (d) => human(ctx, d.Result));
}

function human(ctx: Context, a: Asset): void {
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
}
