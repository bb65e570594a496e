import { Command } from 'commander';
import type { Runtime } from '../context.js';
import { videoRows } from './shared.js';

/** `gw video get <video_id>`: the record as `key: value` lines, `--json` raw. */
export function getCommand(rt: Runtime): Command {
  return new Command('get')
    .description('show a video: state, result URL, expires_at (local time and how long is left)')
    .argument('<video_id>', 'the video_id printed by gw video create')
    .addHelpText(
      'after',
      `
Examples:
  gw video get "$id"
  gw video get "$id" --json | jq -r .status`,
    )
    .action(
      rt.action(async (ctx, id: string) => {
        const videos = await import('../../client/resources/videos.js');
        const client = await ctx.client();
        const res = await videos.retrieve(client, id, { signal: ctx.signal });
        ctx.journal().update('video', id, res.data.status);
        if (ctx.globals.json) {
          ctx.out.json(res.data);
          return;
        }
        ctx.out.keyValue(await videoRows(res.data, res.requestId));
      }),
    );
}
