/**
 * `gw beta task create`: the request body from the flags' values. Pure: it throws nothing and leaves a bad value in
 * the body for the contract's schema to refuse with its rule.
 */
import { toAssetRef } from '../../../contract/beta.js';

/** The values `gw beta task create` collects; undefined means "not given". */
export interface BetaTaskInput {
  model?: string | undefined;
  prompt?: string | undefined;
  firstFrame?: string | undefined;
  lastFrame?: string | undefined;
  refImages?: readonly string[] | undefined;
  refVideos?: readonly string[] | undefined;
  refAudios?: readonly string[] | undefined;
  /** Numbers as typed; left as text when not an integer so the schema names the rule. */
  duration?: number | string | undefined;
  ratio?: string | undefined;
  resolution?: string | undefined;
  generateAudio?: boolean | undefined;
  watermark?: boolean | undefined;
  returnLastFrame?: boolean | undefined;
  priority?: number | string | undefined;
  serviceTier?: string | undefined;
  draft?: boolean | undefined;
  executionExpiresAfter?: number | string | undefined;
  safetyIdentifier?: string | undefined;
  callbackUrl?: string | undefined;
}

/**
 * Builds the create body: `[prompt]` → a text item; `--first-frame`/`--last-frame`/`--ref-image` → image_url items
 * with their roles; `--ref-video` → video_url `reference_video`; `--ref-audio` → audio_url `reference_audio`; every
 * `<asset>` as `asset://<id>`. `base` (a `--body` file) sits under the flags: a flag wins over the file's
 * field, and content items from flags replace the file's `content`.
 */
export function buildBetaTaskBody(
  input: BetaTaskInput,
  base: Record<string, unknown> = {},
): Record<string, unknown> {
  const content: Array<Record<string, unknown>> = [];
  if (input.prompt !== undefined) content.push({ type: 'text', text: input.prompt });
  const image = (url: string, role: string): void => {
    content.push({ type: 'image_url', image_url: { url: toAssetRef(url) }, role });
  };
  if (input.firstFrame !== undefined) image(input.firstFrame, 'first_frame');
  if (input.lastFrame !== undefined) image(input.lastFrame, 'last_frame');
  for (const u of input.refImages ?? []) image(u, 'reference_image');
  for (const u of input.refVideos ?? []) {
    content.push({ type: 'video_url', video_url: { url: toAssetRef(u) }, role: 'reference_video' });
  }
  for (const u of input.refAudios ?? []) {
    content.push({ type: 'audio_url', audio_url: { url: toAssetRef(u) }, role: 'reference_audio' });
  }
  const fields: Record<string, unknown> = {
    model: input.model,
    duration: input.duration,
    ratio: input.ratio,
    resolution: input.resolution,
    generate_audio: input.generateAudio,
    watermark: input.watermark,
    return_last_frame: input.returnLastFrame,
    priority: input.priority,
    service_tier: input.serviceTier,
    draft: input.draft,
    execution_expires_after: input.executionExpiresAfter,
    safety_identifier: input.safetyIdentifier,
    callback_url: input.callbackUrl,
  };
  const body: Record<string, unknown> = { ...base };
  if (content.length > 0) body.content = content;
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body[k] = v;
  // A --callback-url flag wins over either spelling in the file (the gateway renames CallbackURL).
  if (input.callbackUrl !== undefined) delete body.CallbackURL;
  return body;
}
