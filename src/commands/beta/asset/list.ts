import { Command } from 'commander';
import type { Asset } from '../../../contract/beta-assets.js';
import { intOrText } from '../../../contract/beta.js';
import { UsageError } from '../../../core/errors.js';
import type { Runtime } from '../../context.js';
import { ASSET_MODEL_FLAG, ASSET_MODEL_HELP, assetModel } from './ids.js';

function positive(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const n = intOrText(value);
  if (typeof n !== 'number' || n < 1) throw new UsageError(`${field}: must be an integer >= 1`, { field });
  return n;
}

/** `gw beta asset list --group <id>...`: ListAssets (§4.2) as a table; `--all` walks every page. */
export default function listCommand(rt: Runtime): Command {
  return new Command('list')
    .description('list assets of groups (table: id, group, type, status)')
    .requiredOption('--group <id>', 'group id (repeatable)', (v: string, acc: string[] = []) => [...acc, v])
    .option(ASSET_MODEL_FLAG, ASSET_MODEL_HELP)
    .option('--page <n>', 'PageNumber, from 1')
    .option('--page-size <n>', 'PageSize')
    .option('--all', 'walk every page from --page (default 1)')
    .addHelpText(
      'after',
      `
With --json: the gateway's {ResponseMetadata, Result}; with --all one document {Items, TotalCount}.

Examples:
  gw beta asset list --group "$group" --all`,
    )
    .action(
      rt.action(
        async (
          ctx,
          opts: { group: string[]; model?: string; page?: string; pageSize?: string; all?: boolean },
        ) => {
          const model = assetModel(ctx, opts.model);
          const first = positive(opts.page, 'page') ?? 1;
          const pageSize = positive(opts.pageSize, 'page-size');
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
          if (ctx.globals.json) {
            ctx.out.json(opts.all === true ? { Items: items, TotalCount: total } : body);
            return;
          }
          await ctx.out.table(
            ['id', 'group', 'type', 'status'],
            items.map((a) => [a.Id, a.GroupId, a.AssetType, a.Status]),
          );
          if (opts.all !== true && items.length < total)
            ctx.out.tip(`showing ${items.length} of ${total}; use --page, or --all`);
        },
      ),
    );
}
