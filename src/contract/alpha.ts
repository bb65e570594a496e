/**
 * alpha-image2video.md as code: `POST /alpha/v1/videos/image2video`. Two layers:
 * - `alphaImage2VideoBodySchema`: what the gateway checks at creation (the document's §2.1, §4 rules 1–4, §8,
 *   plus the upstream image types of wire-formats.md §5). The simulator answers with it.
 * - `alphaImage2VideoRequestSchema`: that, plus what gw checks before spending money on a task that would fail
 *   later (§4 rule 5: mask resolution; an https callback).
 * Defaults (`model_name` alpha-v1, `mode` std, `aspect_ratio` 16:9, `duration` "5") are the gateway's: gw sends
 * only the fields it was given, and evaluates the rules against the defaults when a field is absent.
 */
import * as z from 'zod';
import { ALPHA_MODELS, type AlphaModel } from './catalog.js';
import { imageSize, sniffImageType, type ImageInfo } from './image-size.js';

/** alpha §4: the one endpoint of the first video family (the gateway prefixes the upstream path with /alpha). */
export const ALPHA_IMAGE2VIDEO_PATH = '/alpha/v1/videos/image2video';

/** alpha §2.1 / §9: defaults the gateway applies to absent fields. */
export const ALPHA_DEFAULTS = {
  model_name: 'alpha-v1',
  mode: 'std',
  aspect_ratio: '16:9',
  duration: '5',
} as const satisfies Record<string, string>;

/** alpha §2.1 / §4 rule 4: models that take `cfg_scale`. */
export const ALPHA_CFG_SCALE_MODELS: readonly AlphaModel[] = ['alpha-v1', 'alpha-v1-5', 'alpha-v1-6'];

/** alpha §2.1 / §4 rule 3: models that take `sound` and `voice_list`. */
export const ALPHA_SOUND_MODELS: readonly AlphaModel[] = ['alpha-v2-6'];

/** alpha §8 limits. */
export const ALPHA_LIMITS = {
  dynamicMaskGroups: 6,
  trajectoryMinPoints: 2,
  trajectoryMaxPoints: 77,
  voices: 2,
  cfgScaleMin: 0,
  cfgScaleMax: 1,
} as const;

/** alpha §2.1 enumerations. */
export const ALPHA_MODES = ['std', 'pro'] as const;
export const ALPHA_ASPECT_RATIOS = ['16:9', '9:16', '1:1'] as const;
export const ALPHA_DURATIONS = ['5', '10'] as const;
export const ALPHA_SOUND = ['on', 'off'] as const;

/** True for an absolute http(s) URL. */
export function isHttpUrl(s: string): boolean {
  if (!/^https?:\/\//i.test(s)) return false;
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** True for standard, padded Base64 (no `data:` prefix, no line breaks). */
export function isBase64(s: string): boolean {
  return s.length > 0 && s.length % 4 === 0 && BASE64.test(s);
}

/** Width, height and type of a Base64-encoded PNG or JPEG, or undefined. Decodes the whole string. */
export function base64ImageInfo(s: string): ImageInfo | undefined {
  return isBase64(s) ? imageSize(Buffer.from(s, 'base64')) : undefined;
}

function base64ImageType(s: string): string | undefined {
  // The magic numbers sit in the first 12 bytes: decoding 16 characters is enough and cheap on a 10 MB image.
  return sniffImageType(Buffer.from(s.slice(0, 16), 'base64'));
}

type Ctx = z.RefinementCtx;

/**
 * alpha §2.1: an image field is "URL or Base64". wire-formats.md §5: raw Base64 without a `data:` prefix,
 * jpg/jpeg/png only.
 */
function checkImageString(value: string, ctx: Ctx, o: { url: boolean; what: string }): void {
  if (value.startsWith('data:')) {
    ctx.addIssue({
      code: 'custom',
      message: `must be raw Base64 without a data: prefix`,
    });
    return;
  }
  if (o.url && isHttpUrl(value)) return;
  if (!isBase64(value)) {
    ctx.addIssue({
      code: 'custom',
      message: o.url ? `must be an http(s) URL or Base64` : `must be Base64 (${o.what})`,
    });
    return;
  }
  if (base64ImageType(value) === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `Base64 must decode to a PNG or JPEG image (jpg/jpeg/png)`,
    });
  }
}

/** ` (what)`, or nothing when there is nothing to add. */
const note = (what: string): string => (what === '' ? '' : ` (${what})`);

function str(what: string): z.ZodString {
  return z.string({
    error: (iss) => (iss.input === undefined ? `is required${note(what)}` : `must be a string${note(what)}`),
  });
}

function enumOf<T extends readonly [string, ...string[]]>(
  values: T,
  rule: string,
): z.ZodEnum<{ [K in T[number]]: K }> {
  return z.enum(values, { error: `must be one of ${values.join(', ')}${note(rule)}` });
}

const imageField = (rule: string) =>
  str(rule).superRefine((v, ctx) => checkImageString(v, ctx, { url: true, what: 'URL or Base64' }));

/** alpha §2.1: one trajectory point; integer pixel coordinates, origin at the bottom-left of the image. */
const pointSchema = z.looseObject({
  x: z
    .number({ error: `must be a number (integer pixel coordinates)` })
    .int({ error: `must be an integer (integer pixel coordinates)` })
    .nonnegative({ error: `must be 0 or more (pixel coordinates from the bottom-left origin)` }),
  y: z
    .number({ error: `must be a number (integer pixel coordinates)` })
    .int({ error: `must be an integer (integer pixel coordinates)` })
    .nonnegative({ error: `must be 0 or more (pixel coordinates from the bottom-left origin)` }),
});

const trajectoryRule = `at least ${ALPHA_LIMITS.trajectoryMinPoints} and at most ${ALPHA_LIMITS.trajectoryMaxPoints} points`;

/** alpha §2.1: a dynamic brush group `{mask, trajectories}`. */
export const dynamicMaskSchema = z.looseObject(
  {
    mask: str(`Base64-encoded mask image`).superRefine((v, ctx) =>
      checkImageString(v, ctx, { url: false, what: 'Base64-encoded mask image' }),
    ),
    trajectories: z
      .array(pointSchema, { error: `must be an array of {x, y}` })
      .min(ALPHA_LIMITS.trajectoryMinPoints, { error: `has too few points (${trajectoryRule})` })
      .max(ALPHA_LIMITS.trajectoryMaxPoints, { error: `has too many points (${trajectoryRule})` }),
  },
  { error: `must be an object {mask, trajectories}` },
);

/** alpha §2.1: `camera_control` — `type` (`simple` shown) and `config` (numbers, `zoom` shown). */
export const cameraControlSchema = z.looseObject(
  {
    type: str(`camera_control.type`).min(1, {
      error: `must not be empty (camera_control.type)`,
    }),
    config: z
      .record(z.string(), z.number({ error: `must be a number (camera_control.config)` }), {
        error: `must be an object of numbers (camera_control.config)`,
      })
      .optional(),
  },
  { error: `must be an object {type, config}` },
);

const baseBody = z.looseObject(
  {
    // alpha §2.1 / §9: model by model_name; default alpha-v1
    model_name: enumOf(ALPHA_MODELS, '').optional(),
    // alpha §4 rule 1: image required; URL or Base64
    image: imageField(`first-frame image, URL or Base64`),
    image_tail: imageField(`last-frame image, URL or Base64`).optional(),
    prompt: str('').optional(),
    negative_prompt: str('').optional(),
    // alpha §2.1 / §8: at most 2 entries (entries are objects upstream: wire-formats.md §5 [{voice_id}])
    voice_list: z
      .array(z.looseObject({}, { error: `entries must be objects ([{voice_id}])` }), {
        error: `must be an array`,
      })
      .max(ALPHA_LIMITS.voices, {
        error: `must have at most ${ALPHA_LIMITS.voices} entries`,
      })
      .optional(),
    sound: enumOf(ALPHA_SOUND, '').optional(),
    // alpha §2.1 / §8: 0 to 1 inclusive
    cfg_scale: z
      .number({ error: `must be a number from 0 to 1` })
      .min(ALPHA_LIMITS.cfgScaleMin, { error: `must be a number from 0 to 1` })
      .max(ALPHA_LIMITS.cfgScaleMax, { error: `must be a number from 0 to 1` })
      .optional(),
    mode: enumOf(ALPHA_MODES, '').optional(),
    // alpha §2.1: a string; URL or Base64 like the image it brushes (wire-formats.md §5)
    static_mask: str('')
      .superRefine((v, ctx) => checkImageString(v, ctx, { url: true, what: 'static brush area' }))
      .optional(),
    // alpha §2.1 / §8: at most 6 groups
    dynamic_masks: z
      .array(dynamicMaskSchema, { error: `must be an array of {mask, trajectories}` })
      .max(ALPHA_LIMITS.dynamicMaskGroups, {
        error: `must have at most ${ALPHA_LIMITS.dynamicMaskGroups} groups`,
      })
      .optional(),
    camera_control: cameraControlSchema.optional(),
    aspect_ratio: enumOf(ALPHA_ASPECT_RATIOS, '').optional(),
    // alpha §2.1 / §8: a string, "5" or "10"
    duration: z.enum(ALPHA_DURATIONS, { error: `must be the string "5" or "10"` }).optional(),
    watermark_info: z.looseObject({}, { error: `must be an object` }).optional(),
    // alpha §2.1 / §6: a notification address
    callback_url: str('')
      .refine(isHttpUrl, { error: `must be an http(s) URL (notification address)` })
      .optional(),
    external_task_id: str('').optional(),
  },
  { error: `the body must be a JSON object` },
);

type BaseBody = z.output<typeof baseBody>;

/** The model the rules apply to: `model_name`, or the default alpha-v1 (§2.1, §9). */
export function effectiveModel(body: { model_name?: string | undefined }): string {
  return body.model_name ?? ALPHA_DEFAULTS.model_name;
}

/** The mutually exclusive groups of §4 rule 2 that a body uses, with the fields that put it there. */
export function exclusiveGroups(body: Record<string, unknown>): { group: string; fields: string[] }[] {
  const has = (k: string): boolean => body[k] !== undefined;
  const groups: { group: string; fields: string[] }[] = [];
  if (has('image_tail')) groups.push({ group: 'image + image_tail', fields: ['image_tail'] });
  const masks = ['static_mask', 'dynamic_masks'].filter(has);
  if (masks.length > 0) groups.push({ group: 'dynamic_masks / static_mask', fields: masks });
  if (has('camera_control')) groups.push({ group: 'camera_control', fields: ['camera_control'] });
  return groups;
}

/** Cross-field rules the gateway checks: §4 rules 2–4. */
function gatewayRules(body: BaseBody, ctx: Ctx): void {
  const model = effectiveModel(body);
  const modelNote =
    body.model_name === undefined ? `model_name defaults to ${model}` : `model_name is ${model}`;
  // alpha §4 rule 2: (a) image+image_tail, (b) dynamic_masks/static_mask, (c) camera_control are exclusive
  const groups = exclusiveGroups(body);
  if (groups.length > 1) {
    const [first, second] = groups as [(typeof groups)[0], (typeof groups)[0]];
    ctx.addIssue({
      code: 'custom',
      path: [second.fields[0] as string],
      message: `cannot be combined with ${first.fields.join(' / ')}: image + image_tail, dynamic_masks / static_mask and camera_control are mutually exclusive`,
    });
  }
  // alpha §2.1, §4 rule 3: voice_list only alpha-v2-6, with sound = on
  if (body.voice_list !== undefined) {
    if (!ALPHA_SOUND_MODELS.includes(model as AlphaModel)) {
      ctx.addIssue({
        code: 'custom',
        path: ['voice_list'],
        message: `only allowed with model ${ALPHA_SOUND_MODELS.join(', ')}; ${modelNote}`,
      });
    } else if (body.voice_list.length > 0 && body.sound !== 'on') {
      ctx.addIssue({
        code: 'custom',
        path: ['voice_list'],
        message: `requires sound = on`,
      });
    }
  }
  // alpha §2.1: sound only alpha-v2-6
  if (body.sound !== undefined && !ALPHA_SOUND_MODELS.includes(model as AlphaModel)) {
    ctx.addIssue({
      code: 'custom',
      path: ['sound'],
      message: `only allowed with model ${ALPHA_SOUND_MODELS.join(', ')}; ${modelNote}`,
    });
  }
  // alpha §2.1, §4 rule 4: cfg_scale only alpha-v1, alpha-v1-5, alpha-v1-6
  if (body.cfg_scale !== undefined && !ALPHA_CFG_SCALE_MODELS.includes(model as AlphaModel)) {
    ctx.addIssue({
      code: 'custom',
      path: ['cfg_scale'],
      message: `only allowed with models ${ALPHA_CFG_SCALE_MODELS.join(', ')}; ${modelNote}`,
    });
  }
}

/** The body of `POST /alpha/v1/videos/image2video` as the gateway checks it (§2.1, §4 rules 1–4, §8). */
export const alphaImage2VideoBodySchema = baseBody.superRefine(gatewayRules);
/** A request body of `POST /alpha/v1/videos/image2video`. */
export type AlphaImage2VideoBody = z.output<typeof alphaImage2VideoBodySchema>;

/** The masks of a body whose resolution can be read (Base64 PNG/JPEG), with their field paths. */
export function readableMasks(
  body: Record<string, unknown>,
): { path: (string | number)[]; info: ImageInfo }[] {
  const out: { path: (string | number)[]; info: ImageInfo }[] = [];
  if (typeof body.static_mask === 'string') {
    const info = base64ImageInfo(body.static_mask);
    if (info) out.push({ path: ['static_mask'], info });
  }
  if (Array.isArray(body.dynamic_masks)) {
    body.dynamic_masks.forEach((g: unknown, i) => {
      const mask = (g as { mask?: unknown } | null)?.mask;
      const info = typeof mask === 'string' ? base64ImageInfo(mask) : undefined;
      if (info) out.push({ path: ['dynamic_masks', i, 'mask'], info });
    });
  }
  return out;
}

/**
 * gw's own checks before sending: §2.1 and §4 rule 5 (a mask whose resolution differs from the image's makes the
 * upstream fail; wire-formats.md §5: every mask shares one resolution), checked whenever both are Base64; and an
 * https `callback_url` (a notification carries task data).
 */
function clientRules(body: BaseBody, ctx: Ctx): void {
  if (body.callback_url !== undefined && !/^https:\/\//i.test(body.callback_url)) {
    ctx.addIssue({
      code: 'custom',
      path: ['callback_url'],
      message: `must be an https URL (notification address; gw sends callbacks only over https)`,
    });
  }
  const masks = readableMasks(body);
  if (masks.length === 0) return;
  const image = base64ImageInfo(body.image);
  const ref = image ?? masks[0]?.info;
  const refName = image ? 'image' : 'the first mask';
  for (const m of image ? masks : masks.slice(1)) {
    if (ref && (m.info.width !== ref.width || m.info.height !== ref.height)) {
      ctx.addIssue({
        code: 'custom',
        path: m.path,
        message: `resolution ${m.info.width}x${m.info.height} differs from ${refName} (${ref.width}x${ref.height}); mask resolution must equal that of image`,
      });
      return;
    }
  }
}

/** What gw checks before sending: the gateway's rules plus §4 rule 5 and an https callback. */
export const alphaImage2VideoRequestSchema = baseBody.superRefine(gatewayRules).superRefine(clientRules);

/** alpha §2.2: `data` of the answer (task record fields beyond these: not shown). */
export const alphaTaskSchema = z.looseObject({
  task_id: z.string().min(1),
  task_status: z.string(),
  created_at: z.number().optional(),
  updated_at: z.number().optional(),
});
/** alpha §2.2 task data. */
export type AlphaTask = z.output<typeof alphaTaskSchema>;

/** alpha §2.2 / §7: the envelope of every answer; `code` 0 is success, anything else an error. */
export const alphaEnvelopeSchema = z.looseObject({
  code: z.number(),
  message: z.string().optional(),
  request_id: z.string().optional(),
  data: z.unknown().optional(),
});

/** alpha §2.2: a successful answer `{code: 0, message: success, request_id, data}`. */
export const alphaImage2VideoResponseSchema = z.looseObject({
  code: z.number(),
  message: z.string().optional(),
  request_id: z.string().optional(),
  data: alphaTaskSchema,
});
/** alpha §2.2 answer. */
export type AlphaImage2VideoResponse = z.output<typeof alphaImage2VideoResponseSchema>;
