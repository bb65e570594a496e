/**
 * common.md §2.1–§2.2 as code: request schemas for chat, responses, messages, embeddings, image generation and
 * image edit, and tolerant response schemas for the parts of the answers gw relies on. Pure: no I/O.
 *
 * Request schemas are loose objects: the documents allow pass-through fields (e.g. `thinking`, `cache_control`,
 * tool fields), so unknown fields are kept and sent; only the documented rules are checked. The simulator uses the
 * same schemas server-side (src/sim/routes/text.ts), so client and gateway agree on every rule.
 */
import { NEEDS_DNS, bareHost, hostProblemOffline } from './net.js';
import * as z from 'zod';

/** A zod error callback: "is required" when the field is missing, `otherwise` for a value of the wrong type. */
function need(otherwise: string): (iss: { input: unknown }) => string {
  return (iss) => (iss.input === undefined ? `is required` : otherwise);
}

/** A non-empty string field. */
function text(what = 'a string'): z.ZodString {
  return z.string({ error: need(`must be ${what}`) }).min(1, { error: `must not be empty` });
}

/** `model`: a public model name (common.md §2.2, §9: names returned by GET /v1/models). */
const modelField = text('a string: a public model name from `gw models`');

/** An integer >= 1. */
function positiveInt(rule: string): z.ZodInt {
  return z
    .int({ error: need(`must be an integer >= 1 (${rule})`) })
    .min(1, { error: `must be an integer >= 1 (${rule})` });
}

/** `stream`: a boolean (common.md §2.2). */
const streamField = z.boolean({ error: `must be a boolean` }).optional();

/**
 * True when `url` is an https URL whose host can be publicly reachable: not localhost, not a single-label
 * intranet name, not a private, loopback, link-local or otherwise reserved IP literal. Without DNS this is a
 * best effort; common.md §4 rules 3–4 put non-public image URLs outside the contract.
 */
export function isPublicHttpsUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'https:') return false;
  const host = bareHost(u.hostname).toLowerCase();
  if (host === '') return false;
  const offline = hostProblemOffline(host);
  if (offline !== NEEDS_DNS) return offline === undefined;
  // A name without a dot (https://intranet/x.png) only resolves inside a private network.
  return host.includes('.') && !host.endsWith('.local') && !host.endsWith('.internal');
}

/**
 * A string, or an array whose items match `item`. Written by hand rather than as a zod union so that a bad item
 * reports its own field and rule (e.g. `messages[0].content[1].image_url.url`) instead of "invalid union".
 */
function stringOrArray<T extends z.ZodType>(
  item: T,
  message: string,
): z.ZodType<string | Array<z.output<T>>, string | Array<z.input<T>>> {
  return z.unknown().superRefine((v, ctx) => {
    if (typeof v === 'string') return;
    if (!Array.isArray(v)) {
      ctx.addIssue({ code: 'custom', message: v === undefined ? `is required` : message });
      return;
    }
    v.forEach((el, i) => {
      const r = item.safeParse(el);
      if (!r.success) {
        for (const iss of r.error.issues) {
          ctx.addIssue({ code: 'custom', path: [i, ...iss.path], message: iss.message });
        }
      }
    });
  }) as unknown as z.ZodType<string | Array<z.output<T>>, string | Array<z.input<T>>>;
}

/** A public https URL field (common.md §4 rules 3–4; CLI.md `--image <https url>`). */
function publicHttpsUrl(rule: string): z.ZodString {
  return z
    .string({ error: need(`must be a public https URL (${rule})`) })
    .refine(isPublicHttpsUrl, { error: `must be a public https URL (${rule})` });
}

// ---------------------------------------------------------------------------------------------------------------
// chat (common.md §2.2)

/** One content part of a chat message: `{type:'text', text}` or `{type:'image_url', image_url:{url}}`. */
export const chatContentPartSchema = z
  .looseObject({
    type: z.enum(['text', 'image_url'], { error: `must be 'text' or 'image_url'` }),
    text: z.unknown().optional(),
    image_url: z.unknown().optional(),
  })
  .superRefine((part, ctx) => {
    if (part.type === 'text' && typeof part.text !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['text'], message: `must be a string (text part)` });
    }
    if (part.type === 'image_url') {
      const img = part.image_url as { url?: unknown } | null | undefined;
      if (img === null || typeof img !== 'object') {
        ctx.addIssue({
          code: 'custom',
          path: ['image_url'],
          message: `must be an object {url} (image_url part)`,
        });
        return;
      }
      const r = publicHttpsUrl('non-public image URLs are outside the contract').safeParse(img.url);
      if (!r.success) {
        ctx.addIssue({
          code: 'custom',
          path: ['image_url', 'url'],
          message: r.error.issues[0]?.message ?? 'invalid',
        });
      }
    }
  });

/** One chat message: `role` string, `content` string or array of parts (common.md §2.2). */
export const chatMessageSchema = z.looseObject({
  role: text(),
  content: stringOrArray(
    chatContentPartSchema,
    `must be a string or an array of {type:'text'|'image_url'} parts`,
  ),
});

/** `POST /v1/chat/completions` body (common.md §2.2). */
export const chatCreateParamsSchema = z.looseObject({
  model: modelField,
  messages: z
    .array(chatMessageSchema, { error: need(`must be an array of {role, content}`) })
    .min(1, { error: `must hold at least one message` }),
  stream: streamField,
  max_tokens: positiveInt('chat max_tokens of the public API').optional(),
});
export type ChatCreateParams = z.input<typeof chatCreateParamsSchema>;

// ---------------------------------------------------------------------------------------------------------------
// responses (common.md §2.2)

/** One responses input item: `role` and `content` = array of `{type:'input_text', text}`. */
export const responseInputItemSchema = z.looseObject({
  role: text(),
  content: z.array(
    z.looseObject({
      type: z.literal('input_text', { error: `must be 'input_text' (responses content)` }),
      text: z.string({ error: need(`must be a string`) }),
    }),
    { error: need(`must be an array of {type:'input_text', text} parts`) },
  ),
});

/** `POST /v1/responses` body (common.md §2.2: `input` is an array of items). */
export const responseCreateParamsSchema = z.looseObject({
  model: modelField,
  input: z
    .array(responseInputItemSchema, { error: need(`must be an array of {role, content} items`) })
    .min(1, { error: `must hold at least one item` }),
  stream: streamField,
});
export type ResponseCreateParams = z.input<typeof responseCreateParamsSchema>;

// ---------------------------------------------------------------------------------------------------------------
// messages (common.md §2.2: model, max_tokens (integer), messages; passthrough thinking, tools, cache_control)

const messageBlockSchema = z.looseObject({
  type: text('a string block type, e.g. text or image'),
});

/** One messages-style message `{role, content}`; content is a string or an array of typed blocks. */
export const messageParamSchema = z.looseObject({
  role: text(),
  content: stringOrArray(messageBlockSchema, `must be a string or an array of {type, …} blocks`),
});

/** `POST /v1/messages` body. `thinking`, tool fields and `cache_control` pass through unchecked. */
export const messageCreateParamsSchema = z.looseObject({
  model: modelField,
  max_tokens: positiveInt(`messages max_tokens`),
  messages: z
    .array(messageParamSchema, { error: need(`must be an array of {role, content}`) })
    .min(1, { error: `must hold at least one message` }),
  system: stringOrArray(
    z.looseObject({
      type: z.literal('text', { error: `must be 'text' (system blocks)` }),
      text: z.string({ error: `must be a string` }),
    }),
    `must be a string or an array of {type:'text', text} blocks`,
  ).optional(),
  stream: streamField,
});
export type MessageCreateParams = z.input<typeof messageCreateParamsSchema>;

// ---------------------------------------------------------------------------------------------------------------
// embeddings (common.md §2.2: input is an array of strings)

/** `POST /v1/embeddings` body. `encoding_format` is the public API's float|base64 (wire-formats.md §4). */
export const embeddingCreateParamsSchema = z.looseObject({
  model: modelField,
  input: z
    .array(z.string({ error: `must be a string (input is an array of strings)` }), {
      error: need(`must be an array of strings`),
    })
    .min(1, { error: `must hold at least one string` }),
  encoding_format: z
    .enum(['float', 'base64'], { error: "must be 'float' or 'base64' (OpenAI embeddings)" })
    .optional(),
});
export type EmbeddingCreateParams = z.input<typeof embeddingCreateParamsSchema>;

// ---------------------------------------------------------------------------------------------------------------
// images (common.md §2.2; allowed sizes and maximum n: not shown, §8)

const SIZE_RULE = `must be <width>x<height> with positive integers, e.g. 1024x1024`;

/** Parses `1024x768` into numbers; undefined when it is not `<width>x<height>` of positive integers. */
export function parseImageSize(size: string): { width: number; height: number } | undefined {
  const m = /^([1-9]\d{0,5})x([1-9]\d{0,5})$/.exec(size);
  if (!m) return undefined;
  return { width: Number(m[1]), height: Number(m[2]) };
}

/** The answer formats of an image request (`response_format`). */
export const IMAGE_RESPONSE_FORMATS = ['url', 'b64_json'] as const;

const imageCommon = {
  model: modelField,
  prompt: text(),
  size: z
    .string({ error: SIZE_RULE })
    .refine((s) => parseImageSize(s) !== undefined, { error: SIZE_RULE })
    .optional(),
  response_format: z.enum(IMAGE_RESPONSE_FORMATS, { error: `must be 'url' or 'b64_json'` }).optional(),
  n: positiveInt(`n is an integer`).optional(),
};

/** `POST /v1/images/generations` body. */
export const imageGenerateParamsSchema = z.looseObject(imageCommon);
export type ImageGenerateParams = z.input<typeof imageGenerateParamsSchema>;

/**
 * The shape of an image edit body: `images` is an array of `{image_url: string}`. The gateway answers a
 * non-public URL with an empty product (common.md §7), so the simulator checks only this shape.
 */
export const imageEditShapeSchema = z.looseObject({
  ...imageCommon,
  images: z
    .array(
      z.looseObject({
        image_url: z.string({ error: need(`must be a URL string (images[] = {image_url})`) }),
      }),
      { error: need(`must be an array of {image_url: <https url>}`) },
    )
    .min(1, { error: `must hold at least one {image_url}` }),
});

/** `POST /v1/images/edits` body as gw sends it: every `image_url` must be a public https URL (§4 rule 3). */
export const imageEditParamsSchema = z.looseObject({
  ...imageEditShapeSchema.shape,
  images: z
    .array(
      z.looseObject({
        image_url: publicHttpsUrl('image edit input URLs must be publicly reachable'),
      }),
      { error: need(`must be an array of {image_url: <https url>}`) },
    )
    .min(1, { error: `must hold at least one {image_url}` }),
});
export type ImageEditParams = z.input<typeof imageEditParamsSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Responses (tolerant: unknown fields pass; only what gw relies on is checked)

const num = z.number().optional();

/** Chat-style usage with the cache fields of common.md §2.1. */
export const chatUsageSchema = z.looseObject({
  prompt_tokens: num,
  completion_tokens: num,
  total_tokens: num,
  prompt_tokens_details: z
    .looseObject({ cached_tokens: num.nullable(), cache_creation_input_tokens: num.nullable() })
    .nullish(),
});
export type ChatUsage = z.infer<typeof chatUsageSchema>;

/** Responses usage (wire-formats.md §2; common.md §4: cache fields kept in usage). */
export const responseUsageSchema = z.looseObject({
  input_tokens: num,
  output_tokens: num,
  total_tokens: num,
  input_tokens_details: z
    .looseObject({ cached_tokens: num.nullable(), cache_write_tokens: num.nullable() })
    .nullish(),
});
export type ResponseUsage = z.infer<typeof responseUsageSchema>;

/** Messages usage with `cache_read_input_tokens` / `cache_creation_input_tokens` (common.md §2.1). */
export const messageUsageSchema = z.looseObject({
  input_tokens: num.nullable(),
  output_tokens: num.nullable(),
  cache_creation_input_tokens: num.nullable(),
  cache_read_input_tokens: num.nullable(),
});
export type MessageUsage = z.infer<typeof messageUsageSchema>;

/** `chat.completion`: one assistant message plus usage (common.md §4). */
export const chatCompletionSchema = z.looseObject({
  id: z.string().optional(),
  object: z.string().optional(),
  created: num,
  model: z.string().optional(),
  choices: z.array(
    z.looseObject({
      index: num,
      message: z.looseObject({
        role: z.string().optional(),
        content: z.string().nullish(),
        refusal: z.string().nullish(),
      }),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: chatUsageSchema.nullish(),
});
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

/** `chat.completion.chunk`: one streamed delta; the final usage chunk has `choices: []`. */
export const chatChunkSchema = z.looseObject({
  id: z.string().optional(),
  object: z.string().optional(),
  model: z.string().optional(),
  choices: z.array(
    z.looseObject({
      index: z.number(),
      delta: z
        .looseObject({
          role: z.string().nullish(),
          content: z.string().nullish(),
          refusal: z.string().nullish(),
        })
        .optional(),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: chatUsageSchema.nullish(),
});
export type ChatChunk = z.infer<typeof chatChunkSchema>;

/** A responses output item (a `message` item carries `output_text` parts). */
export const responseOutputItemSchema = z.looseObject({
  type: z.string(),
  id: z.string().optional(),
  role: z.string().optional(),
  status: z.string().optional(),
  content: z
    .array(z.looseObject({ type: z.string(), text: z.string().optional(), refusal: z.string().optional() }))
    .optional(),
});

/** The responses object (`object: "response"`). */
export const responseObjectSchema = z.looseObject({
  id: z.string(),
  object: z.string().optional(),
  status: z.string().optional(),
  model: z.string().optional(),
  output: z.array(responseOutputItemSchema),
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
  incomplete_details: z.looseObject({ reason: z.string().nullish() }).nullish(),
  usage: responseUsageSchema.nullish(),
});
export type ResponseObject = z.infer<typeof responseObjectSchema>;

/** The terminal events of a responses stream (wire-formats.md §2). */
export const RESPONSE_TERMINAL_EVENTS = ['response.completed', 'response.failed', 'response.incomplete'];

/**
 * One responses stream event: every event has `type`; text deltas carry `delta`, lifecycle events carry
 * `response`, `error` carries `code`/`message`. Other event types pass through unchanged.
 */
export const responseStreamEventSchema = z
  .looseObject({
    type: z.string(),
    sequence_number: num,
    delta: z.unknown().optional(),
    response: z.unknown().optional(),
    code: z.string().nullish(),
    message: z.string().nullish(),
  })
  .superRefine((ev, ctx) => {
    if (ev.type === 'response.output_text.delta' && typeof ev.delta !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['delta'], message: 'a text delta must carry a string' });
    }
    if (ev.type.startsWith('response.') && ev.response !== undefined) {
      const r = responseObjectSchema.safeParse(ev.response);
      if (!r.success) {
        const i = r.error.issues[0];
        ctx.addIssue({ code: 'custom', path: ['response', ...(i?.path ?? [])], message: i?.message ?? '' });
      }
    }
  });
/** A responses stream event (`delta` is a string on `response.output_text.delta`; `response` on lifecycle events). */
export interface ResponseStreamEvent {
  type: string;
  sequence_number?: number | undefined;
  delta?: string | undefined;
  response?: ResponseObject | undefined;
  code?: string | null | undefined;
  message?: string | null | undefined;
  [key: string]: unknown;
}

/** One content block of a messages answer. */
export const messageContentBlockSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  thinking: z.string().optional(),
});
export type MessageContentBlock = z.infer<typeof messageContentBlockSchema>;

/** The messages object (`type: "message"`). */
export const messageObjectSchema = z.looseObject({
  id: z.string().optional(),
  type: z.string().optional(),
  role: z.string().optional(),
  model: z.string().optional(),
  content: z.array(messageContentBlockSchema),
  stop_reason: z.string().nullish(),
  usage: messageUsageSchema.nullish(),
});
export type MessageObject = z.infer<typeof messageObjectSchema>;

const blockDelta = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  thinking: z.string().optional(),
  partial_json: z.string().optional(),
  signature: z.string().optional(),
});

/** The messages stream events gw dispatches on (wire-formats.md §3); `ping` is skipped and `error` thrown. */
export const messageStreamEventSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('message_start'), message: messageObjectSchema }),
  z.looseObject({
    type: z.literal('content_block_start'),
    index: z.number(),
    content_block: messageContentBlockSchema,
  }),
  z.looseObject({ type: z.literal('content_block_delta'), index: z.number(), delta: blockDelta }),
  z.looseObject({ type: z.literal('content_block_stop'), index: z.number() }),
  z.looseObject({
    type: z.literal('message_delta'),
    delta: z.looseObject({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }),
    usage: messageUsageSchema.nullish(),
  }),
  z.looseObject({ type: z.literal('message_stop') }),
]);
export type MessageStreamEvent = z.infer<typeof messageStreamEventSchema>;

/** Event names of a messages stream gw understands (unknown names are dropped, as the official SDK does). */
export const MESSAGE_STREAM_EVENTS: ReadonlySet<string> = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
]);

/** One embedding: a float array, or a base64 string of little-endian float32 (`encoding_format: base64`). */
export const embeddingSchema = z.looseObject({
  object: z.string().optional(),
  index: z.number(),
  embedding: z.union([z.array(z.number()), z.string()]),
});

/** `POST /v1/embeddings` answer: vectors plus usage (common.md §4). */
export const embeddingListSchema = z.looseObject({
  object: z.string().optional(),
  data: z.array(embeddingSchema),
  model: z.string().optional(),
  usage: z.looseObject({ prompt_tokens: num, total_tokens: num }).nullish(),
});
export type EmbeddingList = z.infer<typeof embeddingListSchema>;

/** `POST /v1/images/*` answer: images as URLs or base64 (common.md §4). An empty `data` is "no product" (§7). */
export const imagesResponseSchema = z.looseObject({
  created: num,
  data: z
    .array(
      z.looseObject({
        url: z.string().optional(),
        b64_json: z.string().optional(),
        revised_prompt: z.string().optional(),
      }),
    )
    .nullish(),
});
export type ImagesResponse = z.infer<typeof imagesResponseSchema>;
