import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import { readPrompt } from '../shared/text.js';
import { checkImageOut, imageBody, printImages } from './common.js';
import type { editFlags } from './edit.js';
import * as images from '../../client/resources/images.js';

/** Edits images; prints URLs or the paths of the saved files. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof editFlags>,
  words: string[],
): Promise<void> {
  const body = {
    ...imageBody(await readPrompt(ctx, words), { ...opts, model: ctx.model(opts.model, 'image') }),
    images: opts.image.map((url) => ({ image_url: url })),
  };
  checkImageOut(opts);
  const client = await ctx.client();
  const res = await images.edit(client, body, { signal: ctx.signal });
  await printImages(ctx, res, opts, {
    message: 'the edit returned no image',
    hint: 'an image edit without a product means an input URL is not publicly reachable or the model is not an edit model; use public https URLs and an edit model (see `gw models`)',
  });
}
