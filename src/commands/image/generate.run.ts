import type { Context } from '../../cli/context.js';
import { readPrompt } from '../shared/text.js';
import { checkImageOut, imageBody, printImages, type ImageOptions } from './common.js';
import * as images from '../../client/resources/images.js';

/** Generates images; prints URLs or the paths of the saved files. */
export default async function run(ctx: Context, opts: ImageOptions, words: string[]): Promise<void> {
  const model = ctx.model(opts.model, 'image');
  const body = imageBody(await readPrompt(ctx, words), { ...opts, model });
  checkImageOut(opts);
  const client = await ctx.client();
  const res = await images.generate(client, body, { signal: ctx.signal });
  await printImages(ctx, res, opts, {
    message: 'the gateway returned no image',
    hint: 'images are billed per successful image; retry, or check the prompt and the model with `gw models`',
  });
}
