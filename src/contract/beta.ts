/**
 * beta-tasks-assets.md (the second video family) as code: native task creation rules, model names, states,
 * 4k sizes, price SKUs, the callback_url rules of §6, and tolerant schemas of the task answers.
 * Pure: DNS resolution for callback_url is a function the caller passes in.
 */
import * as z from 'zod';
import { BETA_DATED_MODELS, BETA_MODELS, type BetaModel } from './catalog.js';
import { check, type CheckResult } from './validate.js';
import { NEEDS_DNS, hostProblem, hostProblemOffline, type HostResolver } from './net.js';

export {
  NEEDS_DNS,
  hostProblem,
  hostProblemOffline,
  nonPublicAddressReason,
  type HostResolver,
} from './net.js';

// ---------------------------------------------------------------------------------------------------------------
// Models (§2.1)

/** Public names and the dated names accepted for them (§2.1 rule 1). */
export function isBetaModelName(name: string): boolean {
  return (BETA_MODELS as readonly string[]).includes(name) || name in BETA_DATED_MODELS;
}

/**
 * Normalises a `model` value to its public name (§2.1 rule 1: the three dated names map to public names), or says
 * which rule refuses it (§2.1 rule 2: short ids, aliases, and filter-off names with a version suffix anywhere).
 */
export function normalizeBetaModel(
  name: string,
): { ok: true; model: BetaModel } | { ok: false; message: string } {
  if ((BETA_MODELS as readonly string[]).includes(name)) return { ok: true, model: name as BetaModel };
  const dated = BETA_DATED_MODELS[name];
  if (dated !== undefined) return { ok: true, model: dated };
  if (/filter-?off/i.test(name)) {
    return {
      ok: false,
      message: `"${name}" is not accepted: filter-off models take no version suffix in any position; use gamma-video-2-0-filter-off or gamma-video-2-0-fast-filter-off`,
    };
  }
  return {
    ok: false,
    message: `"${name}" is not accepted: use a public model name (${BETA_MODELS.join(', ')}) or a dated upstream name (${Object.keys(BETA_DATED_MODELS).join(', ')}); short ids and aliases are refused`,
  };
}

/** The public model whose prices and abilities a model reuses (§2.1: filter-off twins). */
export function betaBaseModel(
  model: BetaModel,
): 'gamma-video-2-0' | 'gamma-video-2-0-fast' | 'gamma-video-2-0-mini' {
  if (model === 'gamma-video-2-0-filter-off') return 'gamma-video-2-0';
  if (model === 'gamma-video-2-0-fast-filter-off') return 'gamma-video-2-0-fast';
  return model;
}

/** True for the two filter-off public models (§2.1 rule 4: they need an exact version mapping). */
export function isFilterOff(model: BetaModel): boolean {
  return model.endsWith('-filter-off');
}

// ---------------------------------------------------------------------------------------------------------------
// Enumerations (§2.4, §2.2, §3)

/** §2.4 `ratio` values. */
export const BETA_RATIOS = ['adaptive', '16:9', '9:16', '1:1', '4:3', '3:4', '21:9'] as const;
export type BetaRatio = (typeof BETA_RATIOS)[number];

/** §2.4 `resolution` values. */
export const BETA_RESOLUTIONS = ['480p', '720p', '1080p', '4k'] as const;
export type BetaResolution = (typeof BETA_RESOLUTIONS)[number];

/** §2.1 / §2.4: the resolutions each model offers (filter-off twins share their counterpart's abilities). */
export function betaResolutionsFor(model: BetaModel): readonly BetaResolution[] {
  return betaBaseModel(model) === 'gamma-video-2-0' ? BETA_RESOLUTIONS : ['480p', '720p'];
}

/** §2.2: output size at `resolution` = `4k`, by ratio (10-bit H.265). */
export const BETA_4K_SIZES: Readonly<Record<Exclude<BetaRatio, 'adaptive'>, string>> = {
  '16:9': '3840x2160',
  '9:16': '2160x3840',
  '1:1': '2880x2880',
  '4:3': '3326x2494',
  '3:4': '2494x3326',
  '21:9': '4398x1886',
};

/** §3 task `status` values. */
export const BETA_TASK_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'expired',
  'cancelled',
] as const;
export type BetaTaskStatus = (typeof BETA_TASK_STATUSES)[number];

/** §3: states a task never leaves. */
export const BETA_TERMINAL_STATUSES: readonly BetaTaskStatus[] = [
  'succeeded',
  'failed',
  'expired',
  'cancelled',
];

/** True when a task status is terminal (§3). */
export function isBetaTerminal(status: string): boolean {
  return (BETA_TERMINAL_STATUSES as readonly string[]).includes(status);
}

/** True when a task status is the successful one (§3: `succeeded`; only successful videos are billed, §1). */
export function isBetaSuccess(status: string): boolean {
  return status === 'succeeded';
}

/** §2.4 content item types and the roles each admits (text takes none). */
export const BETA_CONTENT_ROLES = {
  text: [],
  image_url: ['first_frame', 'last_frame', 'reference_image'],
  video_url: ['reference_video'],
  audio_url: ['reference_audio'],
} as const;

/** §8: joined clips take 2 to 3 `video_url` items; no scenario of §2.4 takes more than 3 reference videos. */
export const BETA_MAX_REFERENCE_VIDEOS = 3;

/** §2.4/§8: the usual upstream range of `execution_expires_after` (outside it gw warns; it is not a hard rule). */
export const BETA_EXPIRES_USUAL = { min: 3600, max: 259_200 } as const;

// ---------------------------------------------------------------------------------------------------------------
// Asset references (§2.4)

const ASSET_REF = /^(asset|Asset):\/\/([^\s/]+)$/;

/** The asset id of an `asset://<id>` or `Asset://<id>` reference (§2.4), or undefined. */
export function assetIdOf(url: string): string | undefined {
  return ASSET_REF.exec(url)?.[2];
}

/** §2.4: `Asset://` is accepted and normalised to `asset://`; other values are returned unchanged. */
export function normalizeAssetUrl(url: string): string {
  const id = assetIdOf(url);
  return id !== undefined ? `asset://${id}` : url;
}

/** CLI.md `<asset>`: `asset://<id>`, `Asset://<id>` (normalised) or a bare asset id. */
export function toAssetRef(input: string): string {
  const t = input.trim();
  if (assetIdOf(t) !== undefined) return normalizeAssetUrl(t);
  if (/^[A-Za-z0-9][\w.-]*$/.test(t)) return `asset://${t}`;
  return t; // left for the schema to refuse with the rule
}

// ---------------------------------------------------------------------------------------------------------------
// Public addresses (§6 rule 3; also §2.6 "publicly downloadable")

const CALLBACK_RULE = `callback_url must be a non-empty https URL whose host resolves to a public address`;

/** The offline part of the callback_url rules (§6 rules 1-3); `NEEDS_DNS` when the host needs DNS. */
export function callbackUrlProblemOffline(value: unknown): string | undefined | typeof NEEDS_DNS {
  if (typeof value !== 'string') return `must be a string`;
  const t = value.trim();
  if (t === '') return `must not be empty after trimming`;
  let url: URL;
  try {
    url = new URL(t);
  } catch {
    return `"${t}" is not a URL; ${CALLBACK_RULE}`;
  }
  if (url.protocol !== 'https:') return `must use https, not ${url.protocol.replace(':', '')}`;
  const host = hostProblemOffline(url.hostname);
  if (host === NEEDS_DNS) return NEEDS_DNS;
  return host !== undefined ? `${host}; it must resolve to a publicly routable address` : undefined;
}

/** All callback_url rules of §6, resolving the host with `resolve`. Undefined when the value passes. */
export async function callbackUrlProblem(value: unknown, resolve: HostResolver): Promise<string | undefined> {
  const offline = callbackUrlProblemOffline(value);
  if (offline !== NEEDS_DNS) return offline;
  const host = new URL((value as string).trim()).hostname;
  const p = await hostProblem(host, resolve);
  return p !== undefined ? `${p}; it must resolve to a publicly routable address` : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Task creation body (§2.4)

const mediaUrl = (type: string) =>
  z.looseObject(
    {
      url: z
        .string({ error: `must be a string` })
        .refine((u) => assetIdOf(u) !== undefined, {
          message: `must be an asset reference asset://<Asset_Id> (Asset:// is accepted); media must first be uploaded to the asset library and be Active`,
        })
        .transform(normalizeAssetUrl),
    },
    { error: `must be an object {url} (${type})` },
  );

const roleOf = <T extends readonly [string, ...string[]]>(type: string, roles: T) =>
  z.enum(roles, { error: `must be one of ${roles.join(', ')} for ${type} items` }).optional();

const contentItemSchema = z.discriminatedUnion(
  'type',
  [
    z.looseObject({
      type: z.literal('text'),
      text: z.string({ error: `text items carry a string "text"` }),
      role: z.never({ error: `text items take no role` }).optional(),
    }),
    z.looseObject({
      type: z.literal('image_url'),
      image_url: mediaUrl('image_url'),
      role: roleOf('image_url', BETA_CONTENT_ROLES.image_url),
    }),
    z.looseObject({
      type: z.literal('video_url'),
      video_url: mediaUrl('video_url'),
      role: roleOf('video_url', BETA_CONTENT_ROLES.video_url),
    }),
    z.looseObject({
      type: z.literal('audio_url'),
      audio_url: mediaUrl('audio_url'),
      role: roleOf('audio_url', BETA_CONTENT_ROLES.audio_url),
    }),
  ],
  {
    error: (iss) =>
      iss.code === 'invalid_union' || iss.code === 'invalid_type'
        ? `must be an item whose type is text, image_url, video_url or audio_url`
        : undefined,
  },
);
export type BetaContentItem = z.infer<typeof contentItemSchema>;

const bool = (field: string) => z.boolean({ error: `${field} must be true or false` }).optional();
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const int = (rule: string, min: number, max: number) =>
  z.custom<number>((v) => isInt(v) && v >= min && v <= max, { message: rule });

/** Copies a raw body with `CallbackURL` renamed to `callback_url` (§6 rule 5: `callback_url` wins when both). */
export function renameCallbackUrl(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !('CallbackURL' in body))
    return body;
  const { CallbackURL, ...rest } = body as Record<string, unknown>;
  return 'callback_url' in rest ? rest : { ...rest, callback_url: CallbackURL };
}

const createObject = z.looseObject(
  {
    // §2.4/§2.1: the public model name (dated names accepted); normalised separately, forwarded as given.
    model: z.string({ error: `model is required: a public model name` }).superRefine((m, ctx) => {
      const n = normalizeBetaModel(m);
      if (!n.ok) ctx.addIssue({ code: 'custom', message: n.message, params: { code: 'model_not_found' } });
    }),
    // §2.4: multimodal input; at least a prompt text or a reference asset.
    content: z.array(contentItemSchema, {
      error: `content is required: an array of text, image_url, video_url and audio_url items`,
    }),
    // §2.4/§8: 4 to 15 seconds or -1 (the model service chooses); §7 invalid_duration.
    duration: z
      .custom<number>((v) => v === -1 || (isInt(v) && v >= 4 && v <= 15), {
        message: `must be an integer from 4 to 15, or -1 to let the model service choose`,
        params: { code: 'invalid_duration' },
      })
      .optional(),
    ratio: z.enum(BETA_RATIOS, { error: `must be one of ${BETA_RATIOS.join(', ')}` }).optional(),
    resolution: z
      .enum(BETA_RESOLUTIONS, { error: `must be one of ${BETA_RESOLUTIONS.join(', ')}` })
      .optional(),
    generate_audio: bool('generate_audio'),
    watermark: bool('watermark'),
    return_last_frame: bool('return_last_frame'),
    draft: bool('draft'),
    // §2.4: integer seconds; the usual range (3600..259200) is only a warning, see betaTaskWarnings.
    execution_expires_after: int(
      `must be a positive integer number of seconds`,
      1,
      Number.MAX_SAFE_INTEGER,
    ).optional(),
    // §2.4/§8: queue priority 0 to 9.
    priority: int(`must be an integer from 0 to 9`, 0, 9).optional(),
    safety_identifier: z.string({ error: `must be a string` }).optional(),
    service_tier: z.string({ error: `must be a string such as default or flex` }).optional(),
    // §6: non-empty after trimming, https, a public host (DNS part checked in checkBetaTaskCreate).
    callback_url: z
      .unknown()
      .superRefine((v, ctx) => {
        const p = callbackUrlProblemOffline(v);
        if (p !== undefined && p !== NEEDS_DNS) {
          ctx.addIssue({ code: 'custom', message: p, params: { code: 'invalid_request' } });
        }
      })
      .transform((v) => (typeof v === 'string' ? v.trim() : v))
      .optional(),
    references: z
      .looseObject(
        {
          audio: z.array(z.unknown(), { error: `references.audio must be an array` }).optional(),
        },
        { error: `references must be an object` },
      )
      .optional(),
  },
  { error: `the body must be a JSON object` },
);

function crossFieldRules(b: z.infer<typeof createObject>, ctx: z.RefinementCtx): void {
  const n = normalizeBetaModel(b.model);
  if (!n.ok) return;
  const model = n.model;
  const base = betaBaseModel(model);
  // §2.4: at least a prompt text or a reference asset.
  const prompts = b.content.filter((c) => c.type === 'text' && c.text.trim() !== '').length;
  const refs = b.content.filter((c) => c.type !== 'text').length;
  if (prompts + refs === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['content'],
      message: `must hold at least a prompt text or a reference asset`,
      params: { code: 'invalid_request' },
    });
  }
  // §2.4 scenarios / §8: a join takes 2 to 3 video_url items; no scenario takes more than 3.
  const videos = b.content.filter((c) => c.type === 'video_url').length;
  if (videos > BETA_MAX_REFERENCE_VIDEOS) {
    ctx.addIssue({
      code: 'custom',
      path: ['content'],
      message: `holds ${videos} video_url items; at most ${BETA_MAX_REFERENCE_VIDEOS} reference videos (a join takes 2 to 3)`,
      params: { code: 'invalid_request' },
    });
  }
  // §2.1/§2.2/§2.4: 4k only on the standard model (and its filter-off twin); fast and mini only 480p/720p.
  if (b.resolution !== undefined && !betaResolutionsFor(model).includes(b.resolution)) {
    ctx.addIssue({
      code: 'custom',
      path: ['resolution'],
      message:
        b.resolution === '4k' && base === 'gamma-video-2-0'
          ? `4k is offered only on gamma-video-2-0`
          : b.resolution === '4k' && base !== 'gamma-video-2-0'
            ? `${model} offers only 480p and 720p; 4k is offered only on gamma-video-2-0`
            : `${model} offers only 480p and 720p`,
    });
  }
  if (base === 'gamma-video-2-0-mini') {
    // §2.4 mini restrictions: no audio references, no flex tier, no draft; rejected before the upstream is called.
    if (b.references?.audio !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['references', 'audio'],
        message: `gamma-video-2-0-mini takes no audio references`,
      });
    }
    const audioAt = b.content.findIndex((c) => c.type === 'audio_url');
    if (audioAt >= 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['content', audioAt, 'type'],
        message: `gamma-video-2-0-mini takes no audio_url items`,
      });
    }
    if (b.service_tier === 'flex') {
      ctx.addIssue({
        code: 'custom',
        path: ['service_tier'],
        message: `flex is rejected for gamma-video-2-0-mini`,
      });
    }
    if (b.draft === true) {
      ctx.addIssue({
        code: 'custom',
        path: ['draft'],
        message: `draft=true is rejected for gamma-video-2-0-mini`,
      });
    }
  }
}

/**
 * A task creation body (§2.4) with every offline rule. Unknown fields pass (the upstream's native form, e.g.
 * `seed`). `CallbackURL` is renamed first (§6 rule 5) and `Asset://` prefixes are normalised (§2.4).
 */
export const betaTaskCreateSchema = z.preprocess(
  renameCallbackUrl,
  createObject.superRefine(crossFieldRules),
);
export type BetaTaskCreateParams = z.infer<typeof betaTaskCreateSchema>;

/** Warnings that do not block a create: `execution_expires_after` outside the usual 3600..259200 (§2.4, §8). */
export function betaTaskWarnings(body: BetaTaskCreateParams): string[] {
  const out: string[] = [];
  const e = body.execution_expires_after;
  if (e !== undefined && (e < BETA_EXPIRES_USUAL.min || e > BETA_EXPIRES_USUAL.max)) {
    out.push(
      `execution_expires_after=${e} is outside the usual upstream range ${BETA_EXPIRES_USUAL.min} to ${BETA_EXPIRES_USUAL.max} seconds; the service may refuse it`,
    );
  }
  return out;
}

/** Result of checking a create body: the body to send, its public model, and non-blocking warnings. */
export interface PreparedBetaTask {
  body: BetaTaskCreateParams;
  model: BetaModel;
  warnings: string[];
}

/** Every rule of §2.4 and §6, including DNS for callback_url; the first violation, or the prepared body. */
export async function checkBetaTaskCreate(
  raw: unknown,
  resolve: HostResolver,
): Promise<CheckResult<PreparedBetaTask>> {
  const r = check(betaTaskCreateSchema, raw);
  if (!r.ok) return r;
  const body = r.value;
  if (body.callback_url !== undefined) {
    const p = await callbackUrlProblem(body.callback_url, resolve);
    if (p !== undefined) {
      const violation = { field: 'callback_url', message: p, code: 'invalid_request' };
      return { ok: false, violation, violations: [violation] };
    }
  }
  const n = normalizeBetaModel(body.model);
  if (!n.ok) throw new Error('unreachable: the schema checked the model');
  return { ok: true, value: { body, model: n.model, warnings: betaTaskWarnings(body) } };
}

// ---------------------------------------------------------------------------------------------------------------
// Price SKUs (§2.3)

/** §2.3: list price in USD per million tokens by SKU. */
export const BETA_SKU_PRICES: Readonly<Record<string, number>> = {
  'gamma-video-2-0-480p-novideo': 7.0,
  'gamma-video-2-0-480p-video': 4.3,
  'gamma-video-2-0-720p-novideo': 7.0,
  'gamma-video-2-0-720p-video': 4.3,
  'gamma-video-2-0-1080p-novideo': 7.7,
  'gamma-video-2-0-1080p-video': 4.7,
  'gamma-video-2-0-4k-novideo': 4.0,
  'gamma-video-2-0-4k-video': 2.4,
  'gamma-video-2-0-fast-novideo': 5.6,
  'gamma-video-2-0-fast-video': 3.3,
  'gamma-video-2-0-mini-novideo': 3.5,
  'gamma-video-2-0-mini-video': 2.1,
};

/** The SKU a task bills under and its price. */
export interface BetaSkuQuote {
  sku: string;
  /** USD per million tokens (§2.3). */
  price: number;
  /** The public model as logged (filter-off keeps its own name, §2.3). */
  model: BetaModel;
  /** §2.3: `video` when content holds a video_url item. */
  reference: 'video' | 'novideo';
}

/**
 * §2.3: the SKU of a create body: `video` vs `novideo` by `content[].type` = `video_url`; the standard model also by
 * resolution; fast and mini are flat; filter-off models reuse their counterpart's SKUs. When the standard model's
 * resolution is not given the SKU depends on the service's default (not shown): every candidate is returned.
 */
export function skuCandidates(body: {
  model: string;
  content?: ReadonlyArray<{ type?: unknown }> | undefined;
  resolution?: string | undefined;
}): BetaSkuQuote[] {
  const n = normalizeBetaModel(body.model);
  if (!n.ok) return [];
  const reference = (body.content ?? []).some((c) => c.type === 'video_url') ? 'video' : 'novideo';
  const base = betaBaseModel(n.model);
  const resolutions: readonly string[] =
    base !== 'gamma-video-2-0'
      ? ['']
      : body.resolution !== undefined
        ? [body.resolution]
        : ['480p', '720p', '1080p'];
  const out: BetaSkuQuote[] = [];
  for (const r of resolutions) {
    const sku = `${base}${r === '' ? '' : `-${r}`}-${reference}`;
    const price = BETA_SKU_PRICES[sku];
    if (price !== undefined) out.push({ sku, price, model: n.model, reference });
  }
  return out;
}

/** §2.3: the one SKU of a create body, or undefined when it depends on an unstated default resolution. */
export function skuFor(body: Parameters<typeof skuCandidates>[0]): BetaSkuQuote | undefined {
  const c = skuCandidates(body);
  return c.length === 1 ? c[0] : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// List query (§4.1)

/** §4.1 list query parameters as gw sends them. */
export const betaTaskListQuerySchema = z.object({
  page_num: int(`must be an integer >= 1`, 1, Number.MAX_SAFE_INTEGER).optional(),
  page_size: int(`must be a positive integer`, 1, Number.MAX_SAFE_INTEGER).optional(),
  'filter.status': z
    .enum(BETA_TASK_STATUSES, { error: `must be one of ${BETA_TASK_STATUSES.join(', ')}` })
    .optional(),
  'filter.model': z
    .string()
    .superRefine((m, ctx) => {
      const n = normalizeBetaModel(m);
      if (!n.ok) ctx.addIssue({ code: 'custom', message: n.message });
    })
    .optional(),
  'filter.task_ids': z.array(z.string().min(1, { error: `task ids must not be empty` })).optional(),
});
export type BetaTaskListQuery = z.infer<typeof betaTaskListQuerySchema>;

// ---------------------------------------------------------------------------------------------------------------
// Answers (§2.5, §4.1): tolerant, unknown fields pass.

/** POST create answer: `{id}` only (§4.1). */
export const betaTaskCreatedSchema = z.looseObject({ id: z.string().min(1) });
export type BetaTaskCreated = z.infer<typeof betaTaskCreatedSchema>;

/** §2.5 task record. */
export const betaTaskSchema = z.looseObject({
  id: z.string(),
  model: z.string().optional(),
  status: z.string(),
  content: z
    .looseObject({ video_url: z.string().optional(), last_frame_url: z.string().optional() })
    .nullable()
    .optional(),
  usage: z
    .looseObject({ completion_tokens: z.number().optional(), total_tokens: z.number().optional() })
    .nullable()
    .optional(),
  error: z.looseObject({ code: z.string().optional(), message: z.string().optional() }).nullable().optional(),
  created_at: z.number().optional(),
  updated_at: z.number().optional(),
  seed: z.number().optional(),
  resolution: z.string().optional(),
  ratio: z.string().optional(),
  duration: z.number().optional(),
  framespersecond: z.number().optional(),
  service_tier: z.string().optional(),
  execution_expires_after: z.number().optional(),
  generate_audio: z.boolean().optional(),
  draft: z.boolean().optional(),
  safety_identifier: z.string().optional(),
  priority: z.number().optional(),
});
export type BetaTask = z.infer<typeof betaTaskSchema>;

/** §4.1 list answer `{items, total}`. */
export const betaTaskListSchema = z.looseObject({
  items: z.array(betaTaskSchema),
  total: z.number(),
});
export type BetaTaskList = z.infer<typeof betaTaskListSchema>;

/** What `--dry-run` reports besides the body: the SKU (or candidates) and the 4k size. */
export interface BetaQuote {
  sku: BetaSkuQuote | null;
  candidates: BetaSkuQuote[];
  unit: 'USD per million tokens';
  /** §2.2 output size when `resolution` is 4k and the ratio is fixed. */
  size?: string;
}

/** §2.2/§2.3: the SKU and price a create body would bill under, for `--dry-run`. */
export function quoteBetaTask(body: Record<string, unknown>): BetaQuote {
  const candidates = skuCandidates(body as Parameters<typeof skuCandidates>[0]);
  const one = candidates.length === 1 ? (candidates[0] as BetaSkuQuote) : null;
  const ratio = typeof body.ratio === 'string' ? body.ratio : undefined;
  const size =
    body.resolution === '4k' && ratio !== undefined
      ? BETA_4K_SIZES[ratio as keyof typeof BETA_4K_SIZES]
      : undefined;
  return { sku: one, candidates, unit: 'USD per million tokens', ...(size !== undefined ? { size } : {}) };
}

/** A quote as readable lines: the SKU (or the candidates), its price, the filter-off billing rule, the 4k size. */
export function betaQuoteLines(q: BetaQuote): string[] {
  const price = (p: number): string => `${p.toFixed(1)} USD per million tokens`;
  const lines: string[] = [];
  const one = q.sku;
  if (one !== null) {
    lines.push(`sku: ${one.sku}`);
    lines.push(`price: ${price(one.price)} (${one.reference === 'video' ? 'has a' : 'no'} video reference)`);
    if (isFilterOff(one.model)) {
      lines.push(`billing: reuses the price of its normal counterpart; logs keep ${one.model}`);
    }
  } else if (q.candidates.length > 0) {
    lines.push(
      'sku: depends on the resolution the service picks (no resolution given; its default is not documented):',
    );
    for (const c of q.candidates) lines.push(`  ${c.sku}  ${price(c.price)}`);
  } else lines.push(`sku: unknown (the model is not one of the documented models)`);
  if (q.size !== undefined) lines.push(`size: ${q.size}, 10-bit H.265`);
  return lines;
}
