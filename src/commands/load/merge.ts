import * as z from 'zod';
import { defineVerb, flag } from '../../cli/verb.js';

export const loadMergeFlags = z.object({
  out: flag(z.string().optional(), { flag: '--out <file.json>', help: 'write the merged report to a file' }),
  html: flag(z.string().optional(), {
    flag: '--html <file>',
    help: 'write a self-contained HTML report of the merged run',
  }),
  allowMissing: flag(z.boolean().default(false), {
    flag: '--allow-missing',
    help: 'merge even when shards of the run are missing (the report names them)',
  }),
});

/** `gw load merge`: exact merge of reports of one run from several machines. */
export const loadMergeVerb = defineVerb<typeof loadMergeFlags, [string[]]>({
  name: 'merge',
  description: 'exact merge of reports of the same test run from several machines',
  args: [{ name: '<run.json...>', help: 'reports written by gw load --out' }],
  flags: loadMergeFlags,
  // `gw load --out all.json merge a.json b.json`: written before `merge`, commander gives them to `gw load`.
  inherit: ['out', 'html'],
  notes: `Steps are matched by position and label; counts add up, histograms add bucket by bucket (percentiles of all
requests, not averages of percentiles), and each step's duration is the longest of its parts (the machines ran side
by side), so rates add up. The same report given twice (the same file, or a copy of it) is refused: it would count
every request twice. A file that is not a complete gw load report is exit 2 naming the file and the field. Prints
the merged summary (or the report with --json).

Shards (reports of gw load --shard): each report names its run (a hash of the gateway, the settings, the
prompts, --start-at and n) and its shard k/n. Reports of different runs, or shards mixed with reports that are
none, are exit 2. A shard given by two reports (a scheduler that ran an index twice) is taken once: the finished
one, then the one with more requests, then the later one; the other is named under shards.skipped. Missing shards
are exit 1 unless --allow-missing; the merged report names them (shards.missing and a warning) and lists each
shard's late start after --start-at (shards.late_start_ms).`,
  handler: () => import('./merge.run.js'),
});
