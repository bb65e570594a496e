import { betaTaskListQuerySchema, type BetaTask } from '../../../contract/beta.js';
import { check } from '../../../contract/validate.js';
import { UsageError } from '../../../core/errors.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { taskListFlags } from './list.js';
import { walkPages } from '../pages.js';
import * as tasks from '../../../client/resources/beta-tasks.js';

/** Lists the tenant's tasks (every page with --all). */
export default async function run(ctx: Context, opts: Flags<typeof taskListFlags>): Promise<void> {
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
  const { items, total, body } = await walkPages<BetaTask>(
    { first: page, pageSize, all: opts.all === true },
    async (p) => {
      const res = await tasks.list(client, { ...params, page: p }, { signal: ctx.signal });
      return { items: res.data.items, total: res.data.total, body: res.data };
    },
    (t) => t.id,
  );
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
      t.created_at !== undefined ? ctx.out.time(t.created_at * 1000, { brief: true }) : undefined,
    ]),
    { keep: [0] },
  );
  if (all !== true && items.length < total) {
    ctx.out.tip(`showing ${items.length} of ${total}; use --page, or --all for every page`);
  }
}
