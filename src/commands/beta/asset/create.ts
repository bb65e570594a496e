import { Command } from 'commander';
import { ASSET_TYPES, defaultAssetName, guessAssetType } from '../../../contract/beta-assets.js';
import { UsageError } from '../../../core/errors.js';
import type { Runtime } from '../../context.js';
import { ASSET_MODEL_FLAG, ASSET_MODEL_HELP, assetModel } from './ids.js';

interface Options {
  group: string;
  url: string;
  type?: string;
  name?: string;
  model?: string;
  wait?: boolean;
}

/** `gw beta asset create`: CreateAsset (§4.2); prints the asset id (journaled first); `--wait` polls to Active. */
export default function createCommand(rt: Runtime): Command {
  return new Command('create')
    .description('register an asset from a public https URL; prints its id (it starts Processing)')
    .requiredOption('--group <id>', 'asset group id (gw beta asset group create)')
    .requiredOption('--url <https url>', 'publicly downloadable URL (no cookies, login or one-time links)')
    .option('--type <t>', `${ASSET_TYPES.join('|')} (default: guessed from the file extension)`)
    .option('--name <n>', 'asset name (default: the file name)')
    .option(ASSET_MODEL_FLAG, ASSET_MODEL_HELP)
    .option(
      '--wait',
      `wait until Active (exit 0) or Failed (exit 1); polls at 2, 5, 10, 20 s (limit: --timeout)`,
    )
    .addHelpText(
      'after',
      `
A failed review or download shows only later, as Status Failed, never as a create error.
With --json: the gateway's {ResponseMetadata, Result: {Id}}; with --wait {id, asset}.

Examples:
  gw beta asset create --group "$group" --url https://example.com/cat.png --type Image --name cat --wait`,
    )
    .action(
      rt.action(async (ctx, o: Options) => {
        const opts = { ...o, model: assetModel(ctx, o.model) };
        const type = opts.type ?? guessAssetType(opts.url);
        if (type === undefined) {
          throw new UsageError(
            `type: cannot tell the AssetType of ${opts.url} from its extension; pass --type ${ASSET_TYPES.join('|')}`,
            {
              field: 'type',
            },
          );
        }
        const timeoutMs = ctx.waitLimitMs();
        const { createAsset } = await import('./journaled.js');
        const client = await ctx.client();
        const name = opts.name ?? defaultAssetName(opts.url);
        const { id, data } = await createAsset(ctx, client, { ...opts, type, name });
        if (opts.wait !== true) {
          if (ctx.globals.json) ctx.out.json(data);
          else ctx.out.line(id);
          return;
        }
        if (!ctx.globals.json) ctx.out.line(id);
        const { watchAssets, assertAllActive } = await import('./wait.js');
        const [asset] = await watchAssets(ctx, client, opts.model, [id], { timeoutMs });
        if (ctx.globals.json) ctx.out.json({ id, asset });
        else if (asset?.Status === 'Active') ctx.out.note(`asset ${id} is Active: use it as asset://${id}`);
        assertAllActive(asset ? [asset] : []);
      }),
    );
}
