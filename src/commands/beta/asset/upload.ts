import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../../cli/verb.js';
import { assetModelFlag } from './flags.js';

export const uploadFlags = z.object({
  model: assetModelFlag(),
  group: flag(z.string().optional(), {
    flag: '--group <id>',
    help: 'asset group id (default: ask, or create a new group)',
    fills: ['GroupId'],
  }),
  url: flag(z.array(z.string()).default([]), {
    flag: '--url <url>',
    help: 'public https URL (repeatable); type guessed from the extension',
    fills: ['URL'],
    repeat: 'collect',
  }),
});

/** `gw beta asset upload`: group + URLs → assets → live status until Active/Failed → `asset://<id>` refs. */
export const uploadVerb = defineVerb<typeof uploadFlags>({
  name: 'upload',
  description: 'register URLs as assets, watch them become Active, print their asset:// references',
  flags: uploadFlags,
  notes: `On a terminal it asks: pick a group (from this machine's journal), type one, or create one; add URLs (type
guessed from the extension, confirm it; non-https or non-public URLs are refused with the reason); name each.
Without a terminal, or with --group and --url, nothing is asked (a new group is created when --group is absent).
A live table on stderr shows every asset until it is Active or Failed; then stdout gets one asset://<id> per
Active asset. Exit 1 when any asset Failed. Ctrl-C keeps the created ids (journal, printed) and the resume command.
With --json: {group, assets: [{Id, Name, URL, AssetType, Status, ref}]}.`,
  examples: [
    'gw beta asset upload',
    'refs=$(gw beta asset upload --group "$group" --url https://example.com/cat.png --url https://example.com/a.mp4)',
  ],
  handler: () => import('./upload.run.js'),
});

export default function uploadCommand(rt: Runtime): Command {
  return verbCommand(uploadVerb, rt);
}
