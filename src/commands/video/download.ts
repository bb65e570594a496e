import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const downloadFlags = z.object({
  output: flag(z.string().optional(), {
    flag: '-o, --output <file>',
    help: 'where to write (default <video_id>.mp4; - for standard output)',
  }),
  force: flag(z.boolean().default(false), { flag: '--force', help: 'overwrite an existing file' }),
  sha256: flag(z.boolean().default(false), {
    flag: '--sha256',
    help: 'also compute the SHA-256 of the file while it streams (~0.5 s of CPU per GiB)',
  }),
});

/** `gw video download <video_id> [-o <file>|-] [--force] [--sha256]`. */
export const downloadVerb = defineVerb<typeof downloadFlags, [string]>({
  name: 'download',
  description: 'download a finished video (atomic: <file>.part, renamed when complete; resumes a kept .part)',
  args: [{ name: '<video_id>', help: 'the video_id printed by gw video create' }],
  flags: downloadFlags,
  notes: `Follows the redirect of GET /v1/videos/{id}/content (the token is never sent to another origin) and streams to
<file>.part in constant memory; the file appears under its name only when every byte arrived. An interrupted
download keeps the .part and the same command resumes it (Range request). Prints the path written;
--json prints {"path": "/abs/fox.mp4", "bytes": 1234567, "resumed": false}, plus "sha256": "…" with --sha256 (the gateway publishes
no checksum, so the hash is computed only on request: ~0.5 s of CPU per GiB).`,
  examples: ['gw video download "$id" -o fox.mp4 --force', 'gw video download "$id" -o - | wc -c'],
  handler: () => import('./download.run.js'),
});

export function downloadCommand(rt: Runtime): Command {
  return verbCommand(downloadVerb, rt);
}
