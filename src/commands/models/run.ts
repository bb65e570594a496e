import type { Context } from '../../cli/context.js';
import { formatLocalTime } from '../video/shared.js';
import { saveModelIds } from '../../core/model-cache.js';
import * as models from '../../client/resources/models.js';

/** Lists the models (and caches their ids for shell completion). */
export default async function run(ctx: Context): Promise<void> {
  const client = await ctx.client();
  const res = await models.list(client, { signal: ctx.signal });
  saveModelIds(
    ctx.io.env,
    client.baseUrl,
    res.data.data.map((m) => m.id),
  );
  await ctx.out.result(res.data, (d) =>
    ctx.out.table(
      ['id', 'owned_by', 'created'],
      d.data.map((m) => [
        m.id,
        m.owned_by,
        m.created !== undefined ? formatLocalTime(new Date(m.created * 1000)) : '',
      ]),
    ),
  );
}
