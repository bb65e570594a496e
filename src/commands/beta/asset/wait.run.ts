import type { GatewayClient } from '../../../client/gateway-client.js';
import { ASSET_POLL_STEPS_MS, isAssetFinal, type Asset } from '../../../contract/beta-assets.js';
import { formatDuration } from '../../../core/duration.js';
import { GwError, InterruptedError, TimeLimitError } from '../../../core/errors.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { assetWaitFlags } from './wait.js';
import { isTimeout, isInterrupted } from '../../../core/error-map.js';
import { clockOf } from '../../../ui/io.js';
import { assetId, assetModel } from './ids.js';
import { printWaitOutcome } from '../../shared/job-output.js';
import { poll, pollRequestTimeout } from '../../../client/poll.js';
import * as assets from '../../../client/resources/beta-assets.js';

/** The command that resumes waiting for these assets. */
export function assetResumeCommand(ctx: Context, model: string, ids: readonly string[]): string {
  const profile = ctx.globals.profile !== undefined ? ` --profile ${ctx.globals.profile}` : '';
  return `gw beta asset wait ${ids.join(' ')} -m ${model}${profile}`;
}

function renderLines(assets: ReadonlyMap<string, Asset | undefined>, elapsedMs: number): string[] {
  const rows = [...assets].map(([id, a]) => [
    id,
    a?.AssetType ?? '',
    a?.Status ?? '…',
    typeof a?.Name === 'string' ? a.Name : '',
  ]);
  const w = [0, 1, 2].map((i) =>
    Math.max(...rows.map((r) => (r[i] as string).length), ['asset', 'type', 'status'][i]!.length),
  );
  const fmt = (r: string[]): string =>
    r
      .map((c, i) => (i < 3 ? c.padEnd(w[i]!) : c))
      .join('  ')
      .trimEnd();
  // The last frame says how the wait ended, not that it still waits.
  const final = [...assets.values()].filter((a) => a !== undefined && isAssetFinal(a.Status));
  const active = final.filter((a) => a?.Status === 'Active').length;
  const status =
    final.length === assets.size
      ? `${active === final.length ? `all ${active} Active` : `${active} Active, ${final.length - active} Failed`} after ${formatDuration(elapsedMs)}`
      : `waiting ${formatDuration(elapsedMs)} (polls at 2, 5, 10, 20 s)`;
  return [fmt(['asset', 'type', 'status', 'name']), ...rows.map(fmt), status];
}

/**
 * Polls GetAsset for every id at the document's 2, 5, 10, 20 s steps (then every 20 s) until each is `Active` or
 * `Failed` (§3), drawing a live table on stderr when it is a terminal. Returns the final records in order.
 */
export async function watchAssets(
  ctx: Context,
  client: GatewayClient,
  model: string,
  ids: readonly string[],
  o: { timeoutMs: number | undefined },
): Promise<Asset[]> {
  const seen = new Map<string, Asset | undefined>(ids.map((id) => [id, undefined]));
  let drawn = 0;
  const draw = (elapsed: number): void => {
    if (ctx.out.decorate) drawn = ctx.out.redraw(renderLines(seen, elapsed), drawn);
  };
  const clock = clockOf(ctx.io);
  const now = clock.now ?? Date.now;
  const deadline = o.timeoutMs !== undefined ? now() + o.timeoutMs : undefined;
  const requestTimeoutMs = ctx.settings().timeoutMs;
  try {
    await poll({
      steps: ASSET_POLL_STEPS_MS,
      timeoutMs: o.timeoutMs,
      signal: ctx.signal,
      fetch: async (signal) => {
        const open = [...seen]
          .filter(([, a]) => a === undefined || !isAssetFinal(a.Status))
          .map(([id]) => id);
        // Each look is bounded by the request timeout and the time left, so a hung answer cannot outlive the wait.
        const timeoutMs = pollRequestTimeout(deadline, now(), requestTimeoutMs);
        const got = await Promise.all(
          open.map((id) => assets.getAsset(client, { model, Id: id }, { signal, timeoutMs })),
        );
        for (const r of got) seen.set(r.data.Result.Id, r.data.Result);
        return seen;
      },
      done: (m) => [...m.values()].every((a) => a !== undefined && isAssetFinal(a.Status)),
      onUpdate: (_m, elapsed) => draw(elapsed),
      ...clock,
    });
  } catch (e) {
    const open = [...seen].filter(([, a]) => a === undefined || !isAssetFinal(a.Status)).map(([id]) => id);
    const hint = `resume with: ${assetResumeCommand(ctx, model, open.length > 0 ? open : ids)}`;
    if (isTimeout(e))
      throw new TimeLimitError(`assets still Processing: ${open.join(', ')} (${e.message})`, {
        hint,
        requestId: e.requestId,
      });
    if (isInterrupted(e)) throw new InterruptedError('interrupted while waiting for assets', { hint });
    throw e;
  } finally {
    for (const [id, a] of seen) if (a !== undefined) ctx.journal().update('beta-asset', id, a.Status);
  }
  return ids.map((id) => seen.get(id) as Asset);
}

/** Fails (exit 1) naming every asset that ended `Failed`; the service gives no reason (§2.6). */
export function assertAllActive(list: readonly Asset[]): void {
  const failed = list.filter((a) => a.Status === 'Failed').map((a) => a.Id);
  if (failed.length === 0) return;
  throw new GwError(
    `asset${failed.length > 1 ? 's' : ''} ${failed.join(', ')} ended Failed (review or preprocessing did not pass)`,
    {
      code: 'asset_failed',
      hint: 'the asset library shows no failure reason; check that the URL is publicly downloadable without cookies or login, then create the asset again',
    },
  );
}

/** Waits until the assets are Active or Failed: their final states on stderr, the records with --json. */
export default async function run(
  ctx: Context,
  opts: Flags<typeof assetWaitFlags>,
  refs: string[],
): Promise<void> {
  const ids = refs.map(assetId);
  const model = assetModel(ctx, opts.model);
  const timeoutMs = ctx.waitLimitMs(opts.timeout);
  const client = await ctx.client();
  const list = await watchAssets(ctx, client, model, ids, { timeoutMs });
  for (const a of list) printWaitOutcome(ctx, a.Id, a.Status);
  ctx.out.jsonOnly({ assets: list });
  assertAllActive(list);
}
