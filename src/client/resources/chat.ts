import {
  chatChunkSchema,
  chatCompletionSchema,
  chatCreateParamsSchema,
  type ChatChunk,
  type ChatCompletion,
  type ChatCreateParams,
} from '../../contract/text.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';
import {
  END,
  checked,
  eventJson,
  postJson,
  streamError,
  typedStream,
  validateBody,
  type CallOptions,
  type TypedStream,
} from './typed-stream.js';

export type { ChatChunk, ChatCompletion, ChatCreateParams };

const PATH = '/v1/chat/completions';

/** `POST /v1/chat/completions` without streaming: one assistant message plus usage (common.md §4). */
export async function create(
  client: GatewayClient,
  body: ChatCreateParams,
  o: CallOptions = {},
): Promise<ApiResult<ChatCompletion>> {
  validateBody(client, chatCreateParamsSchema, body);
  return postJson(client, PATH, { ...body, stream: false }, chatCompletionSchema, o);
}

/**
 * `POST /v1/chat/completions` with `stream: true` and `stream_options.include_usage` (so the last chunk before
 * `[DONE]` carries usage). Events are typed chunks; the stream ends at `data: [DONE]`. A frame with a top-level
 * `error` (or an `event: error` frame) throws a GatewayError with its code, message and request id; a stream that
 * ends without `[DONE]` throws a ConnectionError (the answer may be truncated).
 */
export async function stream(
  client: GatewayClient,
  body: ChatCreateParams,
  o: CallOptions = {},
): Promise<TypedStream<ChatChunk>> {
  validateBody(client, chatCreateParamsSchema, body);
  const streamOptions = (body.stream_options ?? {}) as Record<string, unknown>;
  const s = await client.stream({
    method: 'POST',
    path: PATH,
    body: { ...body, stream: true, stream_options: { include_usage: true, ...streamOptions } },
    signal: o.signal,
  });
  const where = `POST ${PATH}`;
  return typedStream<ChatChunk>(
    s,
    where,
    'data: [DONE]',
    (ev) => {
      if (ev.data === '[DONE]') return END;
      const json = eventJson(ev.data, where, s);
      if (ev.event === 'error' || (json !== null && typeof json === 'object' && 'error' in json)) {
        throw streamError(ev.data, json, s);
      }
      // The cheap check accepts the usual chunk; anything else gets the schema's verdict and its readable error.
      return isPlainChunk(json) ? json : checked(chatChunkSchema, json, where, s);
    },
    undefined,
    {
      strictEnd: o.strictEnd,
      // A finish chunk makes the answer whole: a body closed after it without `[DONE]` is complete.
      complete: (c) => c.choices.some((x) => x.finish_reason !== null && x.finish_reason !== undefined),
    },
  );
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isOptString = (v: unknown): boolean => v === undefined || typeof v === 'string';
const isNullishString = (v: unknown): boolean => v === undefined || v === null || typeof v === 'string';

/**
 * A hand-written subset of chatChunkSchema for the hot path (one call per chunk; zod's safeParse cost as much as
 * JSON.parse): true only for values the schema accepts (a chunk without usage); false sends the value to the schema.
 */
export function isPlainChunk(v: unknown): v is ChatChunk {
  if (!isRecord(v) || !isOptString(v.id) || !isOptString(v.object) || !isOptString(v.model)) return false;
  if (v.usage !== undefined && v.usage !== null) return false; // the last chunk only: let the schema check it
  const choices = v.choices;
  if (!Array.isArray(choices)) return false;
  for (const c of choices as unknown[]) {
    if (!isRecord(c) || typeof c.index !== 'number' || !Number.isFinite(c.index)) return false;
    if (!isNullishString(c.finish_reason)) return false;
    const d = c.delta;
    if (d === undefined) continue;
    if (!isRecord(d) || !isNullishString(d.content) || !isNullishString(d.role)) return false;
    if (!isNullishString(d.refusal)) return false;
  }
  return true;
}

/** The text of the first choice of a completion ('' when the model returned none). */
export function messageText(completion: ChatCompletion): string {
  return completion.choices[0]?.message.content ?? '';
}
