import type { Command } from 'commander';
import * as z from 'zod';
import { VIDEO_RESOLUTIONS } from '../../contract/video.js';
import { UsageError } from '../../core/errors.js';
import type { Runtime } from '../../cli/context.js';
import { list, parsed } from '../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

/** A JSON number flag (`--seconds`, `--seed`): the text must be a number; the contract checks the range. */
const numberText = (field: string, rule: string, code: string): ReturnType<typeof parsed<number>> =>
  parsed((text) => {
    if (!/^-?\d+(\.\d+)?$/.test(text.trim())) {
      throw new UsageError(`${field}: "${text}" is not a number; use ${rule}`, { field, code });
    }
    return Number(text);
  });

export const createFlags = z.object({
  model: flag(z.string().optional(), {
    flag: '-m, --model <model>',
    help: "video model (clip-1.1-t2v, vid-2.7-i2v, …; default: the profile's defaults.video)",
  }),
  seconds: flag(numberText('seconds', 'an integer from 2 to 15', 'invalid_duration').optional(), {
    flag: '--seconds <n>',
    help: 'integer seconds, 2 to 15 (clip-1.x: 3 to 15)',
  }),
  resolution: flag(z.string().optional(), {
    flag: '--resolution <r>',
    help: '720p or 1080p (clip-1.1 defaults to 1080p)',
    offer: VIDEO_RESOLUTIONS,
  }),
  seed: flag(numberText('seed', 'an integer from 0 to 2147483647', 'invalid_seed').optional(), {
    flag: '--seed <n>',
    help: 'integer 0 to 2147483647, sent as a JSON number',
  }),
  ref: flag(list(), {
    flag: '--ref <url>',
    help: 'reference image (https) or video (.mp4/.mov) → input_reference; repeatable',
    fills: ['input_reference'],
    repeat: 'collect',
  }),
  inputImage: flag(z.string().optional(), {
    flag: '--input-image <url>',
    help: 'first-frame image (https) → input_image (i2v models)',
    fills: ['input_image'],
  }),
  refVideo: flag(z.array(z.string()).optional(), {
    flag: '--ref-video <url>',
    help: 'reference video (.mp4/.mov) → references.video[]; repeatable',
    fills: ['references.video'],
    repeat: 'collect',
  }),
  wait: flag(z.boolean().default(false), {
    flag: '--wait',
    help: 'then wait until it finishes (the id is printed first)',
  }),
  download: flag(z.string().optional(), {
    flag: '--download <file>',
    help: 'then wait and download it to <file> (implies --wait)',
  }),
  sha256: flag(z.boolean().default(false), {
    flag: '--sha256',
    help: "with --download: also compute the file's SHA-256",
  }),
  dryRun: flag(z.boolean().default(false), {
    flag: '--dry-run',
    help: 'print the body and the list price; send nothing',
  }),
});

/** `gw video create <prompt> -m <model> …`: prints only the video_id (journalled first). */
export const createVerb = defineVerb<typeof createFlags, [string]>({
  name: 'create',
  description:
    'create a video task; prints only its video_id (--dry-run: the body and list price, sends nothing)',
  args: [{ name: '<prompt>', help: 'description of the video' }],
  flags: createFlags,
  notes: `Every rule of the video API is checked before sending (exit 2, nothing sent; --no-validate sends anyway).
The video_id is written to the journal (gw history) before it is printed. --json prints the gateway's answer;
with --wait/--download it prints one document {"id", "video": <final record>, "download": {"path", "bytes",
"resumed", "sha256" (with --sha256)}} instead. Ctrl-C or --timeout print the command that resumes the whole job.`,
  examples: [
    'id=$(gw video create "a red fox in snow" -m clip-1.1-t2v --seconds 5 --resolution 720p)',
    'gw video create "a red fox in snow" -m clip-1.1-t2v --seconds 5 --dry-run',
    'gw video create "the fox runs" -m clip-1.1-i2v --input-image https://example.com/fox.png --seconds 5',
    'gw video create "in this style" -m vid-2.7-r2v --ref-video https://example.com/a.mp4 --download styled.mp4',
  ],
  handler: () => import('./create.run.js'),
});

export function createCommand(rt: Runtime): Command {
  return verbCommand(createVerb, rt);
}
