import { Command } from 'commander';
import {
  BETA_TASK_STATUSES,
  betaTaskListQuerySchema,
  intOrText,
  type BetaTask,
} from '../../../contract/beta.js';
import { check } from '../../../contract/validate.js';
import { UsageError } from '../../../core/errors.js';
import type { Runtime } from '../../context.js';
import { formatLocalTime } from '../../video/shared.js';

interface ListOptions {
  status?: string;
  model?: string;
  ids?: string[];
  page?: string;
  pageSize?: string;
  all?: boolean;
}

function positive(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const n = intOrText(value);
  if (typeof n !== 'number' || n < 1) {
    throw new UsageError(`${field}: must be an integer >= 1`, { field });
  }
  return n;
}

/** `gw beta task list`: the tenant's tasks as a table; `--all` walks every page. */
export default function listCommand(rt: Runtime): Command {
  return new Command('list')
    .description("list this tenant's tasks (table: id, model, status, resolution, duration, created)")
    .option('--status <s>', `filter by status: ${BETA_TASK_STATUSES.join(', ')}`)
    .option('--model <m>', 'filter by the public model name used at creation')
    .option(
      '--ids <a,b>',
      'only these task ids (comma-separated; repeatable)',
      (v: string, acc: string[] = []) => [
        ...acc,
        ...v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ],
    )
    .option('--page <n>', 'page number, from 1')
    .option('--page-size <n>', 'items per page')
    .option('--all', 'walk every page from --page (default 1) to the end')
    .addHelpText(
      'after',
      `
With --json: the gateway's {items, total}; with --all one document {items, total} holding every page.

Examples:
  gw beta task list --status running
  gw beta task list --all --page-size 100 --json | jq -r '.items[].id'
  gw beta task list --ids "$id"`,
    )
    .action(
      rt.action(async (ctx, opts: ListOptions) => {
        const tasks = await import('../../../client/resources/beta-tasks.js');
        const page = positive(opts.page, 'page') ?? 1;
        const pageSize = positive(opts.pageSize, 'page-size');
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
        if (ctx.globals.json) {
          ctx.out.json(opts.all === true ? { items, total } : body);
          return;
        }
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
        if (opts.all !== true && items.length < total) {
          ctx.out.tip(`showing ${items.length} of ${total}; use --page, or --all for every page`);
        }
      }),
    );
}
