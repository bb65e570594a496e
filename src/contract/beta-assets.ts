/**
 * The asset library of beta-tasks-assets.md (§2.6, §3, §4.2, §7) as code: action names, bodies with every rule,
 * asset states and the polling steps, and tolerant schemas of the `ResponseMetadata` + `Result` envelope.
 */
import * as z from 'zod';
import { NEEDS_DNS, hostProblemOffline, normalizeBetaModel } from './beta.js';

/** §4.2/§9: every asset action carries `Version=2024-01-01`. */
export const ASSET_API_VERSION = '2024-01-01';

/** §4.2: the actions gw offers (ListAssetGroups and GetAssetGroup have no shown body, so they are not offered). */
export const ASSET_ACTIONS = ['CreateAssetGroup', 'CreateAsset', 'GetAsset', 'ListAssets'] as const;
export type AssetAction = (typeof ASSET_ACTIONS)[number];

/** §4.2/§7: `Update*` and `Delete*` actions are not offered (403 InvalidAction). */
export function isForbiddenAssetAction(action: string): boolean {
  return /^(Update|Delete)/.test(action);
}

/** §2.6 `AssetType` values. */
export const ASSET_TYPES = ['Image', 'Video', 'Audio'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

/** §3 asset `Status` values. */
export const ASSET_STATUSES = ['Processing', 'Active', 'Failed'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];

/** §3: `Active` and `Failed` are final; only `Active` assets may enter tasks. */
export function isAssetFinal(status: string): boolean {
  return status === 'Active' || status === 'Failed';
}

/** §3/§8: poll a `Processing` asset at 2, 5, 10 and 20 s back-off steps (then every 20 s). */
export const ASSET_POLL_STEPS_MS: readonly number[] = [2000, 5000, 10_000, 20_000];

/** §2.6/§4.2: `GroupType` (`AIGC` is the value shown; ListAssets requires it). */
export const ASSET_GROUP_TYPE = 'AIGC';

/** §4.2/§7: true when a body asks for `Moderation.Strategy` = `Skip` (not offered: moderation_skip_not_allowed). */
export function asksModerationSkip(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const m = (body as { Moderation?: unknown }).Moderation;
  if (m === null || typeof m !== 'object') return false;
  const s = (m as { Strategy?: unknown }).Strategy;
  return typeof s === 'string' && s.toLowerCase() === 'skip';
}

const model = z.string({ error: `model is required: a public model name` }).superRefine((m, ctx) => {
  const n = normalizeBetaModel(m);
  if (!n.ok) ctx.addIssue({ code: 'custom', message: n.message, params: { code: 'model_not_found' } });
});
const nonEmpty = (what: string, _section?: string) =>
  z
    .string({ error: `${what} is required (a string)` })
    .refine((s) => s.trim() !== '', { message: 'must not be empty' });
const moderation = z
  .unknown()
  .superRefine((m, ctx) => {
    if (asksModerationSkip({ Moderation: m })) {
      ctx.addIssue({
        code: 'custom',
        path: ['Strategy'],
        message: `Strategy=Skip is not offered by the asset library`,
        params: { code: 'moderation_skip_not_allowed' },
      });
    }
  })
  .optional();
const posInt = (rule: string) =>
  z.custom<number>((v) => typeof v === 'number' && Number.isInteger(v) && v >= 1, { message: rule });
const body = { error: `the body must be a JSON object` };

/** §4.2 CreateAssetGroup: `model`, `Name`, `GroupType` (`AIGC`), `Description`. */
export const createAssetGroupSchema = z.looseObject(
  {
    model,
    Name: nonEmpty('Name', '§2.6'),
    GroupType: z.literal(ASSET_GROUP_TYPE, { error: `GroupType must be AIGC` }),
    Description: z.string({ error: `Description must be a string` }).optional(),
    Moderation: moderation,
  },
  body,
);
export type CreateAssetGroupParams = z.infer<typeof createAssetGroupSchema>;

/** §2.6: `URL` is also accepted as `Url` or `url`; gw forwards it as `URL` (`URL` wins when several are given). */
export function normalizeAssetUrlKey(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const { Url, url, ...rest } = raw as Record<string, unknown>;
  if (rest.URL === undefined && (Url !== undefined || url !== undefined)) rest.URL = Url ?? url;
  return rest;
}

/** §4.2 CreateAsset: `model`, `GroupId`, `URL` (or `Url`/`url`), `AssetType` (Image|Video|Audio), `Name`. */
export const createAssetSchema = z.preprocess(
  normalizeAssetUrlKey,
  z.looseObject(
    {
      model,
      GroupId: nonEmpty('GroupId', '§2.6'),
      URL: nonEmpty('URL', '§2.6'),
      AssetType: z.enum(ASSET_TYPES, { error: `AssetType must be one of Image, Video, Audio` }),
      Name: nonEmpty('Name', '§2.6'),
      Moderation: moderation,
    },
    body,
  ),
);
export type CreateAssetParams = z.infer<typeof createAssetSchema>;

/** §4.2 GetAsset: `model`, `Id`. */
export const getAssetSchema = z.looseObject(
  { model, Id: nonEmpty('Id', '§4.2'), Moderation: moderation },
  body,
);
export type GetAssetParams = z.infer<typeof getAssetSchema>;

/** §4.2 ListAssets: `Filter.GroupType` must be AIGC, `Filter.GroupIds` an array of strings, `PageNumber` >= 1. */
export const listAssetsSchema = z.looseObject(
  {
    model,
    Filter: z.looseObject(
      {
        GroupType: z.literal(ASSET_GROUP_TYPE, { error: `must be AIGC` }),
        GroupIds: z
          .array(z.string({ error: `group ids must be strings` }), {
            error: `must be an array of group id strings`,
          })
          .optional(),
      },
      { error: `Filter is required: {GroupType: "AIGC", GroupIds: [...]}` },
    ),
    PageNumber: posInt(`must be an integer >= 1`).optional(),
    PageSize: posInt(`must be a positive integer`).optional(),
    Moderation: moderation,
  },
  body,
);
export type ListAssetsParams = z.infer<typeof listAssetsSchema>;

/** The body schema of each offered action. */
export const ASSET_ACTION_SCHEMAS = {
  CreateAssetGroup: createAssetGroupSchema,
  CreateAsset: createAssetSchema,
  GetAsset: getAssetSchema,
  ListAssets: listAssetsSchema,
} as const;

/**
 * Client-side check that an asset source URL can be publicly downloadable (§2.6: no cookies, login state or
 * one-time links): https, no credentials, and a host that is not obviously private. The service itself reports
 * download failures only as `Status` = `Failed` (§7), so this is gw's courtesy, not a server rule.
 */
export function assetSourceUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return `"${value}" is not a URL; use a public https URL`;
  }
  if (url.protocol !== 'https:') {
    return `must use https, not ${url.protocol.replace(':', '')}: the asset library downloads it publicly`;
  }
  if (url.username !== '' || url.password !== '') {
    return `must not carry credentials: the URL must be downloadable without login state`;
  }
  const host = hostProblemOffline(url.hostname);
  if (host !== undefined && host !== NEEDS_DNS) {
    return `${host}: the asset library cannot download from it; use a publicly downloadable URL`;
  }
  const h = url.hostname.toLowerCase();
  if (
    host === NEEDS_DNS &&
    (h.endsWith('.local') || h.endsWith('.internal') || h.endsWith('.lan') || !h.includes('.'))
  ) {
    return `${h} is not a public host name; use a publicly downloadable URL`;
  }
  return undefined;
}

const EXT_TYPES: Readonly<Record<string, AssetType>> = {
  png: 'Image',
  jpg: 'Image',
  jpeg: 'Image',
  webp: 'Image',
  gif: 'Image',
  bmp: 'Image',
  tif: 'Image',
  tiff: 'Image',
  heic: 'Image',
  mp4: 'Video',
  mov: 'Video',
  webm: 'Video',
  mkv: 'Video',
  avi: 'Video',
  m4v: 'Video',
  mp3: 'Audio',
  wav: 'Audio',
  m4a: 'Audio',
  aac: 'Audio',
  ogg: 'Audio',
  flac: 'Audio',
  opus: 'Audio',
};

/** The AssetType a URL's file extension suggests (a guess the user confirms), or undefined. */
export function guessAssetType(value: string): AssetType | undefined {
  let path: string;
  try {
    path = new URL(value).pathname;
  } catch {
    path = value;
  }
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return ext !== undefined ? EXT_TYPES[ext] : undefined;
}

/** A default asset Name from a URL: its last path segment without the extension. */
export function defaultAssetName(value: string): string {
  try {
    const seg = new URL(value).pathname.split('/').filter(Boolean).pop() ?? '';
    const name = decodeURIComponent(seg).replace(/\.[A-Za-z0-9]+$/, '');
    return name !== '' ? name : 'asset';
  } catch {
    return 'asset';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Answers (§4.2): `ResponseMetadata` + `Result`, tolerant.

/** §4.2 `ResponseMetadata` (`Action`, `Service`, `Version`, `Region` in some responses; `Error` on failure). */
export const responseMetadataSchema = z.looseObject({
  RequestId: z.string().optional(),
  Action: z.string().optional(),
  Version: z.string().optional(),
  Service: z.string().optional(),
  Region: z.string().optional(),
  Error: z.looseObject({ Code: z.string().optional(), Message: z.string().optional() }).optional(),
});

/** §4.2 create answers: `Result.Id` only. */
export const assetCreatedSchema = z.looseObject({
  ResponseMetadata: responseMetadataSchema,
  Result: z.looseObject({ Id: z.string().min(1) }),
});
export type AssetCreated = z.infer<typeof assetCreatedSchema>;

/** §2.6 asset record: the four list fields (others are not shown, so they pass through). */
export const assetSchema = z.looseObject({
  Id: z.string(),
  GroupId: z.string().optional(),
  AssetType: z.string().optional(),
  Status: z.string(),
});
export type Asset = z.infer<typeof assetSchema>;

/** §4.2 GetAsset answer: the asset with `Status` in `Result`. */
export const getAssetResultSchema = z.looseObject({
  ResponseMetadata: responseMetadataSchema,
  Result: assetSchema,
});
export type GetAssetResult = z.infer<typeof getAssetResultSchema>;

/** §4.2 ListAssets answer. */
export const listAssetsResultSchema = z.looseObject({
  ResponseMetadata: responseMetadataSchema,
  Result: z.looseObject({
    Items: z.array(assetSchema),
    TotalCount: z.number(),
    PageNumber: z.number().optional(),
    PageSize: z.number().optional(),
  }),
});
export type ListAssetsResult = z.infer<typeof listAssetsResultSchema>;
