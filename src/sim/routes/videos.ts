/**
 * Generic asynchronous videos of common.md (§2.3, §3, §4, §7) in the simulator: create with every §2.3 rule
 * checked server-side, a time-based state machine computed from `sim.now()` on every read, the result on the
 * CDN origin with `expires_at`, and the content route (not-ready error before completion, a redirect after).
 * Videos are visible only to the tenant that created them.
 */
import { VIDEO_MODELS } from '../../contract/catalog.js';
import { check } from '../../contract/validate.js';
import {
  CLIP_11_DEFAULT_RESOLUTION,
  isClip11,
  videoCreateSchema,
  type VideoCreateParams,
} from '../../contract/video.js';
import type { SimReply, SimRequest } from '../http.js';
import { makeMp4 } from '../mp4.js';
import type { Sim } from '../server.js';

/** Prompt triggers (docs/simulator.md "Videos"). */
type Trigger = 'fail' | 'cancel' | 'never' | 'expired';

/** A video as the simulator keeps it. */
export interface SimVideo {
  id: string;
  tenant: string;
  model: string;
  prompt: string;
  seconds: number;
  resolution: '720p' | '1080p';
  createdAt: number;
  trigger: Trigger | undefined;
  /** Published on the CDN the first time the video is read as completed. */
  url?: string;
  expiresAt?: number;
}

/** Videos of every tenant, by id. */
export type VideoStore = Map<string, SimVideo>;

/** The simulator's videos (tests read it). */
export function videoStore(sim: Sim): VideoStore {
  return sim.store<VideoStore>('videos', () => new Map());
}

/** Seconds when the body gives none (common.md: default not shown). */
export const SIM_DEFAULT_SECONDS = 5;

const SIZES = { '720p': { width: 1280, height: 720 }, '1080p': { width: 1920, height: 1080 } } as const;

function triggerOf(prompt: string): Trigger | undefined {
  const m = /\[sim:(fail|cancel|never|expired)\]/.exec(prompt);
  return m ? (m[1] as Trigger) : undefined;
}

/** The state of a video now: queued → in_progress → processing → completed|success (or failed/cancelled). */
function stateOf(sim: Sim, v: SimVideo): { status: string; progress: number; endAt: number } {
  const { videoQueuedMs, videoRunningMs } = sim.config.timings;
  const startAt = v.createdAt + videoQueuedMs;
  const endAt = startAt + videoRunningMs;
  const now = sim.now();
  if (now < startAt) return { status: 'queued', progress: 0, endAt };
  if (v.trigger === 'never') return { status: 'in_progress', progress: 50, endAt: Infinity };
  if (now < endAt) {
    const progress = Math.min(99, Math.floor(((now - startAt) / Math.max(1, videoRunningMs)) * 100));
    // Both running words of common.md §3 appear: in_progress for the first half, processing for the second.
    return { status: progress < 50 ? 'in_progress' : 'processing', progress, endAt };
  }
  if (v.trigger === 'fail') return { status: 'failed', progress: 100, endAt };
  if (v.trigger === 'cancel') return { status: 'cancelled', progress: 0, endAt };
  return { status: sim.config.videoSuccessState, progress: 100, endAt };
}

function publish(sim: Sim, v: SimVideo, endAt: number): void {
  if (v.url !== undefined) return;
  // [sim:expired]: the URL expired a second after it was made, i.e. it is already in the past when read.
  v.expiresAt = v.trigger === 'expired' ? endAt - 1000 : endAt + sim.config.timings.resultTtlMs;
  const size = sim.config.videoBytes;
  v.url = sim.cdn.publish(
    {
      ...(size !== undefined ? { size } : { bytes: makeMp4({ seconds: v.seconds, ...SIZES[v.resolution] }) }),
      contentType: 'video/mp4',
      expiresAt: v.expiresAt,
    },
    `${v.id}.mp4`,
  );
}

/** The record of common.md §3 (video_id, status, result URL, expires_at) plus OpenAI's video-job fields. */
function record(sim: Sim, v: SimVideo): Record<string, unknown> {
  const s = stateOf(sim, v);
  const done = s.status === 'completed' || s.status === 'success';
  if (done) publish(sim, v, s.endAt);
  const sec = (ms: number): number => Math.floor(ms / 1000);
  let error: Record<string, string> | null = null;
  if (s.status === 'failed') {
    error = {
      code: 'upstream_task_failed',
      message: 'the upstream video task failed (simulated: [sim:fail])',
    };
  } else if (s.status === 'cancelled') {
    error = {
      code: 'upstream_task_cancelled',
      message: 'the upstream did not continue the task (simulated: [sim:cancel])',
    };
  }
  return {
    id: v.id,
    video_id: v.id,
    object: 'video',
    model: v.model,
    status: s.status,
    progress: s.progress,
    created_at: sec(v.createdAt),
    completed_at: s.status === 'queued' || s.endAt === Infinity || sim.now() < s.endAt ? null : sec(s.endAt),
    expires_at: done && v.expiresAt !== undefined ? sec(v.expiresAt) : null,
    prompt: v.prompt,
    seconds: v.seconds,
    resolution: v.resolution,
    url: done ? (v.url ?? null) : null,
    error,
  };
}

function find(sim: Sim, req: SimRequest, reply: SimReply): SimVideo | undefined {
  const v = videoStore(sim).get(req.params.id ?? '');
  // Another tenant's video does not exist for this token.
  if (v === undefined || v.tenant !== req.tenant) {
    reply.error(404, 'video_not_found', `no video with id ${req.params.id ?? ''}`, 'common', {
      param: 'video_id',
    });
    return undefined;
  }
  return v;
}

/** Registers POST /v1/videos, GET /v1/videos/:id and GET /v1/videos/:id/content (common.md §4). */
export function registerVideoRoutes(sim: Sim): void {
  sim.router.add('POST', '/v1/videos', (req, reply) => {
    const body = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      reply.error(400, 'invalid_request', 'the body must be a JSON object', 'common');
      return;
    }
    const model = (body as { model?: unknown }).model;
    // common.md §7: model unknown or not visible → model_not_found (a model of another kind is not a video model).
    if (
      typeof model !== 'string' ||
      !(VIDEO_MODELS as readonly string[]).includes(model) ||
      !req.canSee(model)
    ) {
      reply.error(
        404,
        'model_not_found',
        `the model ${typeof model === 'string' ? model : '(none)'} does not exist or is not a video model visible to this token`,
        'common',
        { param: 'model' },
      );
      return;
    }
    const r = check(videoCreateSchema, body);
    if (!r.ok) {
      const v = r.violation;
      reply.error(400, v.code ?? 'invalid_request', `${v.field}: ${v.message}`, 'common', { param: v.field });
      return;
    }
    const b: VideoCreateParams = r.value;
    const prompt = b.prompt ?? '';
    const v: SimVideo = {
      id: sim.id('video_'),
      tenant: req.tenant,
      model: b.model,
      prompt,
      seconds: b.seconds ?? SIM_DEFAULT_SECONDS,
      resolution: b.resolution ?? (isClip11(b.model) ? CLIP_11_DEFAULT_RESOLUTION : '720p'),
      createdAt: sim.now(),
      trigger: triggerOf(prompt),
    };
    videoStore(sim).set(v.id, v);
    reply.json(200, record(sim, v));
  });

  sim.router.add('GET', '/v1/videos/:id', (req, reply) => {
    const v = find(sim, req, reply);
    if (v) reply.json(200, record(sim, v));
  });

  sim.router.add('GET', '/v1/videos/:id/content', (req, reply) => {
    const v = find(sim, req, reply);
    if (!v) return;
    const rec = record(sim, v);
    const status = rec.status as string;
    if (status === 'failed' || status === 'cancelled') {
      reply.error(404, `video_${status}`, `video ${v.id} ended ${status}; it has no content`, 'common');
      return;
    }
    if (typeof rec.url !== 'string') {
      // common.md §4 rule 2: not ready before completion (code and status not shown: OpenAI's 404 mirrored).
      reply.error(
        404,
        'video_not_ready',
        `video ${v.id} is not ready yet (status ${status}); poll GET /v1/videos/${v.id} until it is completed`,
        'common',
      );
      return;
    }
    // A redirect to the CDN origin: the client follows it without the token (another origin).
    reply.send(302, Buffer.alloc(0), { location: rec.url, 'cache-control': 'no-store' });
  });
}
