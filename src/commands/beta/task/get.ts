import type { Command } from 'commander';
import type { Runtime } from '../../../cli/context.js';
import { defineVerb, verbCommand } from '../../../cli/verb.js';

/** `gw beta task get <task_id>`: the task record as key-value lines (or the gateway body with --json). */
export const taskGetVerb = defineVerb<never, [string]>({
  name: 'get',
  description: 'show a task: model, status, resolution, ratio, duration, fps, seed, usage, times',
  args: [{ name: '<task_id>', help: '' }],
  examples: ['gw beta task get "$id"', 'gw beta task get "$id" --json | jq -r .content.video_url'],
  handler: () => import('./get.run.js'),
});

export default function getCommand(rt: Runtime): Command {
  return verbCommand(taskGetVerb, rt);
}
