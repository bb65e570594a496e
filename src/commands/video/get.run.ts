import type { Context } from '../../cli/context.js';
import { videoRows } from './shared.js';
import * as videos from '../../client/resources/videos.js';

/** Shows one video record. */
export default async function run(ctx: Context, _flags: unknown, id: string): Promise<void> {
  const client = await ctx.client();
  const res = await videos.retrieve(client, id, { signal: ctx.signal });
  ctx.journal().update('video', id, res.data.status);
  await ctx.out.result(res.data, (d) =>
    ctx.out.keyValue(videoRows(d, res.requestId, (t) => ctx.out.time(t))),
  );
}
