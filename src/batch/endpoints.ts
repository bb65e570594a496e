/**
 * The create endpoints a batch line may name, how each is checked against the contract before anything is sent,
 * and how each is sent through the client's resources.
 */
import type { ApiResult, GatewayClient } from '../client/gateway-client.js';
import { alphaImage2VideoRequestSchema } from '../contract/alpha.js';
import { checkBetaTaskCreate } from '../contract/beta.js';
import * as TextContract from '../contract/text.js';
import { check, type RuleViolation } from '../contract/validate.js';
import { videoCreateSchema } from '../contract/video.js';
import * as chat from '../client/resources/chat.js';
import * as responses from '../client/resources/responses.js';
import * as messages from '../client/resources/messages.js';
import * as embeddings from '../client/resources/embeddings.js';
import * as images from '../client/resources/images.js';
import * as videos from '../client/resources/videos.js';
import * as beta from '../client/resources/beta-tasks.js';
import type * as AlphaResource from '../client/resources/alpha.js';

/** How an endpoint's items finish: answered at once, or created and then followed to a terminal state. */
export type EndpointKind = 'sync' | 'video' | 'alpha' | 'beta';

/** One create endpoint of the documents. */
export interface Endpoint {
  url: string;
  kind: EndpointKind;
  /** Every contract violation of a body (none: it may be sent). */
  check(body: unknown): Promise<RuleViolation[]>;
  /** Sends the body through the client's resource for it. */
  send(
    client: GatewayClient,
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ApiResult<unknown>>;
}

/** Every create endpoint, in the order `--help` lists them. */
export const BATCH_URLS = [
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/messages',
  '/v1/embeddings',
  '/v1/images/generations',
  '/v1/images/edits',
  '/v1/videos',
  '/alpha/v1/videos/image2video',
  '/beta/api/v3/contents/generations/tasks',
] as const;

function zodCheck(schema: Parameters<typeof check>[0], body: unknown): Promise<RuleViolation[]> {
  const r = check(schema, body);
  return Promise.resolve(r.ok ? [] : r.violations);
}

let resolver: ((host: string) => Promise<string[]>) | undefined;

/**
 * The alpha resource imports undici (its multipart FormData, 1.1 MB of the bundle): loaded when the first alpha
 * line is sent, so a plan (`gw batch run --dry-run`) never loads it (75 ms of CPU measured).
 */
const alphaResource = (): Promise<typeof AlphaResource> => import('../client/resources/alpha.js');

const TABLE: Record<string, Endpoint> = {
  '/v1/chat/completions': {
    url: '/v1/chat/completions',
    kind: 'sync',
    check: (b) => zodCheck(TextContract.chatCreateParamsSchema, b),
    send: (c, b, signal) => chat.create(c, b as never, { signal }),
  },
  '/v1/responses': {
    url: '/v1/responses',
    kind: 'sync',
    check: (b) => zodCheck(TextContract.responseCreateParamsSchema, b),
    send: (c, b, signal) => responses.create(c, b as never, { signal }),
  },
  '/v1/messages': {
    url: '/v1/messages',
    kind: 'sync',
    check: (b) => zodCheck(TextContract.messageCreateParamsSchema, b),
    send: (c, b, signal) => messages.create(c, b as never, { signal }),
  },
  '/v1/embeddings': {
    url: '/v1/embeddings',
    kind: 'sync',
    check: (b) => zodCheck(TextContract.embeddingCreateParamsSchema, b),
    send: (c, b, signal) => embeddings.create(c, b as never, { signal }),
  },
  '/v1/images/generations': {
    url: '/v1/images/generations',
    kind: 'sync',
    check: (b) => zodCheck(TextContract.imageGenerateParamsSchema, b),
    send: (c, b, signal) => images.generate(c, b as never, { signal }),
  },
  '/v1/images/edits': {
    url: '/v1/images/edits',
    kind: 'sync',
    check: (b) => zodCheck(TextContract.imageEditParamsSchema, b),
    send: (c, b, signal) => images.edit(c, b as never, { signal }),
  },
  '/v1/videos': {
    url: '/v1/videos',
    kind: 'video',
    check: (b) => zodCheck(videoCreateSchema, b),
    send: (c, b, signal) => videos.create(c, b as never, { signal }),
  },
  '/alpha/v1/videos/image2video': {
    url: '/alpha/v1/videos/image2video',
    kind: 'alpha',
    check: (b) => zodCheck(alphaImage2VideoRequestSchema, b),
    send: async (c, b, signal) => (await alphaResource()).image2video(c, b, { signal }),
  },
  '/beta/api/v3/contents/generations/tasks': {
    url: '/beta/api/v3/contents/generations/tasks',
    kind: 'beta',
    check: async (b) => {
      resolver ??= beta.cachingResolver();
      const r = await checkBetaTaskCreate(b, resolver);
      return r.ok ? [] : r.violations;
    },
    send: (c, b, signal) => {
      resolver ??= beta.cachingResolver();
      return beta.create(c, b, { signal, resolve: resolver });
    },
  },
};

/** The endpoint of a line's `url` (a full URL is reduced to its path), or undefined. */
export function endpointFor(url: string): Endpoint | undefined {
  return TABLE[url];
}

/** The model a body names (alpha's `model_name`, with its documented default). */
export function modelOf(url: string, body: Record<string, unknown>): string {
  if (typeof body.model === 'string') return body.model;
  if (typeof body.model_name === 'string') return body.model_name;
  return url === '/alpha/v1/videos/image2video' ? 'alpha-v1' : '(none)';
}
