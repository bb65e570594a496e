import { betaTaskListQuerySchema, type BetaTask } from '../../../contract/beta.js';
import { check } from '../../../contract/validate.js';
import { UsageError } from '../../../core/errors.js';
import type { Context } from '../../context.js';
import type { Flags } from '../../verb.js';
import type { taskListFlags } from './list.js';
import { formatLocalTime } from '../../video/shared.js';

/** Lists the tenant's tasks (every page with --all). */
export default async function run(ctx: Context, opts: Flags<typeof taskListFlags>): Promise<void> {
  const tasks = await import('../../../client/resources/beta-tasks.js');
  const page = opts.page ?? 1;
  const pageSize = opts.pageSize;
  const params = { status: opts.status, model: opts.model, taskIds: opts.ids, pageSize };
  if (ctx.globals.validate) {
    const r = check(betaTaskListQuerySchema, {
      'filter.status': opts.status,
      'filter.model': opts.model,
    });
    if (!r.ok) {
      const flag = r.violation.field === 'filter.status' ? 'status' : 'model';
      throw new UsageError(`${flag}: ${r.violation.message}`, { field: flag });
    }
  }
  const client = await ctx.client();
  let items: BetaTask[] = [];
  let total: number;
  let body: unknown;
  let size = pageSize;
  let firstTotal: number | undefined;
  const seen = new Set<string>();
  for (let p = page; ; p++) {
    const res = await tasks.list(client, { ...params, page: p }, { signal: ctx.signal });
    const got = res.data.items;
    body = res.data;
    size ??= got.length; // the server's default page size (not shown in §4.1)
    // A page of ids already seen (a server ignoring `page`) ends the walk instead of looping.
    const repeated = got.length > 0 && got.every((t) => seen.has(t.id));
    for (const t of got) seen.add(t.id);
    if (!repeated) items = items.concat(got);
    total = res.data.total;
    firstTotal ??= total;
    // The end: an empty or short page, or every item of the first page's total counted (a total that
    // grows while walking must not loop forever).
    if (
      opts.all !== true ||
      repeated ||
      got.length === 0 ||
      got.length < size ||
      (page - 1) * size + items.length >= firstTotal
    )
      break;
  }
  await ctx.out.result(opts.all === true ? { items, total } : body, () =>
    humanList(ctx, items, total, opts.all),
  );
}

async function humanList(
  ctx: Context,
  items: BetaTask[],
  total: number,
  all: boolean | undefined,
): Promise<void> {
  await ctx.out.table(
    ['id', 'model', 'status', 'resolution', 'duration', 'created'],
    items.map((t) => [
      t.id,
      t.model,
      t.status,
      t.resolution,
      t.duration !== undefined ? `${t.duration}s` : undefined,
      t.created_at !== undefined ? formatLocalTime(new Date(t.created_at * 1000)) : undefined,
    ]),
  );
  if (all !== true && items.length < total) {
    ctx.out.tip(`showing ${items.length} of ${total}; use --page, or --all for every page`);
  }
}
