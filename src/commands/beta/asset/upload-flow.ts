/** The steps of `gw beta asset upload`: a new group, and the questions asked on a terminal. */
import type { GatewayClient } from '../../../client/gateway-client.js';
import {
  ASSET_TYPES,
  assetSourceUrlProblem,
  defaultAssetName,
  guessAssetType,
} from '../../../contract/beta-assets.js';
import type { Context } from '../../../cli/context.js';
import { createGroup } from './journaled.js';

/** One asset to create. */
export interface Plan {
  url: string;
  type: string;
  name: string;
}

const NEW = '\0new';
const ENTER = '\0enter';

/** True when an @inquirer prompt ended by Ctrl-C (or the abort signal). */
export function isPromptExit(e: unknown): boolean {
  return e instanceof Error && (e.name === 'ExitPromptError' || e.name === 'AbortPromptError');
}

/** Creates a group (journaled, so later uploads can offer it) and says so. */
export async function newGroup(
  ctx: Context,
  client: GatewayClient,
  model: string,
  name: string,
): Promise<string> {
  const { id } = await createGroup(ctx, client, { model, name });
  ctx.out.note(`created asset group ${id} (${name})`);
  return id;
}

/** The interactive questions: a group (known from the journal, typed, or new), then URLs with type and name. */
export async function ask(
  ctx: Context,
  client: GatewayClient,
  model: string,
  given: { group?: string | undefined; urls: readonly string[] },
): Promise<{ group: string; plans: Plan[] }> {
  const { input, select } = await ctx.prompts();
  const io = { input: ctx.io.stdin, output: ctx.io.stderr, signal: ctx.signal };
  let group = given.group;
  if (group === undefined) {
    const base = ctx.settings().baseUrl;
    const known = ctx
      .journal()
      .list()
      .filter((e) => e.kind === 'beta-asset' && e.extra?.object === 'group' && e.baseUrl === base)
      .reverse();
    const choice = await select(
      {
        message: 'Asset group',
        choices: [
          { name: 'Create a new group', value: NEW },
          ...known.map((g) => ({
            name: typeof g.extra?.name === 'string' ? `${g.extra.name} (${g.id})` : g.id,
            value: g.id,
          })),
          { name: 'Enter a group id', value: ENTER },
        ],
      },
      io,
    );
    if (choice === NEW) {
      const name = await input(
        { message: 'New group name', default: `gw upload ${new Date().toISOString().slice(0, 16)}` },
        io,
      );
      group = await newGroup(ctx, client, model, name.trim());
    } else if (choice === ENTER) {
      group = (
        await input({ message: 'Group id', validate: (v) => v.trim() !== '' || 'enter a group id' }, io)
      ).trim();
    } else group = choice;
  }
  const plans: Plan[] = [];
  const queue = [...given.urls];
  for (;;) {
    const url =
      queue.shift() ??
      (
        await input(
          {
            message: `Asset URL ${plans.length === 0 ? '(public https)' : '(empty to finish)'}`,
            validate: (v) =>
              v.trim() === ''
                ? plans.length > 0 || 'add at least one URL'
                : (assetSourceUrlProblem(v) ?? true),
          },
          io,
        )
      ).trim();
    if (url === '') break;
    const guess = guessAssetType(url);
    const type = await select(
      {
        message: `Asset type of ${defaultAssetName(url)}${guess ? ' (guessed from the extension)' : ''}`,
        choices: ASSET_TYPES.map((t) => ({ name: t, value: t })),
        ...(guess ? { default: guess } : {}),
      },
      io,
    );
    const name = await input({ message: 'Asset name', default: defaultAssetName(url) }, io);
    plans.push({ url, type, name: name.trim() || defaultAssetName(url) });
  }
  return { group, plans };
}
