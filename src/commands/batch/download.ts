import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';
import { waitLockFlag } from './run.js';

export const batchDownloadFlags = z.object({ waitLock: waitLockFlag });

/** `gw batch download <dir>`. */
export const batchDownloadVerb = defineVerb<typeof batchDownloadFlags, [string]>({
  name: 'download',
  description:
    'download the files of succeeded video and beta tasks a batch does not have (after --no-download)',
  args: [{ name: '<dir>', help: 'a batch directory (the --out of gw batch run)' }],
  flags: batchDownloadFlags,
  notes: `For every succeeded video or beta task in results.jsonl whose files are missing (a run with --no-download, or
files removed since), downloads them into <dir>/files/ as gw batch run does (resumable, atomic, the task's own
.part only) and rewrites results.jsonl with their "files". Nothing is created or billed. Items still running are
finished by gw batch run (the same command) or gw batch retry. Exit 0 when every file is there, 1 when a
download failed (its line is kept as it was; run it again to resume). --json prints {dir, downloaded, bytes,
present, failed: [{custom_id, code, message}]}.`,
  examples: [`gw batch run jobs.jsonl --out out --no-download`, `gw batch download out`],
  handler: () => import('./download.run.js'),
});

export function downloadCommand(rt: Runtime): Command {
  return verbCommand(batchDownloadVerb, rt);
}
