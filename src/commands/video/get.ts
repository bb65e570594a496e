import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';

/** `gw video get <video_id>`: the record as `key: value` lines, `--json` raw. */
export const getVerb = defineVerb<never, [string]>({
  name: 'get',
  description: 'show a video: state, result URL, expires_at (local time and how long is left)',
  args: [{ name: '<video_id>', help: 'the video_id printed by gw video create' }],
  examples: ['gw video get "$id"', 'gw video get "$id" --json | jq -r .status'],
  handler: () => import('./get.run.js'),
});

export function getCommand(rt: Runtime): Command {
  return verbCommand(getVerb, rt);
}
