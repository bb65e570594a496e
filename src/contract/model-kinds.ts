/**
 * Which kind of request a model serves, from the documents' model tables and, for names they do not state, the
 * naming conventions of the public model families. Pure data and one lookup; `gw probe --all-models` uses it to
 * send each listed model the cheapest request of its kind.
 */
import {
  ALPHA_MODELS,
  BETA_DATED_MODELS,
  BETA_MODELS,
  CHAT_MODELS,
  EMBEDDING_MODELS,
  VIDEO_MODELS,
} from './catalog.js';

/** The request kinds a model may serve. */
export const MODEL_KINDS = [
  'chat',
  'responses',
  'messages',
  'embeddings',
  'image',
  'image-edit',
  'video',
  'alpha',
  'beta',
] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

/** Kinds that create paid, long-running tasks: probed only when named by `--kind`. */
export const TASK_KINDS: readonly ModelKind[] = ['video', 'alpha', 'beta'];

/** Kinds probed by `--all-models` when `--kind` is not given. */
export const DEFAULT_PROBE_KINDS: readonly ModelKind[] = MODEL_KINDS.filter((k) => !TASK_KINDS.includes(k));

/** What the table says about one model. */
export interface ModelKindInfo {
  kind: ModelKind;
  /** A reasoning model: spends output tokens thinking before it answers (the probe leaves room for that). */
  reasoning: boolean;
  /** Where the kind comes from: a document's model table, or a naming convention. */
  source: 'table' | 'name';
}

/** Exact names of the documents' tables (common.md §2.2/§2.3, alpha §2.1, beta §2.1) and the simulator's images. */
export const MODEL_KIND_TABLE: Readonly<Record<string, ModelKind>> = Object.fromEntries([
  ...CHAT_MODELS.map((m) => [m, 'chat']),
  ...EMBEDDING_MODELS.map((m) => [m, 'embeddings']),
  ['image-gen-1', 'image'],
  ['image-edit-1', 'image-edit'],
  ...VIDEO_MODELS.map((m) => [m, 'video']),
  ...ALPHA_MODELS.map((m) => [m, 'alpha']),
  ...BETA_MODELS.map((m) => [m, 'beta']),
  ...Object.keys(BETA_DATED_MODELS).map((m) => [m, 'beta']),
]) as Record<string, ModelKind>;

/**
 * Naming conventions, first match wins (case-insensitive). Order matters: the specific families (video, image
 * edit, responses-only) come before the broad chat patterns.
 */
export const MODEL_KIND_PATTERNS: ReadonlyArray<readonly [RegExp, ModelKind]> = [
  [/^alpha-v\d/, 'alpha'],
  [/^gamma-video-/, 'beta'],
  [/^(clip|vid)-\d/, 'video'],
  [/(^|[-_/])(sora|veo|kling|wan|hailuo|seedance|video|t2v|i2v|r2v)([-_.\d]|$)/, 'video'],
  [/embed/, 'embeddings'],
  [/(image|img)[-_]?edit|edit[-_]?(image|img)|inpaint/, 'image-edit'],
  [/^(image|img)-|dall-e|gpt-image|imagen|flux|stable-diffusion|^sd[-\d]|seedream|(^|-)t2i(-|$)/, 'image'],
  // Responses-only models of the OpenAI family (o1-pro, o3-pro, codex, deep research, computer use).
  [/^(o\d+-pro|o\d+-deep-research|codex-|computer-use)|-codex(-|$)|deep-research/, 'responses'],
  [/^claude-/, 'messages'],
  [
    /^(chat|gpt|o\d|qwen|qwq|deepseek|glm|llama|mistral|mixtral|gemini|grok|kimi|moonshot|doubao|ernie|yi-|hunyuan|minimax|abab|baichuan|step-|sim-chat)/,
    'chat',
  ],
];

/** Names of reasoning models (the probe gives them room to think before the answer). */
export const REASONING_PATTERN =
  /^o\d|reason|think|(^|-)r1(-|$)|deepseek-r|qwq|-pro(-|$)|^sim-reasoner|gpt-5|claude-(opus|sonnet)-4/;

/** Output tokens a probe asks for: enough for "ok", or for a reasoning model to think and still answer. */
export const PROBE_MAX_TOKENS = { plain: 16, reasoning: 512 } as const;

/** The kind of `model`, or undefined when neither the tables nor the naming conventions know it. */
export function modelKindOf(model: string): ModelKindInfo | undefined {
  const name = model.toLowerCase();
  const reasoning = REASONING_PATTERN.test(name);
  const exact = MODEL_KIND_TABLE[model];
  if (exact !== undefined) return { kind: exact, reasoning, source: 'table' };
  for (const [re, kind] of MODEL_KIND_PATTERNS) {
    if (re.test(name)) return { kind, reasoning, source: 'name' };
  }
  return undefined;
}

/** True when `value` is a kind name. */
export function isModelKind(value: string): value is ModelKind {
  return (MODEL_KINDS as readonly string[]).includes(value);
}
