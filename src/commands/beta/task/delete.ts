import type { Command } from 'commander';
import type { Runtime } from '../../../cli/context.js';
import { defineVerb, verbCommand } from '../../../cli/verb.js';

/** `gw beta task delete <task_id>`: cancel a queued task, or hide a finished one. */
export const taskDeleteVerb = defineVerb<never, [string]>({
  name: 'delete',
  description: 'cancel a queued task, or hide a finished one from this tenant (running tasks: 409)',
  args: [{ name: '<task_id>', help: '' }],
  notes: `What DELETE does depends on the task's status:
  queued                      → cancelled (it never runs)
  succeeded, failed, expired  → hidden from this tenant (get/list answer task_not_found);
                                the gateway keeps its audit and billing records
  running                     → refused: 409 InvalidAction.RunningTaskDeletion; wait for it to end, then delete
  cancelled                   → refused by the service
Prints what happened on stderr; with --json the gateway's answer body.`,
  examples: ['gw beta task delete "$id"'],
  handler: () => import('./delete.run.js'),
});

export default function deleteCommand(rt: Runtime): Command {
  return verbCommand(taskDeleteVerb, rt);
}
