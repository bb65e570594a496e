import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../../cli/context.js';
import { positiveDurationText } from '../../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../../cli/verb.js';

export const taskWaitFlags = z.object({
  timeout: flag(positiveDurationText('--timeout').optional(), {
    flag: '--timeout <dur>',
    help: 'give up after this long (exit 4, the resume command on stderr); default: no limit',
  }),
});

/** `gw beta task wait <task_id>`: exit 0 succeeded, 1 failed/expired/cancelled, 4 timeout. */
export const taskWaitVerb = defineVerb<typeof taskWaitFlags, [string]>({
  name: 'wait',
  description: 'wait until a task ends: exit 0 succeeded, 1 failed/expired/cancelled, 4 timeout',
  args: [{ name: '<task_id>', help: '' }],
  flags: taskWaitFlags,
  notes: `Prints nothing on stdout and "<task_id> <final status>" on stderr (a spinner on a terminal), as every wait
does; with --json the final record as the gateway sent it, also when it ended failed/expired/cancelled. Ctrl-C exits 130 and prints the command that resumes the wait. Polls with exponential backoff (2 s to 30 s) and tolerates brief 429/5xx answers.`,
  examples: ['gw beta task wait "$id" --timeout 20m && gw beta task download "$id" -o clip.mp4'],
  handler: () => import('./wait.run.js'),
});

export default function waitCommand(rt: Runtime): Command {
  return verbCommand(taskWaitVerb, rt);
}
