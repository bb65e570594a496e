import { Command } from 'commander';
import type { Runtime } from '../context.js';
import { readPrompt } from '../text-common.js';
import { checkImageOut, imageBody, imageFlags, printImages, type ImageOptions } from './common.js';

/** `gw image generate`: POST /v1/images/generations. */
export default function generateCommand(rt: Runtime): Command {
  return imageFlags(
    new Command('generate')
      .description('generate images (POST /v1/images/generations)')
      .argument('[prompt...]', 'the prompt (default: standard input)'),
  )
    .addHelpText(
      'after',
      `
Output: image URLs one per line; with --format b64_json the images are written as files (never overwriting
without --force) and their paths printed. --json prints the gateway's answer unchanged.
Examples:
  gw image generate -m image-gen-1 "a red fox in the snow" --size 1024x1024
  gw image generate -m image-gen-1 "a logo" -n 2 --format b64_json --out ./images`,
    )
    .action(
      rt.action(async (ctx, words: string[], opts: ImageOptions) => {
        const model = ctx.model(opts.model, 'image');
        const body = imageBody(await readPrompt(ctx, words), { ...opts, model });
        await checkImageOut(opts);
        const images = await import('../../client/resources/images.js');
        const client = await ctx.client();
        const res = await images.generate(client, body, { signal: ctx.signal });
        await printImages(ctx, res, opts, {
          message: 'the gateway returned no image',
          hint: 'images are billed per successful image; retry, or check the prompt and the model with `gw models`',
        });
      }),
    );
}
