import type { Command } from 'commander';
import * as z from 'zod';
import { BETA_RATIOS, BETA_RESOLUTIONS } from '../../../contract/beta.js';
import type { Runtime } from '../../../cli/context.js';
import { intOrText } from '../../../cli/flag-types.js';
import { defineVerb, flag, verbCommand, type FlagMeta } from '../../../cli/verb.js';

/** What a flag adds to its spelling and help: values completion offers, request fields it fills. */
type Extra = Pick<FlagMeta, 'offer' | 'fills'>;

const str = (f: string, help: string, extra: Extra = {}): z.ZodOptional<z.ZodString> =>
  flag(z.string().optional(), { flag: f, help, ...extra });
const many = (f: string, help: string): z.ZodOptional<z.ZodArray<z.ZodString>> =>
  flag(z.array(z.string()).optional(), { flag: f, help, repeat: 'collect' });
const bool = (f: string, help: string, negate?: string, extra: Extra = {}): z.ZodOptional<z.ZodBoolean> =>
  flag(z.boolean().optional(), { flag: f, help, ...(negate !== undefined ? { negate } : {}), ...extra });
const intText = (f: string, help: string, extra: Extra = {}): z.ZodOptional<ReturnType<typeof intOrText>> =>
  flag(intOrText().optional(), { flag: f, help, ...extra });

export const taskCreateFlags = z.object({
  model: str(
    '-m, --model <model>',
    'public model name (gamma-video-2-0, -fast, -mini, -filter-off, -fast-filter-off) or a dated name',
  ),
  firstFrame: str(
    '--first-frame <asset>',
    'image asset as the strict first frame (asset://<id>, Asset://<id> or a bare id)',
  ),
  lastFrame: str('--last-frame <asset>', 'image asset as the strict last frame'),
  refImage: many('--ref-image <asset>', 'reference image asset (repeatable)'),
  refVideo: many('--ref-video <asset>', 'reference video asset (repeatable; 1 to edit/extend, 2-3 to join)'),
  refAudio: many('--ref-audio <asset>', 'reference audio asset (repeatable; not on mini)'),
  duration: intText('--duration <n>', 'seconds 4..15, or -1 to let the model choose'),
  ratio: str('--ratio <r>', `aspect ratio: ${BETA_RATIOS.join(', ')}`, { offer: BETA_RATIOS }),
  resolution: str(
    '--resolution <r>',
    `${BETA_RESOLUTIONS.join(', ')} (4k only on gamma-video-2-0; fast and mini 480p/720p)`,
    { offer: BETA_RESOLUTIONS },
  ),
  generateAudio: bool('--generate-audio', 'generate audio', 'no audio', { fills: ['generate_audio'] }),
  watermark: bool('--watermark', 'keep the watermark', 'no watermark'),
  returnLastFrame: bool('--return-last-frame', 'also return content.last_frame_url', undefined, {
    fills: ['return_last_frame'],
  }),
  priority: intText('--priority <n>', 'queue priority 0..9'),
  serviceTier: str('--service-tier <t>', 'service tier (default, flex; flex not on mini)', {
    fills: ['service_tier'],
  }),
  draft: bool('--draft', 'draft mode (not on mini)'),
  body: str(
    '--body <file.json>',
    'a JSON body to start from; flags override its fields (content flags replace its content)',
  ),
  executionExpiresAfter: intText(
    '--execution-expires-after <s>',
    'execution expiry in seconds (usually 3600..259200)',
    { fills: ['execution_expires_after'] },
  ),
  safetyIdentifier: str('--safety-identifier <id>', 'stable end-user id (a hash is advised)', {
    fills: ['safety_identifier'],
  }),
  callbackUrl: str(
    '--callback-url <https url>',
    'https URL resolving to a public address; notified on state changes',
    { fills: ['callback_url'] },
  ),
  wait: bool('--wait', 'wait until the task ends (limit: --timeout; default none)'),
  download: str('--download <file>', 'wait, then save the video to <file>'),
  dryRun: bool('--dry-run', 'print the body and the SKU and price it would bill under; send nothing'),
});

/** `gw beta task create [prompt]`: prints the task id (journaled first); `--wait` and `--download` chain. */
export const taskCreateVerb = defineVerb<typeof taskCreateFlags, [string | undefined]>({
  name: 'create',
  description: 'create a native video task; prints its id',
  args: [{ name: '[prompt]', help: 'the prompt text (a content item of type text)' }],
  flags: taskCreateFlags,
  notes: `Prints only the task id (written to the local journal first, see gw history). With --wait/--download the id is
printed before waiting; exit codes then follow gw beta task wait. With --json: the gateway's {id}, or with --wait
one document {id, task, download?: {path, bytes, resumed}}; a timeout or Ctrl-C prints the command that resumes
the whole job (wait, then download). --dry-run needs no token.`,
  examples: [
    'gw beta task create "a lighthouse at dusk, slow dolly in" -m gamma-video-2-0 --resolution 1080p --duration 8',
    'gw beta task create "extend forward, keep the original clip" -m gamma-video-2-0-fast --ref-video "$(echo "$refs" | tail -1)"',
    'gw beta task create "the cat jumps" -m gamma-video-2-0-mini --first-frame "$(echo "$refs" | head -1)" --dry-run',
    'id=$(gw beta task create "waves" -m gamma-video-2-0-fast --download waves.mp4)',
  ],
  handler: () => import('./create.run.js'),
});

export default function createCommand(rt: Runtime): Command {
  return verbCommand(taskCreateVerb, rt);
}
