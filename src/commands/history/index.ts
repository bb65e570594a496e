import type { Command } from 'commander';
import * as z from 'zod';
import { UsageError } from '../../core/errors.js';
import type { Runtime } from '../../cli/context.js';
import { parsed } from '../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

const DEFAULT_LIMIT = 50;

export const historyFlags = z.object({
  kind: flag(z.enum(['video', 'alpha', 'beta-task', 'beta-asset']).optional(), {
    flag: '--kind <kind>',
    help: 'only this kind',
  }),
  limit: flag(
    parsed((text) => {
      if (!/^\d+$/.test(text))
        throw new UsageError(`--limit: "${text}" is not a whole number`, { field: '--limit' });
      return Number(text);
    }).default(DEFAULT_LIMIT),
    { flag: '--limit <n>', help: `newest n entries (default ${DEFAULT_LIMIT}; 0 = all)`, defaultText: '' },
  ),
  refresh: flag(z.boolean().default(false), {
    flag: '--refresh',
    help: 'ask the gateway for the current state first (videos, beta tasks and assets)',
  }),
});

/** `gw history`: every task and asset this machine created, from the journal, newest first. */
export const historyVerb = defineVerb<typeof historyFlags>({
  name: 'history',
  description: 'tasks and assets this machine created (the journal), with their last known state',
  flags: historyFlags,
  notes: `The journal is written (and flushed to disk) before any command prints a created id, so a script that crashes
never loses one. It lives in $GW_STATE_DIR (default ~/.local/state/gw/journal.jsonl) and never holds a token.
--json prints an array of {kind, id, model, createdAt, requestId, profile, baseUrl, state, updatedAt, extra}.`,
  examples: [
    'gw history',
    'gw history --kind video --limit 5 --refresh',
    `gw history --json | jq -r '.[] | select(.state == "completed") | .id'`,
  ],
  handler: () => import('./run.js'),
});

export default function historyCommand(rt: Runtime): Command {
  return verbCommand(historyVerb, rt);
}
