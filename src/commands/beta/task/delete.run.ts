import { GatewayError } from '../../../client/errors.js';
import type { Context } from '../../../cli/context.js';
import * as tasks from '../../../client/resources/beta-tasks.js';

/** Deletes (cancels or hides) one task and says what happened. */
export default async function run(ctx: Context, _flags: unknown, id: string): Promise<void> {
  const client = await ctx.client();
  let res;
  try {
    res = await tasks.remove(client, id, { signal: ctx.signal });
  } catch (e) {
    if (e instanceof GatewayError && e.code === 'InvalidAction.RunningTaskDeletion') {
      throw new GatewayError({
        status: e.status,
        code: e.code,
        message: `task ${id} is running, and the interface does not delete running tasks; nothing changed`,
        requestId: e.requestId,
        hint: `wait until it ends (gw beta task wait ${id}), then delete it to hide it`,
        body: e.body,
      });
    }
    throw e;
  }
  // Read it back to say what the deletion did: a queued task is now cancelled, a finished one is gone.
  let after: string;
  try {
    after = (await tasks.retrieve(client, id, { signal: ctx.signal })).data.status;
  } catch (e) {
    if (!(e instanceof GatewayError && e.status === 404)) throw e;
    after = 'hidden';
  }
  ctx.journal().update('beta-task', id, after === 'hidden' ? 'deleted' : after);
  ctx.out.jsonOnly(res.data);
  if (after === 'cancelled') ctx.out.note(`task ${id} was queued: it is now cancelled and will not run`);
  else if (after === 'hidden') {
    ctx.out.note(
      `task ${id} is deleted: hidden from this tenant (get and list answer task_not_found); the gateway keeps its audit and billing records`,
    );
  } else ctx.out.note(`task ${id}: deletion accepted; status now ${after}`);
}
