import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultRule, SimService } from './config.js';

/** The error envelope a route family answers with. */
export type ErrorShape = 'common' | 'beta-task' | 'asset' | 'alpha';

/** A parsed request as routes see it. */
export interface SimRequest {
  method: string;
  path: string;
  /** The registered route pattern, e.g. `GET /v1/videos/:id` (faults match on it). */
  route: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
  /** Parsed JSON body; `undefined` when empty; the symbol INVALID_JSON when it did not parse. */
  body: unknown;
  token: string;
  tenant: string;
  /** Models this token sees. */
  canSee(model: string): boolean;
  /** False when the account has not opened that service of the second family (beta §7, 503). */
  hasOpened(service: SimService): boolean;
  requestId: string;
  /** The kind of an extra model of the config (`extraModels`), or undefined. */
  extraKind?(model: string): string | undefined;
}

/** Marks a body that is not valid JSON. */
export const INVALID_JSON: unique symbol = Symbol('invalid-json');

/** One server-sent event to write. */
export interface SseOut {
  event?: string;
  data: string;
  /**
   * Write this frame in two writes, split inside its first multi-byte UTF-8 character, with a short pause
   * between (so the halves travel in separate TCP segments): exercises clients' streaming UTF-8 decoding.
   */
  splitUtf8?: boolean;
}

/** Options of SimReply.sse. */
export interface SseOptions {
  /**
   * With no per-event delay, gather frames into writes of about this many bytes (respecting backpressure), so a
   * 50 000-chunk stream is not 50 000 writes. Ignored when a delay or a stream fault applies.
   */
  coalesceBytes?: number;
}

/** Pause between the two halves of a split frame. */
const SPLIT_PAUSE_MS = 5;

/** Helpers to answer; all of them add X-Gateway-Request-Id and apply the request's faults. */
export class SimReply {
  sent = false;
  /** Capacity model: awaited before each stream frame is written (replaces the per-event delay). */
  pacer: ((e: SseOut) => Promise<void>) | undefined;
  /** Capacity model: how long (ms) to hold a non-streamed answer before it goes out. */
  hold: ((body: Buffer) => number) | undefined;
  constructor(
    readonly req: SimRequest,
    readonly res: ServerResponse,
    readonly faults: FaultRule[],
    readonly streamDelayMs: number,
  ) {}

  #has(kind: FaultRule['kind']): FaultRule | undefined {
    return this.faults.find((f) => f.kind === kind);
  }

  #headers(extra: Record<string, string | number> = {}): Record<string, string | number> {
    const h: Record<string, string | number> = { ...extra };
    if (!this.#has('no-request-id')) h['x-gateway-request-id'] = this.req.requestId;
    return h;
  }

  /** Sends a JSON body. */
  json(status: number, body: unknown, headers: Record<string, string | number> = {}): void {
    this.send(status, Buffer.from(JSON.stringify(body)), { 'content-type': 'application/json', ...headers });
  }

  /** Sends bytes, applying drop/slow faults. */
  send(status: number, body: Buffer, headers: Record<string, string | number> = {}): void {
    this.sent = true;
    if (this.#has('lost-answer')) {
      // The work is done (a create created its task); the answer never leaves: an in-doubt create for clients.
      this.res.socket?.destroy();
      return;
    }
    const hold = this.hold?.(body) ?? 0;
    this.hold = undefined;
    if (hold > 0) {
      setTimeout(() => {
        if (!this.res.destroyed) this.send(status, body, headers);
      }, hold);
      return;
    }
    const drop = this.#has('drop');
    this.res.writeHead(status, this.#headers({ 'content-length': body.length, ...headers }));
    if (drop) {
      // Destroy once the bytes are out: Node corks the first write until the next tick, and destroying at once
      // would drop the headers too (a different fault: no answer at all).
      const part = body.subarray(0, Math.min(drop.after ?? Math.floor(body.length / 2), body.length));
      this.res.write(part, () => this.res.socket?.destroy());
      return;
    }
    this.res.end(body);
  }

  /** An error in the family's documented shape. `message` gets the request id appended (common.md §2.4). */
  error(
    status: number,
    code: string,
    message: string,
    shape: ErrorShape = 'common',
    extra: { type?: string; param?: string; headers?: Record<string, string | number> } = {},
  ): void {
    const rid = this.req.requestId;
    let body: unknown;
    switch (shape) {
      case 'common':
        body = {
          error: {
            message: `${message} (${rid})`,
            type:
              extra.type ??
              (status === 401
                ? 'authentication_error'
                : status >= 500
                  ? 'server_error'
                  : 'invalid_request_error'),
            code,
            param: extra.param ?? null,
            request_id: rid,
          },
        };
        break;
      case 'beta-task':
        body = {
          error: {
            code,
            message: `${message} Request id: ${rid}`,
            param: extra.param ?? '',
            type:
              extra.type ??
              (status === 409
                ? 'Conflict'
                : status === 404
                  ? 'NotFound'
                  : status >= 500
                    ? 'ServerError'
                    : 'BadRequest'),
          },
        };
        break;
      case 'asset':
        body = {
          ResponseMetadata: {
            RequestId: rid,
            Action: this.req.query.get('Action') ?? '',
            Version: this.req.query.get('Version') ?? '',
            Service: 'ark',
            Region: 'ap-southeast-1',
            Error: { Code: code, Message: message },
          },
        };
        break;
      case 'alpha':
        body = { code: Number(code) || 1200, message, request_id: rid };
        break;
    }
    this.json(status, body, extra.headers ?? {});
  }

  /**
   * Streams server-sent events with the configured per-event delay. Faults: `burst` delivers all events in one
   * write at the end; `drop` cuts the connection after `after` events; `slow` stalls forever after the first;
   * `no-terminal` leaves out the last event (every route's stream ends with its terminal event); `after-terminal`
   * sends the event before the terminal one again after it.
   */
  async sse(
    source: AsyncIterable<SseOut> | Iterable<SseOut>,
    signal: AbortSignal,
    options: SseOptions = {},
  ): Promise<void> {
    this.sent = true;
    const noTerminal = this.#has('no-terminal') !== undefined;
    const afterTerminal = this.#has('after-terminal') !== undefined;
    const events = noTerminal || afterTerminal ? reshapeEnd(source, afterTerminal) : source;
    this.res.writeHead(
      200,
      this.#headers({
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      }),
    );
    const burst = this.#has('burst');
    const drop = this.#has('drop');
    const slow = this.#has('slow');
    const pacer = this.pacer;
    const delay = pacer ? 0 : (this.#has('latency')?.ms ?? this.streamDelayMs);
    const coalesce = delay <= 0 && !burst && !slow && !pacer ? (options.coalesceBytes ?? 0) : 0;
    // Waits for 'drain', or 'close' when the client went away (a drain that never comes would hang the route).
    const write = async (chunk: string | Buffer): Promise<void> => {
      if (this.res.write(chunk)) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.res.off('drain', done);
          this.res.off('close', done);
          resolve();
        };
        this.res.on('drain', done);
        this.res.on('close', done);
      });
    };
    let buffered = '';
    let n = 0;
    for await (const e of events) {
      if (signal.aborted || this.res.destroyed) return;
      if (pacer) await pacer(e);
      const frame = `${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${e.data}\n\n`;
      if (drop && n >= (drop.after ?? 2)) {
        // After the pending frames are out (writes are corked until the next tick).
        this.res.write(!burst ? buffered : '', () => this.res.socket?.destroy());
        return;
      }
      if (burst) buffered += frame;
      else if (e.splitUtf8 === true) {
        if (buffered.length > 0) await write(buffered);
        buffered = '';
        const bytes = Buffer.from(frame, 'utf8');
        const lead = bytes.findIndex((b) => b >= 0xc0);
        const at = lead >= 0 ? lead + 1 : bytes.length >> 1;
        await write(bytes.subarray(0, at));
        await new Promise((r) => setTimeout(r, SPLIT_PAUSE_MS));
        await write(bytes.subarray(at));
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      } else if (coalesce > 0) {
        buffered += frame;
        if (buffered.length >= coalesce) {
          const out = buffered;
          buffered = '';
          await write(out);
        }
      } else {
        await write(frame);
        if (slow && n >= 0) {
          await new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          return;
        }
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      }
      n++;
    }
    this.res.end(buffered);
  }
}

/**
 * The events of a stream with its last (terminal) event left out, or followed by a repeat of the event before it
 * (`again`): held one event back, so the last is known when the source ends.
 */
async function* reshapeEnd(
  events: AsyncIterable<SseOut> | Iterable<SseOut>,
  again: boolean,
): AsyncGenerator<SseOut> {
  let before: SseOut | undefined;
  let held: SseOut | undefined;
  for await (const e of events) {
    if (held !== undefined) yield held;
    before = held;
    held = e;
  }
  if (!again) return;
  if (held !== undefined) yield held;
  if (before !== undefined) yield before;
}

/** Reads a whole request body. */
export async function readBody(req: IncomingMessage, limit = Infinity): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > limit) throw new RequestTooLargeError(limit);
    parts.push(c as Buffer);
  }
  return Buffer.concat(parts);
}

/** A request body past the simulator's limit (answered 413). */
export class RequestTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}
