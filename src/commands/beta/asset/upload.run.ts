import {
  assetSourceUrlProblem,
  defaultAssetName,
  guessAssetType,
  type Asset,
} from '../../../contract/beta-assets.js';
import { InterruptedError, UsageError } from '../../../core/errors.js';
import type { Context } from '../../../cli/context.js';
import type { Flags } from '../../../cli/verb.js';
import type { uploadFlags } from './upload.js';
import { assetModel } from './ids.js';
import { ask, isPromptExit, newGroup, type Plan } from './upload-flow.js';
import { assertAllActive, assetResumeCommand, watchAssets } from './wait.run.js';
import { isInterrupted } from '../../../core/error-map.js';
import { createAsset } from './journaled.js';

/** Registers URLs as assets, watches them, prints their asset:// references. */
export default async function run(ctx: Context, o: Flags<typeof uploadFlags>): Promise<void> {
  const opts = { ...o, model: assetModel(ctx, o.model) };
  const interactive = ctx.interactive && !(opts.group !== undefined && opts.url.length > 0);
  if (!interactive && opts.url.length === 0) {
    throw new UsageError('url: give at least one --url (on a terminal gw asks for them)', {
      field: 'url',
    });
  }
  for (const url of opts.url) {
    const problem = ctx.globals.validate ? assetSourceUrlProblem(url) : undefined;
    if (problem !== undefined) throw new UsageError(`url: ${url}: ${problem}`, { field: 'url' });
    if (!interactive && guessAssetType(url) === undefined) {
      throw new UsageError(
        `url: cannot tell the AssetType of ${url} from its extension; use gw beta asset create --type`,
        { field: 'url' },
      );
    }
  }
  const timeoutMs = ctx.waitLimitMs();
  const client = await ctx.client();
  const created: Plan[] = [];
  const ids: string[] = [];
  let group = opts.group;
  let final: Asset[];
  try {
    let plans: Plan[];
    if (interactive) ({ group, plans } = await ask(ctx, client, opts.model, { group, urls: opts.url }));
    else {
      group ??= await newGroup(ctx, client, opts.model, `gw upload ${new Date().toISOString().slice(0, 16)}`);
      plans = opts.url.map((url) => ({
        url,
        type: guessAssetType(url) as string,
        name: defaultAssetName(url),
      }));
    }
    for (const p of plans) {
      const { id } = await createAsset(ctx, client, { model: opts.model, group, ...p });
      ids.push(id);
      created.push(p);
    }
    final = await watchAssets(ctx, client, opts.model, ids, { timeoutMs });
  } catch (e) {
    const interrupted = isPromptExit(e) || isInterrupted(e);
    // The terminal echoed ^C mid-line: start the refs on a fresh line so they can be copied as they are.
    if (interrupted && ctx.io.stderr.isTTY === true) ctx.io.stderr.write('\n');
    // Whatever was created stays usable: the ids are journaled; print them so nothing is lost.
    for (const id of ids) ctx.out.line(`asset://${id}`);
    if (interrupted) {
      throw new InterruptedError('upload stopped by Ctrl-C', {
        hint:
          ids.length > 0
            ? `the created assets are in gw history; follow them with: ${assetResumeCommand(ctx, opts.model, ids)}`
            : undefined,
      });
    }
    if (ids.length > 0) ctx.out.warn(`created before the error (journaled): ${ids.join(', ')}`);
    throw e;
  }
  await ctx.out.result(
    {
      group,
      assets: final.map((a, i) => ({
        Id: a.Id,
        Name: created[i]?.name,
        URL: created[i]?.url,
        AssetType: a.AssetType ?? created[i]?.type,
        Status: a.Status,
        ref: `asset://${a.Id}`,
      })),
    },
    () => {
      for (const a of final) if (a.Status === 'Active') ctx.out.line(`asset://${a.Id}`);
    },
  );
  assertAllActive(final);
}
