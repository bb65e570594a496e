/**
 * Model names the three documents state. Pure data; the schemas of each family build on it.
 */

/** common.md §2.2 examples of chat models. */
export const CHAT_MODELS = ['chat-3.7-plus', 'chat-3-vl-plus'] as const;

/** common.md §2.2 example of an embeddings model. */
export const EMBEDDING_MODELS = ['text-embedding-v4'] as const;

/**
 * Image models: common.md §2.2 names none ("model string"). The simulator offers these two so generation and
 * edit can be exercised; a real gateway lists its own in `GET /v1/models`.
 */
export const SIM_IMAGE_MODELS = ['image-gen-1', 'image-edit-1'] as const;

/** common.md §2.3: the ten video models of the reference table. */
export const VIDEO_MODELS = [
  'clip-1.1-t2v',
  'clip-1.1-i2v',
  'clip-1.1-r2v',
  'clip-1.0-i2v',
  'clip-1.0-r2v',
  'vid-2.7-t2v',
  'vid-2.7-i2v',
  'vid-2.7-r2v',
  'clip-1.0-video-edit',
  'vid-2.7-videoedit',
] as const;
export type VideoModel = (typeof VIDEO_MODELS)[number];

/** alpha-image2video.md §2.1 `model_name` values; default `alpha-v1`. */
export const ALPHA_MODELS = [
  'alpha-v1',
  'alpha-v1-5',
  'alpha-v1-6',
  'alpha-v2-master',
  'alpha-v2-1',
  'alpha-v2-1-master',
  'alpha-v2-5',
  'alpha-v2-5-turbo',
  'alpha-v2-6',
] as const;
export type AlphaModel = (typeof ALPHA_MODELS)[number];

/** beta-tasks-assets.md §2.1 public model names. */
export const BETA_MODELS = [
  'gamma-video-2-0',
  'gamma-video-2-0-fast',
  'gamma-video-2-0-mini',
  'gamma-video-2-0-filter-off',
  'gamma-video-2-0-fast-filter-off',
] as const;
export type BetaModel = (typeof BETA_MODELS)[number];

/** beta §2.1 rule 1: dated upstream names accepted and normalised to the public name. */
export const BETA_DATED_MODELS: Readonly<Record<string, BetaModel>> = {
  'gamma-video-2-0-260128': 'gamma-video-2-0',
  'gamma-video-2-0-fast-260128': 'gamma-video-2-0-fast',
  'gamma-video-2-0-mini-260615': 'gamma-video-2-0-mini',
};

/** Every model the documents name, for the simulator's default token. */
export const ALL_MODELS: readonly string[] = [
  ...CHAT_MODELS,
  ...EMBEDDING_MODELS,
  ...SIM_IMAGE_MODELS,
  ...VIDEO_MODELS,
  ...ALPHA_MODELS,
  ...BETA_MODELS,
];
