import type { GatewayClient } from '../../client/gateway-client.js';
import type { JournalEntry, JournalKind } from '../../core/journal.js';
import type { Context } from '../../cli/context.js';
import type { historyFlags } from './index.js';
import type { Flags } from '../../cli/verb.js';
import * as videos from '../../client/resources/videos.js';
import * as tasks from '../../client/resources/beta-tasks.js';
import * as assets from '../../client/resources/beta-assets.js';

/**
 * Asks the gateway for an entry's current state; undefined when this entry cannot be asked (an asset group has
 * no documented state query, an asset recorded without its model).
 */
type Refresher = (client: GatewayClient, e: JournalEntry, signal: AbortSignal) => Promise<string | undefined>;

const REFRESHERS: Partial<Record<JournalKind, Refresher>> = {
  video: async (client, e, signal) => {
    return (await videos.retrieve(client, e.id, { signal })).data.status;
  },
  'beta-task': async (client, e, signal) => {
    return (await tasks.retrieve(client, e.id, { signal })).data.status;
  },
  'beta-asset': async (client, e, signal) => {
    if (e.extra?.object === 'group' || e.model === undefined) return undefined;
    return (await assets.getAsset(client, { model: e.model, Id: e.id }, { signal })).data.Result.Status;
  },
};

async function refresh(ctx: Context, entries: JournalEntry[]): Promise<void> {
  const kinds = new Set(entries.map((e) => e.kind));
  const unsupported = [...kinds].filter((k) => REFRESHERS[k] === undefined);
  // alpha: the documents give no query endpoint for image2video tasks, so there is nothing to ask.
  if (unsupported.length > 0) ctx.out.note(`--refresh cannot ask about ${unsupported.join(', ')} entries`);
  const todo = entries.filter((e) => REFRESHERS[e.kind] !== undefined);
  if (todo.length === 0) return;
  const client = await ctx.client();
  // An entry made against another gateway cannot be asked with this profile's token.
  const mine = todo.filter(
    (e) => e.baseUrl === undefined || e.baseUrl.replace(/\/+$/, '') === client.baseUrl,
  );
  if (mine.length < todo.length) {
    ctx.out.note(
      `${todo.length - mine.length} entries were created on another gateway (base URL); not refreshed`,
    );
  }
  const journal = ctx.journal();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < mine.length) {
      const e = mine[next++] as JournalEntry;
      try {
        const state = await (REFRESHERS[e.kind] as Refresher)(client, e, ctx.signal);
        if (state === undefined) continue;
        if (state !== e.state) journal.update(e.kind, e.id, state);
        e.state = state;
        e.updatedAt = new Date().toISOString();
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        ctx.out.warn(`${e.kind} ${e.id}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, mine.length) }, worker));
}

/** Lists the journal, newest first (optionally refreshed from the gateway). */
export default async function run(ctx: Context, opts: Flags<typeof historyFlags>): Promise<void> {
  let entries = ctx
    .journal()
    .list()
    .filter((e) => opts.kind === undefined || e.kind === opts.kind)
    .reverse();
  if (opts.limit > 0) entries = entries.slice(0, opts.limit);
  if (opts.refresh) await refresh(ctx, entries);
  await ctx.out.result(entries, async () => {
    if (entries.length === 0) {
      ctx.out.note('no entries: nothing created on this machine yet (or GW_STATE_DIR points elsewhere)');
      return;
    }
    await ctx.out.table(
      ['created', 'kind', 'id', 'model', 'state', 'updated', 'profile'],
      entries.map((e) => [
        ctx.out.time(e.createdAt, { brief: true }),
        e.kind,
        e.id,
        e.model,
        e.state ?? '',
        e.updatedAt !== undefined ? ctx.out.time(e.updatedAt, { brief: true }) : '',
        e.profile,
      ]),
      { keep: [2] },
    );
  });
}
