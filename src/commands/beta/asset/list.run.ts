import type { Asset } from '../../../contract/beta-assets.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { assetListFlags } from './list.js';
import { walkPages } from '../pages.js';
import { assetModel } from './ids.js';
import * as assets from '../../../client/resources/beta-assets.js';

/** Lists the assets of groups (every page with --all). */
export default async function run(ctx: Context, opts: Flags<typeof assetListFlags>): Promise<void> {
  const model = assetModel(ctx, opts.model);
  const first = opts.page ?? 1;
  const pageSize = opts.pageSize;
  const client = await ctx.client();
  const { items, total, body } = await walkPages<Asset>(
    { first, pageSize, all: opts.all === true },
    async (page) => {
      const res = await assets.listAssets(
        client,
        { model, groupIds: opts.group, page, pageSize },
        { signal: ctx.signal },
      );
      const r = res.data.Result;
      return { items: r.Items, total: r.TotalCount, pageSize: r.PageSize, body: res.data };
    },
    (a) => a.Id,
  );
  await ctx.out.result(opts.all === true ? { Items: items, TotalCount: total } : body, async () => {
    await ctx.out.table(
      ['id', 'group', 'type', 'status'],
      items.map((a) => [a.Id, a.GroupId, a.AssetType, a.Status]),
    );
    if (opts.all !== true && items.length < total)
      ctx.out.tip(`showing ${items.length} of ${total}; use --page, or --all`);
  });
}
