import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { groupCreateFlags } from './group-create.js';
import { assetModel } from './ids.js';
import { createGroup } from './journaled.js';

/** Creates an asset group; prints its id. */
export default async function run(ctx: Context, o: Flags<typeof groupCreateFlags>): Promise<void> {
  const opts = { ...o, model: assetModel(ctx, o.model) };
  const client = await ctx.client();
  const { id, data } = await createGroup(ctx, client, opts);
  await ctx.out.result(data, () => ctx.out.line(id));
}
