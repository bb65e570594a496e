import {
  RESPONSE_TERMINAL_EVENTS,
  responseCreateParamsSchema,
  responseObjectSchema,
  responseStreamEventSchema,
  type ResponseCreateParams,
  type ResponseObject,
  type ResponseStreamEvent,
} from '../../contract/text.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';
import {
  checked,
  eventJson,
  postJson,
  END,
  streamError,
  typedStream,
  validateBody,
  type CallOptions,
  type TypedStream,
} from './typed-stream.js';

export type { ResponseCreateParams, ResponseObject, ResponseStreamEvent };

const PATH = '/v1/responses';

/** `POST /v1/responses` without streaming: a responses-compatible object (common.md §4). */
export async function create(
  client: GatewayClient,
  body: ResponseCreateParams,
  o: CallOptions = {},
): Promise<ApiResult<ResponseObject>> {
  validateBody(client, responseCreateParamsSchema, body);
  return postJson(client, PATH, { ...body, stream: false }, responseObjectSchema, o);
}

/**
 * `POST /v1/responses` with `stream: true`. Every event is yielded (its `type` tells what it is); the stream ends
 * after `response.completed`, `response.failed` or `response.incomplete` (which are yielded). An `error` event
 * throws a GatewayError; a stream that ends before a terminal event throws a ConnectionError. A `[DONE]` frame,
 * which the responses protocol does not send, is tolerated as an end.
 */
export async function stream(
  client: GatewayClient,
  body: ResponseCreateParams,
  o: CallOptions = {},
): Promise<TypedStream<ResponseStreamEvent>> {
  validateBody(client, responseCreateParamsSchema, body);
  const s = await client.stream({
    method: 'POST',
    path: PATH,
    body: { ...body, stream: true },
    signal: o.signal,
  });
  const where = `POST ${PATH}`;
  return typedStream<ResponseStreamEvent>(
    s,
    where,
    RESPONSE_TERMINAL_EVENTS.join(' / '),
    (ev) => {
      if (ev.data === '[DONE]') return END;
      const json = eventJson(ev.data, where, s);
      const type = (json as { type?: unknown } | null)?.type ?? ev.event;
      if (type === 'error' || ev.event === 'error') throw streamError(ev.data, json, s);
      return checked(responseStreamEventSchema, json, where, s) as ResponseStreamEvent;
    },
    (event) => RESPONSE_TERMINAL_EVENTS.includes(event.type),

    { strictEnd: o.strictEnd },
  );
}

/**
 * The output text of a response, computed as the official SDKs compute their `output_text`: every `output_text`
 * part of every `message` item, concatenated (the server does not send it; wire-formats.md §2).
 */
export function outputText(response: ResponseObject): string {
  let text = '';
  for (const item of response.output) {
    if (item.type !== 'message') continue;
    for (const part of item.content ?? []) {
      if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    }
  }
  return text;
}
