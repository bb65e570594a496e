/**
 * common.md §2.3, §3, §7, §8: the generic asynchronous video tasks as code. The create body with every rule
 * (seconds, resolution, seed, the per-model reference table), tolerant record schemas, the states, and the
 * clip-1.1 list price. Pure: no I/O.
 */
import * as z from 'zod';
import { VIDEO_MODELS, type VideoModel } from './catalog.js';

// ---------------------------------------------------------------------------------------------------------
// States (common.md §3)

/** common.md §3: created or running; keep polling with backoff. */
export const VIDEO_RUNNING_STATES = ['queued', 'in_progress', 'processing'] as const;
/** common.md §3: succeeded ("clients should accept both words"). */
export const VIDEO_SUCCESS_STATES = ['completed', 'success'] as const;
/** common.md §3: the upstream task failed, or was cancelled / not continued. */
export const VIDEO_FAILURE_STATES = ['failed', 'cancelled'] as const;
/** Every state common.md §3 names. */
export const VIDEO_STATES = [
  ...VIDEO_RUNNING_STATES,
  ...VIDEO_SUCCESS_STATES,
  ...VIDEO_FAILURE_STATES,
] as const;
export type VideoState = (typeof VIDEO_STATES)[number];

const has = (list: readonly string[], s: unknown): boolean => typeof s === 'string' && list.includes(s);

/** True for queued / in_progress / processing. */
export function isVideoRunning(state: unknown): boolean {
  return has(VIDEO_RUNNING_STATES, state);
}
/** True for completed / success. */
export function isVideoSuccess(state: unknown): boolean {
  return has(VIDEO_SUCCESS_STATES, state);
}
/** True for failed / cancelled. */
export function isVideoFailure(state: unknown): boolean {
  return has(VIDEO_FAILURE_STATES, state);
}
/** True when the task will not change any more (success or failure). */
export function isVideoTerminal(state: unknown): boolean {
  return isVideoSuccess(state) || isVideoFailure(state);
}

// ---------------------------------------------------------------------------------------------------------
// Limits and price (common.md §2.3, §8)

/** common.md §2.3/§8: seconds 2..15. */
export const VIDEO_SECONDS_MIN = 2;
export const VIDEO_SECONDS_MAX = 15;
/** common.md §2.3: the clip-1.x series needs at least 3 seconds. */
export const CLIP_SECONDS_MIN = 3;
/** common.md §2.3/§8: the only resolutions. */
export const VIDEO_RESOLUTIONS = ['720p', '1080p'] as const;
export type VideoResolution = (typeof VIDEO_RESOLUTIONS)[number];
/** common.md §2.3/§8: seed range. */
export const SEED_MAX = 2_147_483_647;
/** common.md §8: 1 to 9 reference images recommended for clip-1.1-r2v. */
export const CLIP_11_R2V_IMAGES = { min: 1, max: 9 } as const;

/** common.md §2.3: the clip-1.1 series defaults to 1080p ("send 720p explicitly for the lower price"). */
export const CLIP_11_DEFAULT_RESOLUTION: VideoResolution = '1080p';
/** common.md §2.3 pricing constant: clip-1.1 domestic list price, CNY per second by resolution. */
export const CLIP_11_PRICE_PER_SECOND: Readonly<Record<VideoResolution, number>> = {
  '720p': 0.9,
  '1080p': 1.2,
};

/** The minimum seconds for a model (3 for clip-1.x, else 2). */
export function minVideoSecondsFor(model: string): number {
  return model.startsWith('clip-1.') ? CLIP_SECONDS_MIN : VIDEO_SECONDS_MIN;
}

/** True for the clip-1.1 series (the only one the contract prices). */
export function isClip11(model: string): boolean {
  return model.startsWith('clip-1.1-');
}

/** A list price the contract states. `amount` is undefined when seconds are not known. */
export interface VideoListPrice {
  currency: 'CNY';
  perSecond: number;
  seconds: number | undefined;
  amount: number | undefined;
  resolution: VideoResolution;
  /** True when the resolution was not given and the series default (1080p) applies. */
  resolutionDefaulted: boolean;
}

/**
 * The list price of a video where common.md §2.3 gives one (clip-1.1: CNY 0.90/s at 720p, 1.20/s at 1080p,
 * default 1080p); undefined for every other model or an unknown resolution.
 */
export function videoListPrice(
  model: string,
  seconds: number | undefined,
  resolution: string | undefined,
): VideoListPrice | undefined {
  if (!isClip11(model)) return undefined;
  const res = resolution ?? CLIP_11_DEFAULT_RESOLUTION;
  if (res !== '720p' && res !== '1080p') return undefined;
  const perSecond = CLIP_11_PRICE_PER_SECOND[res];
  const amount = seconds !== undefined ? Math.round(perSecond * seconds * 100) / 100 : undefined;
  return {
    currency: 'CNY',
    perSecond,
    seconds,
    amount,
    resolution: res,
    resolutionDefaulted: resolution === undefined,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The reference table (common.md §2.3 "Reference mapping per model")

/** Which reference fields a model accepts, and what they may carry. */
export interface VideoReferenceRule {
  /** `input_reference`: which media it may carry (empty = not accepted). */
  inputReference: ReadonlyArray<'image' | 'video'>;
  /** `input_image` accepted. */
  inputImage: boolean;
  /** `references.video[]` accepted. */
  referencesVideo: boolean;
  /** Images in input_reference + input_image: a hard range (rejected outside). */
  images?: { min?: number; max?: number };
  /** Images: a recommended range (a warning outside it, not a rejection). */
  imagesRecommended?: { min: number; max: number };
  /** At least one reference of any accepted kind is needed (the model maps it to its input). */
  needsReference?: boolean;
  /** `references.video` must hold at least one video. */
  needsVideo?: boolean;
  /** A video in input_reference may only be its first item (vid-2.7-i2v: "first item video becomes first clip"). */
  videoFirstOnly?: boolean;
  /** The upstream mapping, as the table states it (for help texts). */
  mapping: string;
}

/** common.md §2.3: the per-model reference table, as data. */
export const VIDEO_REFERENCE_RULES: Readonly<Record<VideoModel, VideoReferenceRule>> = {
  'clip-1.1-t2v': { inputReference: [], inputImage: false, referencesVideo: false, mapping: 'text only' },
  'clip-1.1-i2v': {
    inputReference: ['image'],
    inputImage: true,
    referencesVideo: false,
    images: { min: 1, max: 1 },
    mapping: 'input_reference or input_image: one first-frame image only',
  },
  'clip-1.1-r2v': {
    inputReference: ['image'],
    inputImage: false,
    referencesVideo: false,
    imagesRecommended: CLIP_11_R2V_IMAGES,
    mapping: 'input_reference image URL or array of image objects (1 to 9 recommended): reference images',
  },
  'clip-1.0-i2v': {
    inputReference: ['image'],
    inputImage: true,
    referencesVideo: false,
    images: { min: 1, max: 1 },
    mapping: 'input_reference or input_image: native image URL',
  },
  'clip-1.0-r2v': {
    inputReference: ['image'],
    inputImage: false,
    referencesVideo: false,
    needsReference: true,
    mapping: 'input_reference image URL (object {image_url} preferred): reference images',
  },
  'vid-2.7-t2v': { inputReference: [], inputImage: false, referencesVideo: false, mapping: 'text only' },
  'vid-2.7-i2v': {
    inputReference: ['image', 'video'],
    inputImage: false,
    referencesVideo: false,
    needsReference: true,
    videoFirstOnly: true,
    mapping:
      'input_reference image or video URL: a first video becomes the first clip, an image the first frame, later images the last frame',
  },
  'vid-2.7-r2v': {
    inputReference: ['image'],
    inputImage: false,
    referencesVideo: true,
    needsVideo: true,
    mapping:
      'references.video[] (reference videos) plus optional input_reference image object (reference images)',
  },
  'clip-1.0-video-edit': {
    inputReference: ['image'],
    inputImage: false,
    referencesVideo: true,
    needsReference: true,
    mapping: 'image input_reference (native image URL) or references.video[] (reference videos)',
  },
  'vid-2.7-videoedit': {
    inputReference: ['image'],
    inputImage: false,
    referencesVideo: true,
    needsVideo: true,
    mapping:
      'references.video[] (the source video) plus optional image input_reference object (reference images)',
  },
};

/** True when a URL names a video (common.md §2.3: "videos should end in .mp4 or .mov"). */
export function isVideoUrl(url: string): boolean {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // not a URL: judge the text itself
  }
  return /\.(mp4|mov)$/i.test(path);
}

function isHttpsUrl(url: string): boolean {
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
}

function isHttpUrl(url: string): boolean {
  try {
    const p = new URL(url).protocol;
    return p === 'https:' || p === 'http:';
  } catch {
    return false;
  }
}

/** One reference item: a URL string, `{image_url}` (string or `{url}`), or `{video_url}`. */
export interface ReferenceItem {
  url: string | undefined;
  kind: 'image' | 'video';
}

function itemOf(v: unknown): ReferenceItem {
  if (typeof v === 'string') return { url: v, kind: isVideoUrl(v) ? 'video' : 'image' };
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const pick = (x: unknown): string | undefined =>
      typeof x === 'string'
        ? x
        : x !== null && typeof x === 'object' && typeof (x as { url?: unknown }).url === 'string'
          ? (x as { url: string }).url
          : undefined;
    if (o.video_url !== undefined) return { url: pick(o.video_url), kind: 'video' };
    const url = pick(o.image_url);
    return { url, kind: url !== undefined && isVideoUrl(url) ? 'video' : 'image' };
  }
  return { url: undefined, kind: 'image' };
}

/** The items of `input_reference` (object, string or array, common.md §2.3). */
export function referenceItems(value: unknown): ReferenceItem[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(itemOf);
}

/** The references of a create body, read once. */
interface References {
  items: ReferenceItem[];
  inputImage: ReferenceItem | undefined;
  videos: readonly string[];
}

/** The fields of a create body the reference rules read. */
interface ReferenceFields {
  model: string;
  input_reference?: unknown;
  references?: { video?: readonly string[] | undefined } | undefined;
}

/** A broken reference rule: where, and the rule. */
type ReferenceIssue = [path: PropertyKey[], message: string] | undefined;

/** A reference field the model does not take at all. */
function unacceptedField(body: ReferenceFields, rule: VideoReferenceRule, refs: References): ReferenceIssue {
  const m = body.model;
  if (body.input_reference !== undefined && rule.inputReference.length === 0)
    return [['input_reference'], `${m} takes no reference input (text only)`];
  if (refs.inputImage !== undefined && !rule.inputImage)
    return [['input_image'], `${m} does not accept input_image; it takes ${rule.mapping}`];
  if (body.references?.video !== undefined && !rule.referencesVideo)
    return [['references', 'video'], `${m} does not accept references.video; it takes ${rule.mapping}`];
  return undefined;
}

/** Every URL: images are public https addresses, videos http(s) ending in .mp4 or .mov. */
function badReferenceUrl(body: ReferenceFields, rule: VideoReferenceRule, refs: References): ReferenceIssue {
  const m = body.model;
  for (const [i, it] of refs.items.entries()) {
    const path = Array.isArray(body.input_reference) ? ['input_reference', i] : ['input_reference'];
    if (it.url === undefined) return [path, `must be a URL string or an object {image_url: <https url>}`];
    if (it.kind !== 'video') {
      if (!isHttpsUrl(it.url)) return [path, `image URL must be a public https address`];
      continue;
    }
    if (!rule.inputReference.includes('video'))
      return [path, `${m} takes only images in input_reference, not the video ${it.url}`];
    if (rule.videoFirstOnly === true && i > 0)
      return [path, `${m}: only the first item may be a video (it becomes the first clip)`];
    if (!isHttpUrl(it.url)) return [path, `video URL must be an http(s) address reachable by the upstream`];
  }
  const image = refs.inputImage;
  if (image !== undefined && (image.url === undefined || !isHttpsUrl(image.url) || image.kind === 'video'))
    return [['input_image'], `must be a public https image URL`];
  const bad = refs.videos.findIndex((url) => !isHttpUrl(url) || !isVideoUrl(url));
  if (bad !== -1)
    return [['references', 'video', bad], `must be an http(s) video URL ending in .mp4 or .mov`];
  return undefined;
}

/** How many images and videos the model needs or takes. */
function badReferenceCount(
  body: ReferenceFields,
  rule: VideoReferenceRule,
  refs: References,
): ReferenceIssue {
  const m = body.model;
  const hasImage = refs.inputImage !== undefined;
  const images = refs.items.filter((r) => r.kind === 'image').length + (hasImage ? 1 : 0);
  if (rule.images?.max !== undefined && images > rule.images.max) {
    const path = hasImage && refs.items.length > 0 ? ['input_image'] : ['input_reference'];
    return [path, `${m} takes ${rule.mapping} (got ${images})`];
  }
  if (rule.images?.min !== undefined && images < rule.images.min)
    return [['input_reference'], `${m} needs a first-frame image: ${rule.mapping}`];
  if (rule.needsVideo === true && refs.videos.length === 0)
    return [['references', 'video'], `${m} needs at least one video in references.video: ${rule.mapping}`];
  if (rule.needsReference === true && refs.items.length + refs.videos.length + (hasImage ? 1 : 0) === 0)
    return [['input_reference'], `${m} needs reference input: ${rule.mapping}`];
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// The create body (common.md §2.3)

/** A reference value as the wire carries it: string, object or array (common.md §2.3). */
const referenceValue = z.union([
  z.string(),
  z.looseObject({}),
  z.array(z.union([z.string(), z.looseObject({})])),
]);

/**
 * `POST /v1/videos` body, common.md §2.3. Strict: §1 says callers send only declared fields. Each violation
 * names its rule and, where §7 documents one, its error code (`params.code`): `invalid_duration`,
 * `invalid_resolution`, `model_not_found`; `invalid_seed` and `invalid_reference` are our names for rules whose
 * code the document does not show.
 */
export const videoCreateSchema = z
  .strictObject(
    {
      // common.md §2.3: one of the video model names of the table
      model: z.custom<VideoModel>(
        (v) => typeof v === 'string' && (VIDEO_MODELS as readonly string[]).includes(v),
        {
          message: `must be one of the video models: ${VIDEO_MODELS.join(', ')}`,
          params: { code: 'model_not_found' },
        },
      ),
      // common.md §2.3: description of the video
      prompt: z.string({ error: `must be a string` }).optional(),
      // common.md §2.3: integer seconds 2..15 (clip-1.x >= 3 is checked below)
      seconds: z
        .custom<number>(
          (v) =>
            typeof v === 'number' && Number.isInteger(v) && v >= VIDEO_SECONDS_MIN && v <= VIDEO_SECONDS_MAX,
          {
            message: `must be an integer from ${VIDEO_SECONDS_MIN} to ${VIDEO_SECONDS_MAX}`,
            params: { code: 'invalid_duration' },
          },
        )
        .optional(),
      // common.md §2.3: 720p or 1080p only
      resolution: z
        .custom<VideoResolution>((v) => (VIDEO_RESOLUTIONS as readonly unknown[]).includes(v), {
          message: `must be 720p or 1080p`,
          params: { code: 'invalid_resolution' },
        })
        .optional(),
      // common.md §2.3/§7: a JSON number (a numeric string is rejected) within 0..2147483647
      seed: z
        .custom<number>((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= SEED_MAX, {
          message: `must be a JSON integer from 0 to ${SEED_MAX}, not a string`,
          params: { code: 'invalid_seed' },
        })
        .optional(),
      // common.md §2.3: reference media, object {image_url} preferred
      input_reference: referenceValue.optional(),
      // common.md §2.3: alternative first-frame input (string or object)
      input_image: z.union([z.string(), z.looseObject({})]).optional(),
      // common.md §2.3: references.video is an array of video URLs
      references: z
        .strictObject({
          video: z
            .array(z.string(), { error: `references.video must be an array of URL strings` })
            .optional(),
        })
        .optional(),
    },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? `fields the video API does not take: ${iss.keys.join(', ')}`
          : undefined,
    },
  )
  .superRefine((body, ctx) => {
    const rule = VIDEO_REFERENCE_RULES[body.model] as VideoReferenceRule | undefined;
    if (rule === undefined) return; // an unknown model was already reported
    // common.md §2.3/§7: the clip-1.x series needs at least 3 seconds
    if (
      typeof body.seconds === 'number' &&
      body.model.startsWith('clip-1.') &&
      body.seconds < CLIP_SECONDS_MIN
    ) {
      const message = `must be at least ${CLIP_SECONDS_MIN} for the clip-1.x series`;
      ctx.addIssue({ code: 'custom', path: ['seconds'], message, params: { code: 'invalid_duration' } });
    }
    const refs: References = {
      items: referenceItems(body.input_reference),
      inputImage: body.input_image !== undefined ? itemOf(body.input_image) : undefined,
      videos: body.references?.video ?? [],
    };
    // The reference rules, in order; the first one broken is reported.
    const broken =
      unacceptedField(body, rule, refs) ??
      badReferenceUrl(body, rule, refs) ??
      badReferenceCount(body, rule, refs);
    if (broken !== undefined) {
      const [path, message] = broken;
      ctx.addIssue({ code: 'custom', path, message, params: { code: 'invalid_reference' } });
    }
  });

/** A video create body that passed every rule. */
export type VideoCreateParams = z.infer<typeof videoCreateSchema>;

/**
 * What `videos.create` accepts: a valid body, or (with validation off, to test the gateway's own rejections)
 * anything shaped like one.
 */
export type VideoCreateInput = VideoCreateParams | (Record<string, unknown> & { model: string });

/** Advice that is not a rule (common.md §8 "recommended"): warnings, never rejections. */
export function videoCreateWarnings(body: VideoCreateParams): string[] {
  const out: string[] = [];
  const rule = VIDEO_REFERENCE_RULES[body.model];
  const rec = rule.imagesRecommended;
  if (rec !== undefined) {
    const n = referenceItems(body.input_reference).filter((r) => r.kind === 'image').length;
    if (n < rec.min || n > rec.max) {
      out.push(`${body.model}: ${rec.min} to ${rec.max} reference images are recommended, got ${n}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Records (common.md §2.3: beyond video_id, a status, a result URL and expires_at the fields are "not shown")

const recordShape = {
  video_id: z.string().optional(),
  id: z.string().optional(),
  status: z.string({ error: 'the video record carries no status' }),
  model: z.string().optional(),
  expires_at: z.union([z.number(), z.string(), z.null()]).optional(),
  error: z.unknown().optional(),
};

function withVideoId<T extends { video_id?: string | undefined; id?: string | undefined }>(
  r: T,
  ctx: z.RefinementCtx,
): T & { video_id: string } {
  const id = r.video_id ?? r.id;
  if (id === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['video_id'],
      message: 'the answer carries no video_id',
    });
    return z.NEVER;
  }
  // A gateway that answers only `id` still gets a video_id, so callers read one field.
  return r.video_id !== undefined ? (r as T & { video_id: string }) : { ...r, video_id: id };
}

/** A video record (`POST /v1/videos` and `GET /v1/videos/{id}` answers); tolerant: unknown fields pass. */
export const videoRecordSchema = z.looseObject(recordShape).transform(withVideoId);
export type VideoRecord = z.infer<typeof videoRecordSchema>;

/** The result URL of a record: the field name is "not shown" (common.md §2.3), so the usual names are tried. */
export function videoResultUrl(record: Record<string, unknown>): string | undefined {
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const obj = (v: unknown): Record<string, unknown> =>
    v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  const results = Array.isArray(record.results) ? obj(record.results[0]) : {};
  return (
    str(record.url) ??
    str(record.result_url) ??
    str(record.video_url) ??
    str(record.output_url) ??
    str(obj(record.result).url) ??
    str(obj(record.content).video_url) ??
    str(results.url)
  );
}

/** `expires_at` as a Date: unix seconds, unix milliseconds or an ISO string; undefined when absent. */
export function videoExpiresAt(record: Record<string, unknown>): Date | undefined {
  const v = record.expires_at;
  if (typeof v === 'number' && Number.isFinite(v)) return new Date(v < 1e12 ? v * 1000 : v);
  if (typeof v === 'string' && v !== '') {
    if (/^\d+(\.\d+)?$/.test(v)) return videoExpiresAt({ expires_at: Number(v) });
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : new Date(t);
  }
  return undefined;
}

/** The error of a failed record as `{code, message}` (object or string forms). */
export function videoError(record: Record<string, unknown>): {
  code: string | undefined;
  message: string | undefined;
} {
  const e = record.error;
  if (typeof e === 'string') return { code: undefined, message: e };
  if (e !== null && typeof e === 'object') {
    const o = e as Record<string, unknown>;
    return {
      code: typeof o.code === 'string' ? o.code : typeof o.code === 'number' ? String(o.code) : undefined,
      message: typeof o.message === 'string' ? o.message : undefined,
    };
  }
  return { code: undefined, message: undefined };
}
