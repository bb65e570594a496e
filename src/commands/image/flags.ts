/** The flags `gw image generate` and `gw image edit` share. */
import * as z from 'zod';
import { int } from '../../cli/flag-types.js';
import { IMAGE_RESPONSE_FORMATS } from '../../contract/text.js';
import { flag } from '../../cli/verb.js';

export const imageFlagFields = z.object({
  model: flag(z.string().optional(), {
    flag: '-m, --model <model>',
    help: "model name (see `gw models`; default: the profile's defaults.image)",
  }),
  size: flag(z.string().optional(), {
    flag: '--size <WxH>',
    help: 'size as <width>x<height>, e.g. 1024x1024',
  }),
  n: flag(int('n').optional(), { flag: '-n, --n <n>', help: 'number of images' }),
  // An unknown format is left for the contract to reject (or for --no-validate to send as it is).
  format: flag(z.string().optional(), {
    flag: '--format <format>',
    help: 'response_format: url or b64_json',
    offer: IMAGE_RESPONSE_FORMATS,
  }),
  out: flag(z.string().optional(), {
    flag: '--out <dir>',
    help: 'directory for base64 images (default: current directory)',
  }),
  force: flag(z.boolean().optional(), { flag: '--force', help: 'overwrite existing files in --out' }),
});
