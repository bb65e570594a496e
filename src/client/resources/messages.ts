import {
  MESSAGE_STREAM_EVENTS,
  messageCreateParamsSchema,
  messageObjectSchema,
  messageStreamEventSchema,
  type MessageContentBlock,
  type MessageCreateParams,
  type MessageObject,
  type MessageStreamEvent,
  type MessageUsage,
} from '../../contract/text.js';
import { mergeUsage } from '../../contract/usage.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';
import {
  checked,
  eventJson,
  postJson,
  SKIP,
  streamError,
  typedStream,
  validateBody,
  type CallOptions,
  type TypedStream,
} from './typed-stream.js';

export type { MessageContentBlock, MessageCreateParams, MessageObject, MessageStreamEvent, MessageUsage };

const PATH = '/v1/messages';

/** Options of a messages call: the pass-through headers of common.md §4 / §9. */
export interface MessagesCallOptions extends CallOptions {
  /** Sent as `x-compat-version`. */
  compatVersion?: string | undefined;
  /** Sent as `x-compat-beta`. */
  compatBeta?: string | undefined;
}

function compatHeaders(o: MessagesCallOptions): Record<string, string> {
  const h: Record<string, string> = {};
  if (o.compatVersion !== undefined) h['x-compat-version'] = o.compatVersion;
  if (o.compatBeta !== undefined) h['x-compat-beta'] = o.compatBeta;
  return h;
}

/** `POST /v1/messages` without streaming: a messages-compatible object (common.md §4). */
export async function create(
  client: GatewayClient,
  body: MessageCreateParams,
  o: MessagesCallOptions = {},
): Promise<ApiResult<MessageObject>> {
  validateBody(client, messageCreateParamsSchema, body);
  return postJson(client, PATH, { ...body, stream: false }, messageObjectSchema, {
    signal: o.signal,
    headers: compatHeaders(o),
  });
}

/**
 * `POST /v1/messages` with `stream: true`. Dispatches on the `event:` name as the official SDK does: known events
 * are yielded typed, `ping` and unknown names are skipped, `error` throws a GatewayError; the stream ends after
 * `message_stop` (a stream that ends before it throws a ConnectionError). Use `accumulate` to build the message.
 */
export async function stream(
  client: GatewayClient,
  body: MessageCreateParams,
  o: MessagesCallOptions = {},
): Promise<TypedStream<MessageStreamEvent>> {
  validateBody(client, messageCreateParamsSchema, body);
  const s = await client.stream({
    method: 'POST',
    path: PATH,
    body: { ...body, stream: true },
    headers: compatHeaders(o),
    signal: o.signal,
  });
  const where = `POST ${PATH}`;
  return typedStream<MessageStreamEvent>(
    s,
    where,
    'message_stop',
    (ev) => {
      const json = eventJson(ev.data, where, s);
      const name = ev.event ?? (json as { type?: unknown } | null)?.type;
      if (name === 'error') throw streamError(ev.data, json, s);
      if (typeof name !== 'string' || !MESSAGE_STREAM_EVENTS.has(name)) return SKIP; // ping, unknown
      return checked(messageStreamEventSchema, json, where, s);
    },
    (event) => event.type === 'message_stop',

    { strictEnd: o.strictEnd },
  );
}

/**
 * Folds one stream event into the message snapshot (as the SDK's MessageStream does). `message_delta` usage
 * counters are cumulative totals: they overwrite, never add (wire-formats.md §3).
 */
export function accumulate(snapshot: MessageObject | undefined, ev: MessageStreamEvent): MessageObject {
  if (ev.type === 'message_start') {
    return { ...ev.message, content: [...ev.message.content], usage: { ...(ev.message.usage ?? {}) } };
  }
  const m: MessageObject = snapshot ?? { content: [] };
  switch (ev.type) {
    case 'content_block_start':
      m.content[ev.index] = { ...ev.content_block };
      break;
    case 'content_block_delta': {
      const block = (m.content[ev.index] ??= { type: 'text', text: '' }) as Record<string, unknown>;
      const d = ev.delta;
      if (d.type === 'text_delta') block.text = `${(block.text as string | undefined) ?? ''}${d.text ?? ''}`;
      else if (d.type === 'thinking_delta') {
        block.thinking = `${(block.thinking as string | undefined) ?? ''}${d.thinking ?? ''}`;
      } else if (d.type === 'signature_delta') block.signature = d.signature;
      else if (d.type === 'input_json_delta') {
        block.partial_json = `${(block.partial_json as string | undefined) ?? ''}${d.partial_json ?? ''}`;
      }
      break;
    }
    case 'message_delta': {
      m.stop_reason = ev.delta.stop_reason ?? m.stop_reason ?? null;
      if (ev.delta.stop_sequence !== undefined) m.stop_sequence = ev.delta.stop_sequence;
      const usage: Record<string, unknown> = { ...(m.usage ?? {}) };
      mergeUsage(usage, ev.usage);
      m.usage = usage;
      break;
    }
    default:
      break;
  }
  return m;
}

/** The text of a message: its `text` blocks, concatenated. */
export function text(message: MessageObject): string {
  return message.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('');
}
