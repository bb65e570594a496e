import type { Context } from '../../cli/context.js';
import { lockWaitNote } from './shared.js';
import type { Flags } from '../../cli/verb.js';
import type { batchDownloadFlags } from './download.js';
import { downloadBatch } from '../../batch/download.js';

/** Downloads the missing files of a batch. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof batchDownloadFlags>,
  dir: string,
): Promise<number> {
  const doc = await downloadBatch({
    out: dir,
    client: () => ctx.client(),
    waitLock: opts.waitLock,
    signal: ctx.signal,
    onWarning: (t) => ctx.out.warn(t),
    onLockWait: lockWaitNote(ctx),
  });
  await ctx.out.result(doc, () =>
    ctx.out.line(
      `downloaded ${doc.downloaded} item(s), ${doc.bytes} bytes; ${doc.present} already there; ${doc.failed.length} failed`,
    ),
  );
  return doc.failed.length > 0 ? 1 : 0;
}
