import type { z } from 'zod';
import {
  ASSET_API_VERSION,
  ASSET_POLL_STEPS_MS,
  assetCreatedSchema,
  assetSourceUrlProblem,
  createAssetGroupSchema,
  createAssetSchema,
  getAssetResultSchema,
  getAssetSchema,
  isAssetFinal,
  listAssetsResultSchema,
  listAssetsSchema,
  type AssetAction,
  type AssetCreated,
  type GetAssetResult,
  type ListAssetsResult,
} from '../../contract/beta-assets.js';
import { poll, type PollOptions } from '../poll.js';
import { RequestValidationError, ResponseShapeError, errorFromBody } from '../errors.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';
import { requireValid } from '../validation.js';

/** beta-tasks-assets.md §4.2: every asset action is `POST /beta/?Action=<name>&Version=2024-01-01`. */
export const ASSET_PATH = '/beta/';

interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Per-request limit (default: the client's). */
  timeoutMs?: number | undefined;
}

/**
 * Sends one asset action. A `ResponseMetadata.Error` becomes a GatewayError even on a 2xx answer, since the
 * envelope, not the status, is what the asset library documents (§7).
 */
async function call<T>(
  client: GatewayClient,
  action: AssetAction,
  body: unknown,
  schema: z.ZodType<T>,
  o: CallOptions,
): Promise<ApiResult<T>> {
  const res = await client.request<unknown>({
    method: 'POST',
    path: ASSET_PATH,
    query: { Action: action, Version: ASSET_API_VERSION },
    body,
    signal: o.signal,
    timeoutMs: o.timeoutMs,
  });
  const meta = (res.data as { ResponseMetadata?: { Error?: unknown } } | null)?.ResponseMetadata;
  if (meta?.Error !== undefined && meta.Error !== null) {
    throw errorFromBody(res.status, JSON.stringify(res.data), res.requestId);
  }
  const parsed = schema.safeParse(res.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ResponseShapeError(
      `${action}: unexpected answer at ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
      { status: res.status, requestId: res.requestId },
    );
  }
  return { ...res, data: parsed.data };
}

function checked<T>(client: GatewayClient, schema: z.ZodType<T>, body: unknown): unknown {
  return client.validate ? requireValid(schema, body) : body;
}

/** `CreateAssetGroup` (§4.2): `Result.Id` of the new group. */
export async function createGroup(
  client: GatewayClient,
  body: { model: string; Name: string; GroupType?: string; Description?: string | undefined },
  o: CallOptions = {},
): Promise<ApiResult<AssetCreated>> {
  const full = { GroupType: 'AIGC', ...body };
  return call(
    client,
    'CreateAssetGroup',
    checked(client, createAssetGroupSchema, full),
    assetCreatedSchema,
    o,
  );
}

/**
 * `CreateAsset` (§4.2): `Result.Id` only; the asset starts `Processing`. With validation on, a URL that cannot be
 * publicly downloadable (not https, credentials, a private host) is refused before sending (§2.6).
 */
export async function createAsset(
  client: GatewayClient,
  body: { model: string; GroupId: string; URL: string; AssetType: string; Name: string },
  o: CallOptions = {},
): Promise<ApiResult<AssetCreated>> {
  let send: unknown = body;
  if (client.validate) {
    const parsed = requireValid(createAssetSchema, body);
    const problem = assetSourceUrlProblem(parsed.URL);
    if (problem !== undefined) throw new RequestValidationError(`URL: ${problem}`, { field: 'URL' });
    send = parsed;
  }
  return call(client, 'CreateAsset', send, assetCreatedSchema, o);
}

/** `GetAsset` (§4.2): the asset with its `Status`. */
export async function getAsset(
  client: GatewayClient,
  body: { model: string; Id: string },
  o: CallOptions = {},
): Promise<ApiResult<GetAssetResult>> {
  return call(client, 'GetAsset', checked(client, getAssetSchema, body), getAssetResultSchema, o);
}

/** `ListAssets` (§4.2): `Filter.GroupType` is always `AIGC`. */
export async function listAssets(
  client: GatewayClient,
  p: { model: string; groupIds: readonly string[]; page?: number | undefined; pageSize?: number | undefined },
  o: CallOptions = {},
): Promise<ApiResult<ListAssetsResult>> {
  const body: Record<string, unknown> = {
    model: p.model,
    Filter: { GroupType: 'AIGC', GroupIds: [...p.groupIds] },
  };
  if (p.page !== undefined) body.PageNumber = p.page;
  if (p.pageSize !== undefined) body.PageSize = p.pageSize;
  return call(client, 'ListAssets', checked(client, listAssetsSchema, body), listAssetsResultSchema, o);
}

/** Options of `waitAsset`: hooks, timeout, clock (the 2, 5, 10, 20 s steps are the default schedule). */
export type AssetWaitOptions = Omit<PollOptions<GetAssetResult['Result']>, 'fetch' | 'done'>;

/** Polls `GetAsset` at the document's 2, 5, 10, 20 s steps (then every 20 s) until `Active` or `Failed` (§3). */
export async function waitAsset(
  client: GatewayClient,
  p: { model: string; id: string },
  o: AssetWaitOptions = {},
): Promise<GetAssetResult['Result']> {
  return poll({
    steps: ASSET_POLL_STEPS_MS,
    ...o,
    fetch: async (signal) => (await getAsset(client, { model: p.model, Id: p.id }, { signal })).data.Result,
    done: (a) => isAssetFinal(a.Status),
  });
}
