/**
 * The asset library of beta-tasks-assets.md in the simulator: `POST /beta/?Action=<name>&Version=2024-01-01`
 * (§4.2) with the `ResponseMetadata` + `Result` envelope, errors in `ResponseMetadata.Error` (§7), assets that go
 * `Processing` → `Active` after `assetProcessingMs`, or → `Failed` when the URL contains `sim-fail` or cannot be
 * publicly downloadable (§2.6: a failure is never a Create error, §7). Everything is per tenant.
 */
import {
  ASSET_ACTION_SCHEMAS,
  ASSET_API_VERSION,
  ASSET_GROUP_TYPE,
  asksModerationSkip,
  assetSourceUrlProblem,
  isForbiddenAssetAction,
  type AssetAction,
  type AssetStatus,
} from '../../contract/beta-assets.js';
import { normalizeBetaModel } from '../../contract/beta.js';
import { check } from '../../contract/validate.js';
import type { SimReply, SimRequest } from '../http.js';
import type { Sim } from '../server.js';

/** An asset group as the simulator keeps it. */
export interface SimAssetGroup {
  Id: string;
  Name: string;
  GroupType: string;
  Description: string;
  tenant: string;
  model: string;
  createdAt: number;
}

/** An asset as the simulator keeps it. */
export interface SimAsset {
  Id: string;
  GroupId: string;
  Name: string;
  URL: string;
  AssetType: string;
  tenant: string;
  /** Public model name (dated names normalised, §2.1 rule 1). */
  model: string;
  createdAt: number;
  /** Set when review/preprocessing will fail (trigger or a URL that cannot be publicly downloaded). */
  failure: string | undefined;
}

/** Groups and assets of every tenant. */
export interface AssetStore {
  groups: Map<string, SimAssetGroup>;
  assets: Map<string, SimAsset>;
}

/** The simulator's asset library (the task routes and tests read it). */
export function assetStore(sim: Sim): AssetStore {
  return sim.store<AssetStore>('beta-assets', () => ({ groups: new Map(), assets: new Map() }));
}

/** §3: `Processing` until `assetProcessingMs` elapsed, then `Active` or `Failed` (computed on read). */
export function assetStatus(sim: Sim, a: SimAsset): AssetStatus {
  if (sim.now() - a.createdAt < sim.config.timings.assetProcessingMs) return 'Processing';
  return a.failure !== undefined ? 'Failed' : 'Active';
}

/** An asset of `tenant`, or undefined (another tenant's asset does not exist for it, §4.2). */
export function findAsset(sim: Sim, tenant: string, id: string): SimAsset | undefined {
  const a = assetStore(sim).assets.get(id);
  return a !== undefined && a.tenant === tenant ? a : undefined;
}

function stamp(sim: Sim, prefix: string): string {
  const d = new Date(sim.now());
  const p = (n: number): string => String(n).padStart(2, '0');
  const ts = `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
  return `${prefix}-${ts}-${sim.id('').slice(0, 5)}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** An asset as GetAsset and ListAssets show it: the four list fields plus the inputs (§2.6). */
function assetView(sim: Sim, a: SimAsset): Record<string, unknown> {
  const status = assetStatus(sim, a);
  const settled = a.createdAt + sim.config.timings.assetProcessingMs;
  return {
    Id: a.Id,
    GroupId: a.GroupId,
    AssetType: a.AssetType,
    Status: status,
    Name: a.Name,
    URL: a.URL,
    model: a.model,
    CreateTime: iso(a.createdAt),
    UpdateTime: iso(status === 'Processing' ? a.createdAt : settled),
  };
}

function meta(req: SimRequest, action: string): Record<string, string> {
  return {
    RequestId: req.requestId,
    Action: action,
    Version: ASSET_API_VERSION,
    Service: 'ark',
    Region: 'ap-southeast-1',
  };
}

/** Why an asset will fail preprocessing: the `sim-fail` trigger, or a URL the service cannot download (§2.6). */
function failureOf(url: string): string | undefined {
  if (url.includes('sim-fail')) return 'review failed (simulated by sim-fail in the URL)';
  return assetSourceUrlProblem(url);
}

/** A refusal before the body is read: [status, code, message], or undefined when the action may run. */
function refusalOf(req: SimRequest, action: string, version: string): [number, string, string] | undefined {
  // §7: an account that has not opened the asset library gets 503 service_unavailable on every action.
  if (!req.hasOpened('asset-library'))
    return [503, 'service_unavailable', 'this account has not opened the asset library'];
  // §4.2/§7: Update* and Delete* are not offered.
  if (isForbiddenAssetAction(action))
    return [403, 'InvalidAction', `${action} is not offered by the asset library`];
  if (!(action in ASSET_ACTION_SCHEMAS)) {
    const offered = Object.keys(ASSET_ACTION_SCHEMAS).join(', ');
    return [404, 'InvalidActionOrVersion', `unknown action "${action}" (offered: ${offered})`];
  }
  if (version !== ASSET_API_VERSION)
    return [404, 'InvalidActionOrVersion', `Version must be ${ASSET_API_VERSION}`];
  // §7: Moderation.Strategy=Skip is refused with its own code, whatever else the body holds.
  if (asksModerationSkip(req.body))
    return [400, 'moderation_skip_not_allowed', 'Moderation.Strategy=Skip is not offered'];
  return undefined;
}

/** How an action answers: its result, or an error. */
interface Answer {
  ok: (result: unknown) => void;
  fail: (status: number, code: string, message: string) => void;
}

function handle(sim: Sim, req: SimRequest, reply: SimReply): void {
  const action = req.query.get('Action') ?? '';
  const fail = (status: number, code: string, message: string): void =>
    reply.error(status, code, message, 'asset');
  const refusal = refusalOf(req, action, req.query.get('Version') ?? '');
  if (refusal !== undefined) {
    fail(...refusal);
    return;
  }
  const name = action as AssetAction;
  const r = check(ASSET_ACTION_SCHEMAS[name] as Parameters<typeof check>[0], req.body ?? {});
  if (!r.ok) {
    const v = r.violation;
    if (v.code === 'model_not_found') fail(404, 'model_not_found', `${v.field}: ${v.message}`);
    else fail(400, 'invalid_request', `${v.field}: ${v.message}`);
    return;
  }
  const body = r.value as Record<string, unknown>;
  const n = normalizeBetaModel(body.model as string);
  if (!n.ok || !req.canSee(n.model)) {
    fail(404, 'model_not_found', `model ${String(body.model)} is unknown or not visible to this token`);
    return;
  }
  const ok = (result: unknown): void =>
    reply.json(200, { ResponseMetadata: meta(req, name), Result: result });
  runAction(sim, req, name, body, n.model, { ok, fail });
}

/** Runs one checked action of a visible model. */
function runAction(
  sim: Sim,
  req: SimRequest,
  name: AssetAction,
  body: Record<string, unknown>,
  model: string,
  { ok, fail }: Answer,
): void {
  const store = assetStore(sim);
  switch (name) {
    case 'CreateAssetGroup': {
      const g: SimAssetGroup = {
        Id: stamp(sim, 'group'),
        Name: body.Name as string,
        GroupType: ASSET_GROUP_TYPE,
        Description: (body.Description as string | undefined) ?? '',
        tenant: req.tenant,
        model,
        createdAt: sim.now(),
      };
      store.groups.set(g.Id, g);
      ok({ Id: g.Id }); // §4.2: Result.Id only
      return;
    }
    case 'CreateAsset': {
      const g = store.groups.get(body.GroupId as string);
      if (g === undefined || g.tenant !== req.tenant) {
        fail(404, 'ResourceNotFound.AssetGroup', `asset group ${String(body.GroupId)} was not found`);
        return;
      }
      const url = (body.URL as string).trim();
      const a: SimAsset = {
        Id: stamp(sim, 'asset'),
        GroupId: g.Id,
        Name: body.Name as string,
        URL: url,
        AssetType: body.AssetType as string,
        tenant: req.tenant,
        model,
        createdAt: sim.now(),
        failure: failureOf(url),
      };
      store.assets.set(a.Id, a);
      ok({ Id: a.Id }); // §4.2: no status, URL or failure reason in the create answer
      return;
    }
    case 'GetAsset': {
      const a = findAsset(sim, req.tenant, body.Id as string);
      if (a === undefined) {
        fail(404, 'ResourceNotFound.Asset', `asset ${String(body.Id)} was not found`);
        return;
      }
      ok(assetView(sim, a));
      return;
    }
    case 'ListAssets': {
      const filter = body.Filter as { GroupIds?: string[] };
      const ids =
        filter.GroupIds !== undefined && filter.GroupIds.length > 0 ? new Set(filter.GroupIds) : undefined;
      // Newest first; reversing insertion order first keeps assets created in the same millisecond in order.
      const mine = [...store.assets.values()]
        .reverse()
        .filter((a) => a.tenant === req.tenant && (ids === undefined || ids.has(a.GroupId)))
        .sort((x, y) => y.createdAt - x.createdAt);
      const page = (body.PageNumber as number | undefined) ?? 1;
      const size = (body.PageSize as number | undefined) ?? 10; // default not shown; 10 chosen
      ok({
        Items: mine.slice((page - 1) * size, page * size).map((a) => assetView(sim, a)),
        TotalCount: mine.length,
        PageNumber: page,
        PageSize: size,
      });
      return;
    }
  }
}

/** beta-tasks-assets.md §4.2: the asset actions. */
export function registerBetaAssetRoutes(sim: Sim): void {
  for (const path of ['/beta/', '/beta']) {
    sim.router.add('POST', path, (req, reply) => handle(sim, req, reply), { shape: 'asset' });
  }
}
