import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { batchMergeFlags } from './merge.js';

/** Joins sharded batch directories. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchMergeFlags>,
  dirs: string[],
): Promise<number> {
  const { mergeBatches } = await import('../../batch/merge.js');
  const r = await mergeBatches(dirs, opts.out);
  if (r.duplicates.length > 0) {
    ctx.out.warn(
      `${r.duplicates.length} custom_id(s) succeeded in more than one directory; the first kept: ${r.duplicates.slice(0, 5).join(', ')}`,
    );
  }
  await ctx.out.result(r, () => ctx.out.line(r.out));
  return 0;
}
