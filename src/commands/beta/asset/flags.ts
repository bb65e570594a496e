/** The flag every asset verb shares. */
import * as z from 'zod';
import { flag } from '../../../cli/verb.js';
import { ASSET_MODEL_FALLBACK } from './ids.js';

/** `-m, --model`: one rule for every asset verb (the profile's defaults.beta, else the fallback). */
export const assetModelFlag = (): z.ZodOptional<z.ZodString> =>
  flag(z.string().optional(), {
    flag: '-m, --model <model>',
    help: `public model name (default: the profile's defaults.beta, else ${ASSET_MODEL_FALLBACK})`,
  });
