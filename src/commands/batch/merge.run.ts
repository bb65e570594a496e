import type { Context } from '../../cli/context.js';
import { lockWaitNote } from './shared.js';
import type { Flags } from '../../cli/verb.js';
import type { batchMergeFlags } from './merge.js';
import { mergeBatches } from '../../batch/merge.js';

/** Joins sharded batch directories. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchMergeFlags>,
  dirs: string[],
): Promise<number> {
  const r = await mergeBatches({
    dirs,
    out: opts.out,
    force: opts.force,
    allowMissing: opts.allowMissing,
    waitLock: opts.waitLock,
    signal: ctx.signal,
    onLockWait: lockWaitNote(ctx),
  });
  if (r.duplicates.length > 0) {
    ctx.out.warn(
      `${r.duplicates.length} custom_id(s) succeeded in more than one directory; the first kept: ${r.duplicates.slice(0, 5).join(', ')}`,
    );
  }
  for (const x of r.shards.skipped)
    ctx.out.warn(`shard ${x.shard} is also in ${x.dir}: taken once, from the directory with more done`);
  if (r.shards.missing.length > 0)
    ctx.out.warn(`merged without shard(s) ${r.shards.missing.join(', ')} (--allow-missing)`);
  await ctx.out.result(r, () => ctx.out.line(r.out));
  return 0;
}
