/**
 * Shared plumbing of the text resources: JSON calls whose answer is checked by a tolerant schema but returned
 * unchanged (so `--json` prints the gateway's body as sent), and typed event streams decoded from SSE.
 */
import type { z } from 'zod';
import { formatPath } from '../../contract/validate.js';
import { requireValid } from '../validation.js';
import { GatewayError, ResponseShapeError, TruncatedStreamError, errorFromBody } from '../errors.js';
import type { ApiResult, GatewayClient, StreamResult } from '../gateway-client.js';
import type { SseEvent } from '../sse.js';

/** An open stream of typed events, with the gateway request id of the exchange. */
export interface TypedStream<T> {
  status: number;
  requestId: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  events: AsyncIterable<T>;
  /** The same events grouped by network read (one promise per read, not per event); consume this or `events`. */
  batches: AsyncIterable<T[]>;
  /**
   * When set, called in order with the data of every event the gateway sent as part of the answer, including
   * the ones not yielded (`ping`, names gw does not know), before the batch holding them is delivered. Not called
   * for the end marker (`[DONE]`) nor for error events (those become the thrown error). `--json` prints these.
   */
  onSent?: ((data: string) => void) | undefined;
}

/** The data of an event as one JSON line: as sent when it is one line, else re-serialised; undefined if not JSON. */
function jsonLine(data: string, parsed: boolean): string | undefined {
  if (parsed && !data.includes('\n')) return data;
  try {
    return JSON.stringify(JSON.parse(data));
  } catch {
    return undefined;
  }
}

/** What a typed stream's step returns for an event that ends the stream without being yielded (`[DONE]`). */
export const END = Symbol('end');
/** What a typed stream's step returns for an event that is skipped (`ping`, unknown names). */
export const SKIP = Symbol('skip');

/**
 * A typed stream over an SSE stream: `step` turns each event into a value to yield, SKIP or END (and throws for
 * error events and malformed data); `last(v)` says a yielded value is the final one. The values of one network
 * read are handled in one synchronous pass and delivered as one batch; values before a failing event are still
 * delivered before the error. A stream that ends without its final event throws `truncated(where, final)`, unless
 * a value for which `o.complete(v)` holds came first and `o.strictEnd` is not set: the answer was whole and the
 * server ended it by closing (what gateways that drop chat's `[DONE]` do; OpenAI's SDK ends quietly there too). The
 * probe (`strictEnd`) still requires the final event the contract names.
 */
export function typedStream<T>(
  s: StreamResult,
  where: string,
  final: string,
  step: (ev: SseEvent) => T | typeof END | typeof SKIP,
  last: (v: T) => boolean = () => false,
  o: { strictEnd?: boolean | undefined; complete?: ((v: T) => boolean) | undefined } = {},
): TypedStream<T> {
  let whole = false;
  /** `strictEnd`: the rest of the stream after its final event, which must hold no event. */
  async function afterEnd(rest: readonly SseEvent[], more: AsyncIterator<SseEvent[]>): Promise<void> {
    let extra = rest[0];
    while (extra === undefined) {
      const next = await more.next();
      if (next.done === true) return;
      extra = next.value[0];
    }
    throw new ResponseShapeError(
      `${where}: an event after the final event (${final}): ${extra.event !== undefined ? `event: ${extra.event}, ` : ''}data: ${extra.data.slice(0, 80)}`,
      { status: s.status, requestId: s.requestId, code: 'event_after_final' },
    );
  }
  async function* batches(): AsyncGenerator<T[]> {
    const source = s.batches[Symbol.asyncIterator]();
    try {
      yield* typed(source);
    } finally {
      // As a for-await would: the body is released however the reading ends (an error, a consumer's break).
      await source.return?.();
    }
  }
  async function* typed(source: AsyncIterator<SseEvent[]>): AsyncGenerator<T[]> {
    for (;;) {
      const read = await source.next();
      if (read.done === true) break;
      const evs = read.value;
      const out: T[] = [];
      let ended = false;
      let failure: { error: unknown } | undefined;
      let i = 0;
      for (; i < evs.length; i++) {
        const ev = evs[i] as SseEvent;
        let v: T | typeof END | typeof SKIP;
        try {
          v = step(ev);
        } catch (error) {
          failure = { error };
          break;
        }
        if (v === END) {
          ended = true;
          break;
        }
        if (result.onSent !== undefined) {
          const line = jsonLine(ev.data, v !== SKIP);
          if (line !== undefined) result.onSent(line);
        }
        if (v === SKIP) continue;
        out.push(v);
        whole ||= o.complete?.(v) === true;
        if (last(v)) {
          ended = true;
          break;
        }
      }
      if (out.length > 0) yield out;
      if (failure !== undefined) throw failure.error;
      if (ended) {
        if (o.strictEnd === true) await afterEnd(evs.slice(i + 1), source);
        return;
      }
    }
    if (!whole || o.strictEnd === true) throw truncated(where, final, s);
  }
  const source = batches();
  async function* events(): AsyncGenerator<T> {
    for await (const batch of source) for (const v of batch) yield v;
  }
  const result: TypedStream<T> = {
    status: s.status,
    requestId: s.requestId,
    headers: s.headers,
    events: events(),
    batches: source,
  };
  return result;
}

/** Per-call options of the text resources. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  /**
   * Streams: after the final event, read on to the end of the stream; an event there throws ResponseShapeError
   * (a probe of the stream's grammar). Off by default: the stream is closed at its final event.
   */
  strictEnd?: boolean | undefined;
}

/** Checks a request body with the contract when the client validates (a violation is an error naming the field). */
export function validateBody<T>(client: GatewayClient, schema: z.ZodType<T>, body: unknown): void {
  if (client.validate) requireValid(schema, body);
}

/** Checks `value` with a tolerant schema and returns it unchanged (zod would reorder keys). */
export function checked<T>(
  schema: z.ZodType<T>,
  value: unknown,
  where: string,
  meta: { status: number; requestId: string | undefined },
): T {
  const r = schema.safeParse(value);
  if (r.success) return value as T;
  const issue = r.error.issues[0];
  throw new ResponseShapeError(
    `${where}: unexpected answer at ${formatPath(issue?.path ?? [])}: ${issue?.message ?? 'invalid'}`,
    meta,
  );
}

/** POSTs a JSON body and checks the answer with `schema`, returning the body as the gateway sent it. */
export async function postJson<T>(
  client: GatewayClient,
  path: string,
  body: unknown,
  schema: z.ZodType<T>,
  o: CallOptions & { headers?: Record<string, string> | undefined } = {},
): Promise<ApiResult<T>> {
  const res = await client.request<unknown>({
    method: 'POST',
    path,
    body,
    headers: o.headers,
    signal: o.signal,
  });
  return { ...res, data: checked(schema, res.data, `POST ${path}`, res) };
}

/** Parses one event's data as JSON (a malformed event is a ResponseShapeError). */
export function eventJson(data: string, where: string, s: StreamResult): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch (e) {
    throw new ResponseShapeError(`${where}: an event is not valid JSON: ${data.slice(0, 80)}`, {
      status: s.status,
      requestId: s.requestId,
      cause: e,
    });
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/**
 * The GatewayError of an error event inside a stream: `{error: {...}}` (chat, messages), or the responses
 * `{type: "error", code, message, param}`. The request id comes from the event, else from the stream's header.
 */
export function streamError(data: string, json: unknown, s: StreamResult): GatewayError {
  const o = (json !== null && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  if (o.error !== null && typeof o.error === 'object') return errorFromBody(s.status, data, s.requestId);
  const code = str(o.code) ?? 'stream_error';
  const message = str(o.message) ?? 'the gateway sent an error event';
  const requestId = str(o.request_id) ?? s.requestId;
  return new GatewayError({
    status: s.status,
    code,
    message,
    requestId,
    param: str(o.param),
    body: {
      error: {
        code,
        message,
        param: o.param ?? null,
        ...(requestId !== undefined ? { request_id: requestId } : {}),
      },
    },
  });
}

/** The error of a stream that ended before its final event (a truncated answer must not pass as complete). */
export function truncated(where: string, final: string, s: StreamResult): TruncatedStreamError {
  return new TruncatedStreamError(
    `${where}: the stream ended before its final event (${final}); the answer may be incomplete`,
    { requestId: s.requestId },
  );
}
