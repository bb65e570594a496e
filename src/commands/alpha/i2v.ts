import type { Command } from 'commander';
import * as z from 'zod';
import { ALPHA_ASPECT_RATIOS, ALPHA_DURATIONS, ALPHA_MODES, ALPHA_SOUND } from '../../contract/alpha.js';
import { ALPHA_MODELS } from '../../contract/catalog.js';
import type { Runtime } from '../../cli/context.js';
import { parsed } from '../../cli/flag-types.js';
import { defineVerb, flag, verbCommand, type FlagMeta } from '../../cli/verb.js';
import { parseCameraFlag, parseDynamicMaskFlag, parseJsonFlag, parseNumberFlag } from './i2v-flags.js';

/** What a flag adds to its spelling and help: values completion offers, request fields it fills. */
type Extra = Pick<FlagMeta, 'offer' | 'fills'>;

const str = (f: string, help: string, extra: Extra = {}): z.ZodOptional<z.ZodString> =>
  flag(z.string().optional(), { flag: f, help, ...extra });

export const i2vFlags = z.object({
  image: str(
    '--image <url|file>',
    'first-frame image: URL, or a PNG/JPEG file (required, here or in --body)',
  ),
  imageTail: str('--image-tail <url|file>', 'last-frame image: URL, or a PNG/JPEG file', {
    fills: ['image_tail'],
  }),
  prompt: str('--prompt <text>', 'text prompt'),
  negativePrompt: str('--negative-prompt <text>', 'negative text prompt', { fills: ['negative_prompt'] }),
  model: str(
    '--model <alpha model>',
    "model_name (default: the profile's defaults.i2v, else alpha-v1; see gw models)",
    { offer: ALPHA_MODELS, fills: ['model_name'] },
  ),
  mode: str('--mode <std|pro>', 'generation mode (default std)', { offer: ALPHA_MODES }),
  duration: str('--duration <5|10>', 'seconds, sent as the string "5" or "10" (default 5)', {
    offer: ALPHA_DURATIONS,
  }),
  aspectRatio: str('--aspect-ratio <16:9|9:16|1:1>', 'aspect ratio (default 16:9)', {
    offer: ALPHA_ASPECT_RATIOS,
    fills: ['aspect_ratio'],
  }),
  cfgScale: flag(parsed((t) => parseNumberFlag('--cfg-scale', 'cfg_scale', t)).optional(), {
    flag: '--cfg-scale <0..1>',
    help: 'prompt adherence, 0 to 1 (alpha-v1, alpha-v1-5, alpha-v1-6 only)',
    fills: ['cfg_scale'],
  }),
  staticMask: str('--static-mask <url|file>', 'static brush area: URL, or a PNG/JPEG file', {
    fills: ['static_mask'],
  }),
  dynamicMask: flag(z.array(parsed(parseDynamicMaskFlag)).optional(), {
    flag: '--dynamic-mask <file>:<x,y;x,y;...>',
    help: 'dynamic brush: a PNG/JPEG mask file and its trajectory (integer points, origin bottom-left); repeatable',
    repeat: 'collect',
    fills: ['dynamic_masks'],
  }),
  camera: flag(parsed(parseCameraFlag).optional(), {
    flag: '--camera <type>[:key=value,...]',
    help: 'camera_control, e.g. simple:zoom=5 or down_back',
    fills: ['camera_control'],
  }),
  sound: str('--sound <on|off>', 'sound (alpha-v2-6 only)', { offer: ALPHA_SOUND }),
  voice: flag(z.array(parsed((t) => parseJsonFlag('--voice', 'voice_list', t))).optional(), {
    flag: '--voice <json>',
    help: 'one voice_list entry as JSON, e.g. \'{"voice_id":"v1"}\'; repeatable',
    repeat: 'collect',
    fills: ['voice_list'],
  }),
  watermarkInfo: flag(parsed((t) => parseJsonFlag('--watermark-info', 'watermark_info', t)).optional(), {
    flag: '--watermark-info <json>',
    help: 'watermark_info as JSON, e.g. \'{"enabled":true}\'',
    fills: ['watermark_info'],
  }),
  callbackUrl: str('--callback-url <https url>', 'notification address'),
  externalTaskId: str('--external-task-id <id>', 'your own task id'),
  body: str('--body <file.json>', 'a whole or partial request body; flags override its fields'),
  multipart: flag(z.boolean().optional(), {
    flag: '--multipart',
    help: 'send multipart/form-data instead of JSON',
  }),
  dryRun: flag(z.boolean().optional(), {
    flag: '--dry-run',
    help: 'print the body (Base64 abbreviated) and send nothing',
  }),
});

/** `gw alpha i2v`: create an image-to-video task. */
export const i2vVerb = defineVerb<typeof i2vFlags>({
  name: 'i2v',
  description: 'create an image-to-video task (POST /alpha/v1/videos/image2video); prints the task id',
  flags: i2vFlags,
  notes: `Images: --image, --image-tail and --static-mask take an http(s) URL (sent as it is) or a local PNG or JPEG
file (read and sent as Base64). --dynamic-mask takes a local PNG/JPEG mask file: the document wants masks
as Base64. Trajectory points are integer pixel coordinates with the origin at the BOTTOM-LEFT of the image,
2 to 77 points per mask, at most 6 masks. A mask's resolution must equal the image's: checked before
sending when both are local files, otherwise a warning says the upstream may fail.
Exclusive: --image-tail, the masks (--static-mask/--dynamic-mask) and --camera cannot be combined.
Model rules: --cfg-scale only alpha-v1, alpha-v1-5, alpha-v1-6; --sound and --voice only alpha-v2-6
(--voice needs --sound on, at most 2). Defaults (the gateway's): alpha-v1, std, 16:9, 5 seconds.
--body <file.json> gives a whole or partial request body; flags override its fields.
Output: the task id (also written to the journal first: gw history --kind alpha); --json: the whole answer.`,
  examples: [
    'gw alpha i2v --image first.png --prompt "the cat turns its head"',
    'gw alpha i2v --image https://example.com/a.jpg --camera simple:zoom=5 --duration 10 --mode pro',
    'gw alpha i2v --image first.png --dynamic-mask "mask.png:120,80;300,90;480,120" --static-mask still.png',
    `gw alpha i2v --image first.png --model alpha-v2-6 --sound on --voice '{"voice_id":"v1"}'`,
    'gw alpha i2v --body request.json --prompt "override the prompt" --dry-run',
  ],
  handler: () => import('./i2v.run.js'),
});

export default function i2vCommand(rt: Runtime): Command {
  return verbCommand(i2vVerb, rt);
}
