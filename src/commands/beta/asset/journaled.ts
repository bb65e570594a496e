/**
 * CreateAssetGroup and CreateAsset (beta-tasks-assets.md §4.2), each journaled before its id is shown: the shared
 * step of `asset group create`, `asset create` and `asset upload`. Groups are journaled with the assets (kind
 * beta-asset, object group) so `asset upload` can offer them.
 */
import type { GatewayClient } from '../../../client/gateway-client.js';
import type { AssetCreated } from '../../../contract/beta-assets.js';
import type { Context } from '../../../cli/context.js';
import * as assets from '../../../client/resources/beta-assets.js';

/** What a create answered: the new id, and the gateway's body for --json. */
export interface Created {
  id: string;
  data: AssetCreated;
}

/** Creates an asset group and journals it. */
export async function createGroup(
  ctx: Context,
  client: GatewayClient,
  g: { model: string; name: string; description?: string | undefined },
): Promise<Created> {
  const res = await assets.createGroup(
    client,
    { model: g.model, Name: g.name, Description: g.description },
    { signal: ctx.signal },
  );
  const id = res.data.Result.Id;
  ctx.recordCreated(client, {
    kind: 'beta-asset',
    id,
    model: g.model,
    requestId: res.requestId,
    extra: { object: 'group', name: g.name },
  });
  return { id, data: res.data };
}

/** Registers one asset from its URL and journals it. */
export async function createAsset(
  ctx: Context,
  client: GatewayClient,
  a: { model: string; group: string; url: string; type: string; name: string },
): Promise<Created> {
  const res = await assets.createAsset(
    client,
    { model: a.model, GroupId: a.group, URL: a.url, AssetType: a.type, Name: a.name },
    { signal: ctx.signal },
  );
  const id = res.data.Result.Id;
  ctx.recordCreated(client, {
    kind: 'beta-asset',
    id,
    model: a.model,
    requestId: res.requestId,
    extra: { object: 'asset', groupId: a.group, name: a.name, type: a.type, url: a.url },
  });
  return { id, data: res.data };
}
