import type { Command } from 'commander';
import * as z from 'zod';
import { BETA_TASK_STATUSES } from '../../../contract/beta.js';
import type { Runtime } from '../../../cli/context.js';
import { positiveInt } from '../../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../../cli/verb.js';

export const taskListFlags = z.object({
  // Checked by the contract (with --no-validate the gateway decides), so not an enum here.
  status: flag(z.string().optional(), {
    flag: '--status <s>',
    help: `filter by status: ${BETA_TASK_STATUSES.join(', ')}`,
    offer: BETA_TASK_STATUSES,
  }),
  model: flag(z.string().optional(), {
    flag: '--model <m>',
    help: 'filter by the public model name used at creation',
  }),
  ids: flag(z.array(z.string()).optional(), {
    flag: '--ids <a,b>',
    help: 'only these task ids (comma-separated; repeatable)',
    repeat: 'csv',
  }),
  page: flag(positiveInt('page').optional(), { flag: '--page <n>', help: 'page number, from 1' }),
  pageSize: flag(positiveInt('page-size').optional(), { flag: '--page-size <n>', help: 'items per page' }),
  all: flag(z.boolean().optional(), {
    flag: '--all',
    help: 'walk every page from --page (default 1) to the end',
  }),
});

/** `gw beta task list`: the tenant's tasks as a table; `--all` walks every page. */
export const taskListVerb = defineVerb<typeof taskListFlags>({
  name: 'list',
  description: "list this tenant's tasks (table: id, model, status, resolution, duration, created)",
  flags: taskListFlags,
  notes:
    "With --json: the gateway's {items, total}; with --all one document {items, total} holding every page.",
  examples: [
    'gw beta task list --status running',
    "gw beta task list --all --page-size 100 --json | jq -r '.items[].id'",
    'gw beta task list --ids "$id"',
  ],
  handler: () => import('./list.run.js'),
});

export default function listCommand(rt: Runtime): Command {
  return verbCommand(taskListVerb, rt);
}
