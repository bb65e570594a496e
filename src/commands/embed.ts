import { Command } from 'commander';
import type { Runtime } from './context.js';
import { readLines } from './text-common.js';

/** How many leading values of each vector the table shows. */
const SHOWN = 4;

/** `gw embed`: embeddings of one or more texts (POST /v1/embeddings). */
export default function embedCommand(rt: Runtime): Command {
  return new Command('embed')
    .description('embeddings (POST /v1/embeddings): table of index, dimensions and first values')
    .argument('[text...]', 'texts to embed, one input per argument (default: --file or standard input)')
    .option('-m, --model <model>', "model name (see `gw models`; default: the profile's defaults.embed)")
    .option('--file <path>', 'read the inputs from a file, one per line (blank lines skipped)')
    .addHelpText(
      'after',
      `
Output: a table (index, dims, first values); --json prints the gateway's answer unchanged.
Examples:
  gw embed -m text-embedding-v4 "first text" "second text"
  gw embed -m text-embedding-v4 --file lines.txt --json | jq '.data[0].embedding | length'`,
    )
    .action(
      rt.action(async (ctx, texts: string[], opts: { model?: string; file?: string }) => {
        const model = ctx.model(opts.model, 'embed');
        const input = await readLines(ctx, texts, opts.file);
        const embeddings = await import('../client/resources/embeddings.js');
        const client = await ctx.client();
        const res = await embeddings.create(client, { model, input }, { signal: ctx.signal });
        if (ctx.globals.json) {
          ctx.out.json(res.data);
          return;
        }
        const sorted = [...res.data.data].sort((a, b) => a.index - b.index);
        const vectors = embeddings.vectors(res.data);
        await ctx.out.table(
          ['index', 'dims', 'first values'],
          sorted.map((d, i) => {
            const v = vectors[i] ?? [];
            const head = v.slice(0, SHOWN).map((x) => x.toFixed(4));
            return [d.index, v.length, `${head.join(', ')}${v.length > SHOWN ? ', …' : ''}`];
          }),
        );
      }),
    );
}
