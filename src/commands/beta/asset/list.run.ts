import type { Asset } from '../../../contract/beta-assets.js';
import type { Context } from '../../context.js';
import type { Flags } from '../../verb.js';
import type { assetListFlags } from './list.js';
import { assetModel } from './ids.js';

/** Lists the assets of groups (every page with --all). */
export default async function run(ctx: Context, opts: Flags<typeof assetListFlags>): Promise<void> {
  const model = assetModel(ctx, opts.model);
  const first = opts.page ?? 1;
  const pageSize = opts.pageSize;
  const assets = await import('../../../client/resources/beta-assets.js');
  const client = await ctx.client();
  let items: Asset[] = [];
  let total: number;
  let body: unknown;
  let size = pageSize;
  let firstTotal: number | undefined;
  const seen = new Set<string>();
  for (let p = first; ; p++) {
    const res = await assets.listAssets(
      client,
      { model, groupIds: opts.group, page: p, pageSize },
      { signal: ctx.signal },
    );
    const got = res.data.Result.Items;
    body = res.data;
    size ??= res.data.Result.PageSize ?? got.length;
    const repeated = got.length > 0 && got.every((a) => seen.has(a.Id));
    for (const a of got) seen.add(a.Id);
    if (!repeated) items = items.concat(got);
    total = res.data.Result.TotalCount;
    firstTotal ??= total;
    if (
      opts.all !== true ||
      repeated ||
      got.length === 0 ||
      got.length < size ||
      (first - 1) * size + items.length >= firstTotal
    )
      break;
  }
  await ctx.out.result(opts.all === true ? { Items: items, TotalCount: total } : body, async () => {
    await ctx.out.table(
      ['id', 'group', 'type', 'status'],
      items.map((a) => [a.Id, a.GroupId, a.AssetType, a.Status]),
    );
    if (opts.all !== true && items.length < total)
      ctx.out.tip(`showing ${items.length} of ${total}; use --page, or --all`);
  });
}
