/**
 * Image routes of common.md §4: `POST /v1/images/generations` and `POST /v1/images/edits` (JSON bodies of §2.2),
 * answering `{created, data: [{url} | {b64_json}]}` (wire-formats.md §4) with real PNG files.
 *
 * Edits: common.md §7 says "an image edit that returns no product means the input URL is not public or the model
 * is not an edit model". The simulator therefore answers such an edit with 200 and an empty `data` rather than
 * an error: any `images[].image_url` that is not a public https URL, or a model other than `image-edit-1`.
 * (gw itself refuses non-public URLs before sending; `--no-validate` reaches this path.)
 */
import { SIM_IMAGE_MODELS } from '../../contract/catalog.js';
import {
  imageEditShapeSchema,
  imageGenerateParamsSchema,
  isPublicHttpsUrl,
  parseImageSize,
} from '../../contract/text.js';
import { makePng } from '../png.js';
import type { SimReply, SimRequest } from '../http.js';
import type { Sim } from '../server.js';
import { modelAllowed, validBody } from './text.js';

/** The simulated models that can edit (common.md §7: another model's edit returns no product). */
export const EDIT_MODELS: readonly string[] = ['image-edit-1'];

/**
 * The most images one request may ask for. The gateway documents publish no maximum of `n`; the simulator
 * refuses more than this with 400 (as OpenAI-style image APIs do past 10), so an absurd `n` cannot make it
 * render millions of PNGs.
 */
export const MAX_IMAGES_N = 10;

/** 400 for an `n` the simulator will not render; true when refused. */
function refuseN(reply: SimReply, n: number | undefined): boolean {
  if (n === undefined || (Number.isInteger(n) && n >= 1 && n <= MAX_IMAGES_N)) return false;
  reply.error(
    400,
    'invalid_request',
    `n: must be an integer from 1 to ${MAX_IMAGES_N} (simulator limit)`,
    'common',
    {
      param: 'n',
    },
  );
  return true;
}

/** Pixels rendered at most per image; larger sizes are drawn scaled down (the answer still says the size asked). */
export const MAX_RENDER_PIXELS = 2048 * 2048;

function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function renderSize(size: string | undefined): { width: number; height: number } {
  const s = parseImageSize(size ?? '1024x1024') ?? { width: 1024, height: 1024 };
  const px = s.width * s.height;
  if (px <= MAX_RENDER_PIXELS) return s;
  const k = Math.sqrt(MAX_RENDER_PIXELS / px);
  return { width: Math.max(1, Math.floor(s.width * k)), height: Math.max(1, Math.floor(s.height * k)) };
}

function answer(
  sim: Sim,
  reply: SimReply,
  body: {
    prompt: string;
    size?: string | undefined;
    n?: number | undefined;
    response_format?: string | undefined;
  },
  empty: boolean,
): void {
  const created = Math.floor(sim.now() / 1000);
  const n = empty ? 0 : (body.n ?? 1);
  const { width, height } = renderSize(body.size);
  const data: Array<Record<string, string>> = [];
  const seed = seedOf(body.prompt);
  for (let i = 0; i < n; i++) {
    const png = makePng(width, height, (seed + i * 0x9e3779b1) >>> 0);
    if (body.response_format === 'b64_json') data.push({ b64_json: png.toString('base64') });
    else {
      const url = sim.cdn.publish(
        { bytes: png, contentType: 'image/png', expiresAt: sim.now() + sim.config.timings.resultTtlMs },
        `image-${i + 1}.png`,
      );
      data.push({ url });
    }
  }
  reply.json(200, {
    created,
    data,
    size: body.size ?? '1024x1024',
    output_format: 'png',
  });
}

function generate(sim: Sim) {
  return (req: SimRequest, reply: SimReply): void => {
    const body = validBody(imageGenerateParamsSchema, req, reply);
    if (body === undefined) return;
    if (!modelAllowed(req, reply, body.model, SIM_IMAGE_MODELS, '/v1/images/generations')) return;
    if (refuseN(reply, body.n)) return;
    answer(sim, reply, body, false);
  };
}

function edit(sim: Sim) {
  return (req: SimRequest, reply: SimReply): void => {
    const body = validBody(imageEditShapeSchema, req, reply);
    if (body === undefined) return;
    if (!modelAllowed(req, reply, body.model, SIM_IMAGE_MODELS, '/v1/images/edits')) return;
    if (refuseN(reply, body.n)) return;
    const noProduct =
      !(EDIT_MODELS.includes(body.model) || req.extraKind?.(body.model) === 'image-edit') ||
      body.images.some((i) => !isPublicHttpsUrl(i.image_url));
    answer(sim, reply, body, noProduct);
  };
}

/** Registers image generation and edit. */
export function registerImageRoutes(sim: Sim): void {
  sim.router.add('POST', '/v1/images/generations', generate(sim));
  sim.router.add('POST', '/v1/images/edits', edit(sim));
}
