/**
 * Native video tasks of beta-tasks-assets.md in the simulator (§4.1): create, get, list and delete under
 * `/beta/api/v3/contents/generations/tasks`, every rule of §2.4 and §6 checked server-side with the documented
 * codes of §7, `asset://` references bound to the tenant's Active assets, and a time-based state machine
 * (queued → running → succeeded, or failed/expired/cancelled) computed from `sim.now()` on every read.
 */
import {
  BETA_4K_SIZES,
  BETA_TASK_STATUSES,
  assetIdOf,
  checkBetaTaskCreate,
  isFilterOff,
  normalizeBetaModel,
  type BetaTaskCreateParams,
  type BetaTaskStatus,
  type HostResolver,
} from '../../contract/beta.js';
import { resolveHost } from '../resolve-host.js';
import type { SimReply, SimRequest } from '../http.js';
import { makeMp4 } from '../mp4.js';
import { makePng } from '../png.js';
import type { Sim } from '../server.js';
import { assetStatus, findAsset } from './beta-assets.js';

const PATH = '/beta/api/v3/contents/generations/tasks';
// Rules and codes: beta-tasks-assets.md §2.4, §3, §4.1, §6, §7, §8 (the team's contract; messages do not cite it).

/** A task as the simulator keeps it. */
export interface SimBetaTask {
  id: string;
  tenant: string;
  /** Public model name (§2.1 rule 3: echoed as given, dated names normalised). */
  model: string;
  body: BetaTaskCreateParams;
  createdAt: number;
  trigger: 'fail' | 'expire' | 'never' | undefined;
  cancelledAt?: number;
  /** Deleted after it finished: hidden from the tenant (audit and billing kept, §3). */
  hidden?: boolean;
  seed: number;
  duration: number;
  videoUrl?: string;
  lastFrameUrl?: string;
}

/** Tasks of every tenant, by id (insertion order = creation order). */
export type BetaTaskStore = Map<string, SimBetaTask>;

/** The simulator's beta tasks (tests read it). */
export function betaTaskStore(sim: Sim): BetaTaskStore {
  return sim.store<BetaTaskStore>('beta-tasks', () => new Map());
}

/**
 * The resolver the simulator uses for callback_url hosts (§6 rule 3). The system resolver by default; tests replace
 * it with `setBetaResolver` so they never touch the network (IP literals and `localhost` never need it).
 */
export function setBetaResolver(sim: Sim, resolve: HostResolver): void {
  sim.store<{ resolve: HostResolver }>('beta-resolver', () => ({ resolve })).resolve = resolve;
}

function resolver(sim: Sim): HostResolver {
  return sim.store<{ resolve: HostResolver }>('beta-resolver', () => ({ resolve: resolveHost })).resolve;
}

const DEFAULT_EXPIRES_S = 172_800; // default not shown (§4.1); 48 h chosen, inside the usual range of §8

function timeline(sim: Sim, t: SimBetaTask): { status: BetaTaskStatus; at: number } {
  const { betaQueuedMs, betaRunningMs } = sim.config.timings;
  const runningAt = t.createdAt + betaQueuedMs;
  const endAt = runningAt + betaRunningMs;
  const expiresAt = t.createdAt + (t.body.execution_expires_after ?? DEFAULT_EXPIRES_S) * 1000;
  const now = sim.now();
  if (t.cancelledAt !== undefined) return { status: 'cancelled', at: t.cancelledAt };
  const finishesAt = t.trigger === 'never' ? Infinity : endAt;
  // execution_expires_after (§2.4): a task not finished by then expires.
  if (expiresAt < finishesAt && now >= expiresAt) return { status: 'expired', at: expiresAt };
  if (now < runningAt) return { status: 'queued', at: t.createdAt };
  if (now < finishesAt) return { status: 'running', at: runningAt };
  if (t.trigger === 'fail') return { status: 'failed', at: endAt };
  if (t.trigger === 'expire') return { status: 'expired', at: endAt };
  return { status: 'succeeded', at: endAt };
}

/** The current status of a task (§3), from the clock. */
export function betaTaskStatus(sim: Sim, t: SimBetaTask): BetaTaskStatus {
  return timeline(sim, t).status;
}

function frameSize(resolution: string, ratio: string): { width: number; height: number } {
  if (resolution === '4k') {
    const s = BETA_4K_SIZES[ratio as keyof typeof BETA_4K_SIZES] ?? BETA_4K_SIZES['16:9'];
    const [w, h] = s.split('x').map(Number) as [number, number];
    return { width: w, height: h };
  }
  const short = resolution === '480p' ? 480 : resolution === '1080p' ? 1080 : 720;
  const [a, b] = (ratio === 'adaptive' ? '16:9' : ratio).split(':').map(Number) as [number, number];
  const long = Math.round((short * Math.max(a, b)) / Math.min(a, b) / 2) * 2;
  return a >= b ? { width: long, height: short } : { width: short, height: long };
}

function view(sim: Sim, t: SimBetaTask): Record<string, unknown> {
  const { status, at } = timeline(sim, t);
  const b = t.body;
  const resolution = b.resolution ?? '720p';
  const ratio = b.ratio ?? '16:9';
  const fps = 24;
  const rec: Record<string, unknown> = {
    id: t.id,
    model: t.model,
    status,
    error: null,
    created_at: Math.floor(t.createdAt / 1000),
    updated_at: Math.floor(at / 1000),
    seed: t.seed,
    resolution,
    ratio,
    duration: t.duration,
    framespersecond: fps,
    service_tier: b.service_tier ?? 'default',
    execution_expires_after: b.execution_expires_after ?? DEFAULT_EXPIRES_S,
    generate_audio: b.generate_audio ?? true,
    draft: b.draft ?? false,
    priority: b.priority ?? 0,
  };
  if (b.safety_identifier !== undefined) rec.safety_identifier = b.safety_identifier;
  if (status === 'succeeded') {
    const size = frameSize(resolution, ratio);
    const expiresAt = at + sim.config.timings.resultTtlMs; // §2.5: the result URL lives about 24 hours
    t.videoUrl ??= sim.cdn.publish(
      {
        bytes: makeMp4({ seconds: t.duration, ...size }),
        contentType: 'video/mp4',
        expiresAt,
      },
      `${t.id}.mp4`,
    );
    rec.content = { video_url: t.videoUrl };
    if (b.return_last_frame === true) {
      // A real PNG with the frame's aspect, scaled down so the simulator stays light.
      const scale = Math.max(1, Math.ceil(Math.max(size.width, size.height) / 320));
      t.lastFrameUrl ??= sim.cdn.publish(
        {
          bytes: makePng(Math.round(size.width / scale), Math.round(size.height / scale), t.seed),
          contentType: 'image/png',
          expiresAt,
        },
        `${t.id}-last-frame.png`,
      );
      (rec.content as Record<string, string>).last_frame_url = t.lastFrameUrl;
    }
    const tokens = Math.round((size.width * size.height * fps * t.duration) / 1024);
    rec.usage = { completion_tokens: tokens, total_tokens: tokens };
  } else if (status === 'failed') {
    rec.error = {
      code: 'InternalServiceError',
      message: 'the model service failed the task (simulated by [sim:fail])',
    };
  } else if (status === 'expired') {
    rec.error = { code: 'TaskExpired', message: 'the task was not finished before execution_expires_after' };
  }
  return rec;
}

function triggerOf(body: BetaTaskCreateParams): SimBetaTask['trigger'] {
  const prompt = body.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ');
  if (prompt.includes('[sim:fail]')) return 'fail';
  if (prompt.includes('[sim:expire]')) return 'expire';
  if (prompt.includes('[sim:never]')) return 'never';
  return undefined;
}

/** Every asset:// URL a body references: content media items and `references.audio` entries. */
function referencedAssets(body: BetaTaskCreateParams): Array<{ where: string; id: string }> {
  const out: Array<{ where: string; id: string }> = [];
  body.content.forEach((c, i) => {
    if (c.type === 'text') return;
    const url =
      c.type === 'image_url' ? c.image_url.url : c.type === 'video_url' ? c.video_url.url : c.audio_url.url;
    const id = assetIdOf(url);
    if (id !== undefined) out.push({ where: `content[${i}].${c.type}.url`, id });
  });
  (body.references?.audio ?? []).forEach((r, i) => {
    const url = typeof r === 'string' ? r : (r as { url?: unknown } | null)?.url;
    const id = typeof url === 'string' ? assetIdOf(url) : undefined;
    if (id !== undefined) out.push({ where: `references.audio[${i}]`, id });
  });
  return out;
}

async function create(sim: Sim, req: SimRequest, reply: SimReply): Promise<void> {
  const fail = (status: number, code: string, message: string, param = ''): void =>
    reply.error(status, code, message, 'beta-task', { param });
  if (
    req.body === undefined ||
    req.body === null ||
    typeof req.body !== 'object' ||
    Array.isArray(req.body)
  ) {
    fail(400, 'invalid_request', 'the body must be a JSON object with model and content');
    return;
  }
  const r = await checkBetaTaskCreate(req.body, resolver(sim));
  if (!r.ok) {
    const v = r.violation;
    const status = v.code === 'model_not_found' ? 404 : 400;
    const code = v.code === 'invalid_duration' || v.code === 'model_not_found' ? v.code : 'invalid_request';
    fail(status, code, `${v.field}: ${v.message}`, v.field);
    return;
  }
  const { body, model } = r.value;
  if (!req.canSee(model)) {
    fail(404, 'model_not_found', `model ${body.model} is unknown or not visible to this token`, 'model');
    return;
  }
  // §2.1 rule 4 / §7: a filter-off model must have an exact version mapping (config trigger).
  if (isFilterOff(model) && sim.config.betaFilterOffUnmapped === true) {
    fail(503, 'model_mapping_required', `${model} has no exact upstream version mapping`, 'model');
    return;
  }
  // §2.4: asset:// references bind to the tenant's assets, and only Active assets enter tasks (§3).
  for (const ref of referencedAssets(body)) {
    const a = findAsset(sim, req.tenant, ref.id);
    if (a === undefined) {
      fail(404, 'ResourceNotFound.Asset', `${ref.where}: asset ${ref.id} was not found`, ref.where);
      return;
    }
    const s = assetStatus(sim, a);
    if (s !== 'Active') {
      fail(
        400,
        'invalid_request',
        `${ref.where}: asset ${ref.id} is ${s}; only Active assets may enter tasks`,
        ref.where,
      );
      return;
    }
  }
  const seed = typeof body.seed === 'number' ? body.seed : Math.floor(sim.random() * 2 ** 31);
  const task: SimBetaTask = {
    id: sim.id('cgt-'),
    tenant: req.tenant,
    model,
    body,
    createdAt: sim.now(),
    trigger: triggerOf(body),
    seed,
    // -1 lets the model service choose (§2.4): the simulator picks 5 seconds.
    duration: body.duration === undefined || body.duration === -1 ? 5 : body.duration,
  };
  betaTaskStore(sim).set(task.id, task);
  reply.json(200, { id: task.id }); // §4.1: no extra platform identifier
}

function visible(sim: Sim, req: SimRequest, id: string): SimBetaTask | undefined {
  const t = betaTaskStore(sim).get(id);
  return t !== undefined && t.tenant === req.tenant && t.hidden !== true ? t : undefined;
}

function notFound(reply: SimReply, id: string): void {
  reply.error(404, 'task_not_found', `task ${id} was not found`, 'beta-task', { param: 'task_id' });
}

function positive(value: string | null, name: string, max: number): number | string | undefined {
  if (value === null) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) return `${name} must be an integer from 1 to ${max}`;
  return n;
}

function list(sim: Sim, req: SimRequest, reply: SimReply): void {
  const q = req.query;
  const bad = (message: string, param: string): void =>
    reply.error(400, 'invalid_request', message, 'beta-task', { param });
  const page = positive(q.get('page_num'), 'page_num', Number.MAX_SAFE_INTEGER);
  if (typeof page === 'string') return bad(page, 'page_num');
  // page_size: default and maximum not shown (§4.1); 10 and the upstream's 500 (wire-formats §6) chosen.
  const size = positive(q.get('page_size'), 'page_size', 500);
  if (typeof size === 'string') return bad(size, 'page_size');
  const status = q.get('filter.status');
  if (status !== null && !(BETA_TASK_STATUSES as readonly string[]).includes(status)) {
    return bad(`filter.status must be one of ${BETA_TASK_STATUSES.join(', ')}`, 'filter.status');
  }
  let model: string | undefined;
  const rawModel = q.get('filter.model');
  if (rawModel !== null) {
    const n = normalizeBetaModel(rawModel);
    if (!n.ok) return bad(`filter.model: ${n.message}`, 'filter.model');
    model = n.model;
  }
  // §4.1 writes task_ids comma-separated; the upstream repeats the key (wire-formats §6): both are accepted.
  const ids = q
    .getAll('filter.task_ids')
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const idSet = ids.length > 0 ? new Set(ids) : undefined;
  const items = [...betaTaskStore(sim).values()]
    .reverse()
    .filter((t) => t.tenant === req.tenant && t.hidden !== true)
    .sort((a, b) => b.createdAt - a.createdAt)
    .filter((t) => idSet === undefined || idSet.has(t.id))
    .filter((t) => model === undefined || t.model === model)
    .map((t) => view(sim, t))
    .filter((v) => status === null || v.status === status);
  const p = page ?? 1;
  const s = size ?? 10;
  reply.json(200, { items: items.slice((p - 1) * s, p * s), total: items.length });
}

function remove(sim: Sim, req: SimRequest, reply: SimReply): void {
  const id = req.params.id as string;
  const t = visible(sim, req, id);
  if (t === undefined) return notFound(reply, id);
  const status = betaTaskStatus(sim, t);
  const conflict = (code: string, message: string): void =>
    reply.error(409, code, message, 'beta-task', { param: 'task_id', type: 'Conflict' });
  switch (status) {
    case 'running':
      // §3/§7: running tasks cannot be deleted.
      return conflict('InvalidAction.RunningTaskDeletion', `task ${id} is running and cannot be deleted`);
    case 'cancelled':
      // wire-formats §6: deleting a cancelled task is refused (the document does not name the code).
      return conflict('InvalidAction.CancelledTaskDeletion', `task ${id} is already cancelled`);
    case 'queued':
      t.cancelledAt = sim.now(); // wire-formats §6: a queued task becomes cancelled
      break;
    default:
      t.hidden = true; // §3: a terminal task is hidden from the tenant; audit and billing kept
  }
  reply.json(200, {});
}

/** beta-tasks-assets.md §4.1: the task endpoints. */
export function registerBetaTaskRoutes(sim: Sim): void {
  const o = { shape: 'beta-task' as const };
  // §7: an account that has not opened the overseas family gets 503 service_unavailable on every task endpoint.
  const opened =
    (handler: (req: SimRequest, reply: SimReply) => void | Promise<void>) =>
    (req: SimRequest, reply: SimReply): void | Promise<void> => {
      if (req.hasOpened('beta-tasks')) return handler(req, reply);
      reply.error(
        503,
        'service_unavailable',
        'this account has not opened the overseas video family',
        'beta-task',
      );
    };
  sim.router.add(
    'POST',
    PATH,
    opened((req, reply) => create(sim, req, reply)),
    o,
  );
  sim.router.add(
    'GET',
    PATH,
    opened((req, reply) => list(sim, req, reply)),
    o,
  );
  sim.router.add(
    'GET',
    `${PATH}/:id`,
    opened((req, reply) => {
      const t = visible(sim, req, req.params.id as string);
      if (t === undefined) notFound(reply, req.params.id as string);
      else reply.json(200, view(sim, t));
    }),
    o,
  );
  sim.router.add(
    'DELETE',
    `${PATH}/:id`,
    opened((req, reply) => remove(sim, req, reply)),
    o,
  );
}
