import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { positiveDuration, positiveDurationText } from '../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const waitFlags = z.object({
  timeout: flag(positiveDurationText('--timeout').optional(), {
    flag: '--timeout <dur>',
    help: 'give up after this long (exit 4, the resume command on stderr); default: no limit',
  }),
  interval: flag(positiveDuration('--interval').optional(), {
    flag: '--interval <dur>',
    help: 'first polling delay, more than 0 (default 2s; backoff with jitter, capped at 30s)',
  }),
  download: flag(z.string().optional(), {
    flag: '--download <file>',
    help: 'then save the video to <file> (one id only; atomic, resumes a kept .part)',
  }),
  sha256: flag(z.boolean().default(false), {
    flag: '--sha256',
    help: 'with --download: also compute the SHA-256 of the file',
  }),
});

/** `gw video wait <video_id>...`: poll until completed/success (0), failed/cancelled (1), timeout (4). */
export const waitVerb = defineVerb<typeof waitFlags, [string[]]>({
  name: 'wait',
  description:
    'wait until videos reach a terminal state (exit 0 all completed, 1 any failed/cancelled, 4 timeout)',
  args: [{ name: '<video_id...>', help: 'the video_id(s) printed by gw video create' }],
  flags: waitFlags,
  notes: `Polls GET /v1/videos/{id} with exponential backoff and jitter, honouring Retry-After. queued, in_progress and
processing keep it waiting; Ctrl-C exits 130 and prints the command that resumes the wait.

Several ids are followed together, one after the other; --timeout bounds the whole wait. Prints nothing on stdout
and "<video_id> <final status>" per id on stderr (a spinner on a terminal), as every wait does.

--json prints the final record exactly as the gateway sent it (also when it ended failed/cancelled), e.g.
  {"video_id": "video_…", "status": "completed", "url": "https://…", "expires_at": 1767312000, …}
with several ids {"videos": [<record>, …]}; with --download {"id", "video", "download": {"path", "bytes",
"resumed", "sha256"?}}.`,
  examples: [
    'id=$(gw video create "a red fox in snow" -m clip-1.1-t2v --seconds 5 --resolution 720p)',
    'gw video wait "$id" --timeout 15m && gw video download "$id" -o fox.mp4 --force',
    'gw video wait "$id" --download fox-copy.mp4 --timeout 15m',
  ],
  handler: () => import('./wait.run.js'),
});

export function waitCommand(rt: Runtime): Command {
  return verbCommand(waitVerb, rt);
}
