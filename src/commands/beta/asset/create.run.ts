import { ASSET_TYPES, defaultAssetName, guessAssetType } from '../../../contract/beta-assets.js';
import { UsageError } from '../../../core/errors.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { assetCreateFlags } from './create.js';
import { assetModel } from './ids.js';
import { createAsset } from './journaled.js';
import { watchAssets, assertAllActive } from './wait.run.js';

/** Registers an asset from a URL; prints its id (with --wait, follows it to Active). */
export default async function run(ctx: Context, o: Flags<typeof assetCreateFlags>): Promise<void> {
  const opts = { ...o, model: assetModel(ctx, o.model) };
  const type = opts.type ?? guessAssetType(opts.url);
  if (type === undefined) {
    throw new UsageError(
      `type: cannot tell the AssetType of ${opts.url} from its extension; pass --type ${ASSET_TYPES.join('|')}`,
      {
        field: 'type',
      },
    );
  }
  const timeoutMs = ctx.waitLimitMs();
  const client = await ctx.client();
  const name = opts.name ?? defaultAssetName(opts.url);
  const { id, data } = await createAsset(ctx, client, { ...opts, type, name });
  if (opts.wait !== true) {
    await ctx.out.result(data, () => ctx.out.line(id));
    return;
  }
  ctx.out.humanLine(id);
  const [asset] = await watchAssets(ctx, client, opts.model, [id], { timeoutMs });
  await ctx.out.result({ id, asset }, () => {
    if (asset?.Status === 'Active') ctx.out.note(`asset ${id} is Active: use it as asset://${id}`);
  });
  assertAllActive(asset ? [asset] : []);
}
