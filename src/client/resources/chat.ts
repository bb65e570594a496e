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
  checked,
  eventJson,
  postJson,
  streamError,
  truncated,
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
  async function* events(): AsyncGenerator<ChatChunk> {
    for await (const ev of s.events) {
      if (ev.data === '[DONE]') return;
      const json = eventJson(ev.data, where, s);
      if (ev.event === 'error' || (json !== null && typeof json === 'object' && 'error' in json)) {
        throw streamError(ev.data, json, s);
      }
      yield checked(chatChunkSchema, json, where, s);
    }
    throw truncated(where, 'data: [DONE]', s);
  }
  return { status: s.status, requestId: s.requestId, headers: s.headers, events: events() };
}

/** The text of the first choice of a completion ('' when the model returned none). */
export function messageText(completion: ChatCompletion): string {
  return completion.choices[0]?.message.content ?? '';
}
