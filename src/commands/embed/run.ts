import type { Context } from '../../cli/context.js';
import type { embedFlags } from './index.js';
import { readLines } from '../shared/text.js';
import type { Flags } from '../../cli/verb.js';
import * as embeddings from '../../client/resources/embeddings.js';

/** How many leading values of each vector the table shows. */
const SHOWN = 4;

/** Embeds the texts; a table of index, dimensions and first values. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof embedFlags>,
  texts: string[],
): Promise<void> {
  const model = ctx.model(opts.model, 'embed');
  const input = await readLines(ctx, texts, opts.file);
  const client = await ctx.client();
  const res = await embeddings.create(client, { model, input }, { signal: ctx.signal });
  await ctx.out.result(res.data, (data) => {
    const sorted = [...data.data].sort((a, b) => a.index - b.index);
    const vectors = embeddings.vectors(data);
    return ctx.out.table(
      ['index', 'dims', 'first values'],
      sorted.map((d, i) => {
        const v = vectors[i] ?? [];
        const head = v.slice(0, SHOWN).map((x) => x.toFixed(4));
        return [d.index, v.length, `${head.join(', ')}${v.length > SHOWN ? ', …' : ''}`];
      }),
    );
  });
}
