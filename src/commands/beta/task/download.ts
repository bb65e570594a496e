import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../../cli/verb.js';

export const taskDownloadFlags = z.object({
  output: flag(z.string().optional(), {
    flag: '-o, --output <file>',
    help: 'where to write the video (- for standard output); default <task_id>.mp4',
  }),
  lastFrame: flag(z.string().optional(), {
    flag: '--last-frame <file>',
    help: 'also write content.last_frame_url (tasks created with --return-last-frame)',
  }),
  force: flag(z.boolean().optional(), { flag: '--force', help: 'overwrite existing files' }),
  sha256: flag(z.boolean().optional(), {
    flag: '--sha256',
    help: 'also compute the SHA-256 of the file while it streams (~0.5 s of CPU per GiB)',
  }),
});

/** `gw beta task download <task_id>`: writes the video (and the last frame) of a succeeded task. */
export const taskDownloadVerb = defineVerb<typeof taskDownloadFlags, [string]>({
  name: 'download',
  description: "save a succeeded task's video (content.video_url) and optionally its last frame",
  args: [{ name: '<task_id>', help: '' }],
  flags: taskDownloadFlags,
  notes: `Writes <file>.part and renames it when complete; an interrupted download resumes with a Range request when run
again. Prints each written path; with --json {id, video: {path, bytes, resumed, sha256?}, last_frame?} (sha256 with --sha256).
The result URL lives about 24 hours: download it soon after the task succeeds.`,
  examples: ['gw beta task download "$id" -o surf.mp4 --force', 'gw beta task download "$id" -o - | wc -c'],
  handler: () => import('./download.run.js'),
});

export default function downloadCommand(rt: Runtime): Command {
  return verbCommand(taskDownloadVerb, rt);
}
