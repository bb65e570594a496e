import { Command } from 'commander';
import type { Runtime } from '../context.js';
import { collect, readPrompt } from '../text-common.js';
import { checkImageOut, imageBody, imageFlags, printImages, type ImageOptions } from './common.js';

/** `gw image edit`: POST /v1/images/edits with public https input images (common.md §4 rule 3). */
export default function editCommand(rt: Runtime): Command {
  return imageFlags(
    new Command('edit')
      .description('edit images (POST /v1/images/edits); inputs must be public https URLs')
      .argument('[prompt...]', 'the instruction (default: standard input)')
      .requiredOption('--image <https url>', 'input image, a public https URL (repeatable)', collect),
  )
    .addHelpText(
      'after',
      `
Output: as \`gw image generate\`. An answer without images means, per the gateway documents, that
an input URL is not publicly reachable or the model is not an edit model: gw reports it and exits 1.
Examples:
  gw image edit -m image-edit-1 --image https://example.com/room.png "paint the walls green"
  gw image edit -m image-edit-1 --image https://example.com/a.png --format b64_json --out ./edits "add a hat"`,
    )
    .action(
      rt.action(async (ctx, words: string[], opts: ImageOptions & { image: string[] }) => {
        const body = {
          ...imageBody(await readPrompt(ctx, words), { ...opts, model: ctx.model(opts.model, 'image') }),
          images: opts.image.map((url) => ({ image_url: url })),
        };
        await checkImageOut(opts);
        const images = await import('../../client/resources/images.js');
        const client = await ctx.client();
        const res = await images.edit(client, body, { signal: ctx.signal });
        await printImages(ctx, res, opts, {
          message: 'the edit returned no image',
          hint: 'an image edit without a product means an input URL is not publicly reachable or the model is not an edit model; use public https URLs and an edit model (see `gw models`)',
        });
      }),
    );
}
