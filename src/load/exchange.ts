/**
 * One timed request of `gw load`, sent with the client's `dispatch` (the same connection pool, proxy, CAs, token rule
 * and timeouts as every command) and driven through undici's handler callbacks, so every timestamp is taken in the
 * callback that delivers the bytes (`onResponseData`), before any JSON is parsed: time to first token is the
 * arrival of the network read that completed the first content event, inter-token gaps are the gaps between those
 * arrivals. Stream events are framed by eventsource-parser; only events that matter (usage, errors, terminals) are
 * parsed as JSON, after their timestamp was taken.
 *
 * Where latency starts: in the open loop at the request's scheduled start (how late it was written is its lag);
 * in the closed loop at the moment undici writes it on its connection (`onRequestStart`, called synchronously
 * right before the write). Not at the dispatch: undici lets a kept-alive connection sit for one turn of the event
 * loop before reusing it (so a server's close can be seen first), and under load that turn is the client's own
 * delay, not the gateway's. A connection's set-up therefore counts in the open loop only; `--warmup` opens them.
 *
 * A request fails when: the status is not 2xx (its code is the client's: the error body's, or `redirect`); the
 * connection fails or times out (the client's codes); a stream carries an error event (chat: a frame with a
 * top-level `error`; responses: `error` or `response.failed`; messages: `error`) or ends before its terminal event
 * (`[DONE]`, `response.completed|incomplete`, `message_stop`); or a 200 body is not JSON.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import type { GatewayClient, PreparedRequest } from '../client/gateway-client.js';
import { rootCode } from '../client/network-errors.js';
import { SseBound } from '../client/sse.js';
import { producedOf, type Spend } from '../contract/prices.js';
import type { Amount } from '../core/budget.js';
import { mergeUsage, tokensOf, type Tokens } from '../contract/usage.js';
import type { Prepared, TextApi } from './workload.js';

/** What one request produced (times in ms). */
export interface Outcome {
  /** `video`: an item of `gw load --api video` (see video.ts); `images`: an image generation of a replay. */
  api: TextApi | 'images' | 'video';
  stream: boolean;
  ok: boolean;
  /** HTTP status (0 when no answer came). */
  status: number;
  /** Error code of a failure: the gateway's `error.code`, a stream error's code, or the client's (`timeout`…). */
  code?: string;
  requestId?: string;
  /** Scheduled (open loop) or written (closed loop) start, relative to the run's start. */
  startMs: number;
  /** How late the request was written compared to its schedule (open loop; 0 in the closed loop). */
  lagMs: number;
  e2eMs: number;
  ttftMs?: number;
  /** Gaps between successive content events (the first MAX_ITL_GAPS of them; shared and empty when there are none). */
  itlMs: readonly number[];
  /** The largest of all the gaps (kept or not); undefined with fewer than two content events. */
  itlMaxMs?: number;
  /** Output tokens from the gateway's usage; undefined when it reported none. */
  outputTokens?: number;
  /** Input tokens from the gateway's usage (those read from a cache included), when it reported them. */
  inputTokens?: number;
  /** Of the input tokens, those the usage says were read from a cache. */
  cachedTokens?: number;
  /** Images an images answer holds (its `data`). */
  images?: number;
  /** A finished video's seconds (its task's final record), to price. */
  videoSeconds?: number;
  /** With --prices: what its answer cost (set by the step's recorder, load/spend.ts). */
  spend?: Spend;
  /** The model the request asked for. */
  model?: string;
  /** True when the step ended (its duration, Ctrl-C, an early stop) while this request was in flight (not counted). */
  cancelled?: boolean;
  /** False when the request failed before a byte of it was written (a refused connection, no file descriptor). */
  sent: boolean;
  /** It failed because this process ran out of file descriptors (EMFILE, ENFILE): `ulimit -n`, not the gateway. */
  localLimit?: boolean;
  /** The trace and span ids of its `traceparent` (unset when it failed before it could be sent). */
  traceId?: string;
  spanId?: string;
}

/** Bytes kept of a successful non-streamed body (for its usage) and of an error body (for its code). */
const MAX_OK_BODY = 1 << 20;
const MAX_ERROR_BODY = 64 << 10;
/**
 * Gaps kept per request for the ITL histogram: 256 KB of numbers, far more than any answer's tokens. A stream that
 * sends more content events than this (a hostile or runaway one) would otherwise grow the array until its
 * timeout; its later gaps are left out of the histogram, while its largest gap still counts (itlMaxMs).
 */
export const MAX_ITL_GAPS = 32_768;

/** A monotonic clock in milliseconds (`performance` is one). */
export interface Clock {
  now(): number;
}

/** Where to send and how time is read. */
export interface Target {
  client: GatewayClient;
  clock: Clock;
  /**
   * The closed loop's i-th virtual user's own client, with one connection (one request at a time on it, as a
   * benchmark tool's connection): no pool to pick a free connection from on every request, which measured about
   * 6 % of the requests per second of tiny requests at 64 users. Absent: every user shares `client`.
   */
  lane?: ((i: number) => Promise<GatewayClient>) | undefined;
}

/** A request body with the client's prepared request (URL, headers, timeouts) it is sent with. */
export interface Sendable extends Prepared {
  request: PreparedRequest;
  /** With --budget: the most it can cost at --prices, held against the budget while it is in flight. */
  bound?: Amount | undefined;
}

/** One request in flight, as Flight sees it. */
export interface Pending {
  /** Where Flight holds it (Flight's own bookkeeping; unset while it is not held). */
  flightSlot?: number | undefined;
  cancel(): void;
}

/**
 * The requests in flight of a step, so that the step's end (its duration, Ctrl-C, an early stop) aborts them all
 * with one abort listener instead of one per request.
 *
 * They are held in an array, each knowing its index (removal moves the last one into its place), not in a Set: a
 * Set that lives for the whole run and has a request added and removed thousands of times a second made V8 promote
 * about 270 bytes per request to the old generation (garbage that only a full collection reclaims) and tripled the
 * time of each young-generation collection; measured on tiny requests at 64 connections, the array promotes nothing.
 */
export class Flight {
  readonly #live: Pending[] = [];
  #aborted = false;
  readonly #signal: AbortSignal;
  readonly #onAbort = (): void => this.abortAll();

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    if (signal.aborted) this.#aborted = true;
    else signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Requests in flight. */
  get size(): number {
    return this.#live.length;
  }

  #holds(p: Pending): boolean {
    return p.flightSlot !== undefined && this.#live[p.flightSlot] === p;
  }

  add(p: Pending): void {
    if (this.#holds(p)) return;
    p.flightSlot = this.#live.length;
    this.#live.push(p);
  }

  delete(p: Pending): void {
    if (!this.#holds(p)) return;
    const slot = p.flightSlot as number;
    const last = this.#live.pop() as Pending;
    if (last !== p) {
      this.#live[slot] = last;
      last.flightSlot = slot;
    }
    p.flightSlot = undefined;
  }

  /** Cancels every request in flight, and every one sent after (the step is over). */
  abortAll(): void {
    this.#aborted = true;
    for (const p of [...this.#live]) p.cancel();
  }

  /** Stops listening to the step's signal. */
  close(): void {
    this.#signal.removeEventListener('abort', this.#onAbort);
  }
}

/** Fields of a JSON body or event the recorder reads. */
interface Parsed {
  error?: { code?: unknown; type?: unknown } | string | null;
  usage?: Record<string, unknown> | null;
  response?: { usage?: Record<string, unknown> | null; error?: { code?: unknown } | null; status?: unknown };
  message?: { usage?: Record<string, unknown> | null };
  code?: unknown;
  type?: unknown;
  status?: unknown;
}

function tryParse(text: string): Parsed | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Sets the tokens an answer's usage reports. */
function setTokens(out: Outcome, t: Tokens): void {
  if (t.output !== undefined) out.outputTokens = t.output;
  if (t.input !== undefined) out.inputTokens = t.input;
  if (t.cached !== undefined) out.cachedTokens = t.cached;
}

/** The error code of an error body in any of the gateway's envelopes. */
export function errorCode(body: Parsed | undefined, status: number): string {
  const e = body?.error;
  if (typeof e === 'object' && e !== null) {
    if (typeof e.code === 'string' && e.code !== '') return e.code;
    if (typeof e.code === 'number') return String(e.code);
    if (typeof e.type === 'string' && e.type !== '') return e.type;
  }
  if (typeof body?.code === 'string' && body.code !== '') return body.code;
  return `http_${status}`;
}

const noop = (): void => {};
/** What a settled exchange points to instead of its outcome (see finish). */
const SETTLED: Outcome = {
  api: 'chat',
  stream: false,
  ok: false,
  status: 0,
  startMs: 0,
  lagMs: 0,
  e2eMs: 0,
  itlMs: [],
  sent: false,
};

const CONTENT = /"(?:content|refusal)":"(?!")/;
/** The gaps of an outcome without any (most answers): one shared empty list instead of one per request. */
const NO_GAPS: readonly number[] = Object.freeze([]);
/** Codes of a process out of file descriptors: the client's own limit, not the gateway's answer. */
const LOCAL_LIMIT_CODES = new Set(['EMFILE', 'ENFILE']);

/** One request in flight: its own dispatch handler (methods on a prototype, not a dozen closures per request). */
class Exchange implements Dispatcher.DispatchHandler, Pending {
  out: Outcome;
  /** Where latency is measured from (see the constructor). */
  t0: number;
  /** True in the open loop: t0 is the schedule, and the write's delay is the lag. */
  readonly scheduled: boolean;
  settled = false;
  flightSlot: number | undefined;
  controller: Dispatcher.DispatchController | undefined;
  /** The headers of an answer that is not a success (its error is the client's, from status, body and headers). */
  headers: IncomingHttpHeaders | undefined;
  sse = false;
  parser: EventSourceParser | undefined;
  decoder: StringDecoder | undefined;
  /** Caps the stream's unfinished line and event: a hostile endless one would grow the parser's buffers. */
  bound: SseBound | undefined;
  chunkAt = 0;
  lastTokenAt = 0;
  done = false;
  failedCode: string | undefined;
  /** Gaps between content events, from the second one on. */
  gaps: number[] | undefined;
  /** The body kept so far: its first chunk, then every chunk once there is a second (most bodies are one chunk). */
  first: Buffer | undefined;
  parts: Buffer[] | undefined;
  kept = 0;
  limit = MAX_OK_BODY;
  /** The stream's usage so far: its reports merged field by field (contract/usage.ts mergeUsage). */
  usage: Record<string, unknown> | undefined;

  /**
   * `t0`: the scheduled start (open loop), or undefined (closed loop: latency runs from the write, see above;
   * until then from the dispatch, for a request that never got written).
   */
  constructor(
    readonly req: Sendable,
    readonly target: Target,
    /** The client that sends it (its errors are this client's mapping). */
    readonly client: GatewayClient,
    t0: number | undefined,
    readonly runStart: number,
    readonly flight: Flight,
    public resolve: (o: Outcome) => void,
  ) {
    const now = target.clock.now();
    this.scheduled = t0 !== undefined;
    this.t0 = t0 ?? now;
    this.out = {
      api: req.api,
      model: req.model,
      stream: req.stream,
      ok: false,
      status: 0,
      startMs: this.t0 - runStart,
      lagMs: now > this.t0 ? now - this.t0 : 0,
      e2eMs: 0,
      itlMs: NO_GAPS,
      sent: false,
    };
  }

  /**
   * Settles the exchange. undici keeps the handler of a finished request reachable for a while, and a finished
   * request's objects that a collection finds reachable get promoted and pile up until a full collection: so a
   * settled exchange lets go of everything it held (its outcome, the body's bytes, the parser, the controller with
   * the raw headers). Measured on tiny requests at 64 connections: the young generation's survivors fell from 22 %
   * to 3.5 % per scavenge and requests per second rose by about a sixth.
   */
  finish(code?: string): void {
    if (this.settled) return;
    this.settled = true;
    this.flight.delete(this);
    const out = this.out;
    out.e2eMs = this.target.clock.now() - this.t0;
    if (this.gaps !== undefined) out.itlMs = this.gaps;
    if (code !== undefined) {
      out.ok = false;
      out.code = code;
    }
    this.resolve(out);
    this.resolve = noop;
    this.out = SETTLED;
    this.controller = undefined;
    this.headers = undefined;
    this.first = undefined;
    this.parts = undefined;
    this.gaps = undefined;
    this.parser = undefined;
    this.decoder = undefined;
    this.bound = undefined;
    this.usage = undefined;
  }

  /** Settles with `code` and aborts the request on its connection. */
  #stop(code: string): void {
    const c = this.controller;
    this.finish(code);
    c?.abort(Object.assign(new Error(code), { code }));
  }

  cancel(): void {
    if (this.settled) return;
    this.out.cancelled = true;
    this.#stop('interrupted');
  }

  token(): void {
    const out = this.out;
    if (out.ttftMs === undefined) out.ttftMs = this.chunkAt - this.t0;
    else {
      const gap = this.chunkAt - this.lastTokenAt;
      const gaps = (this.gaps ??= []);
      if (gaps.length < MAX_ITL_GAPS) gaps.push(gap);
      if (out.itlMaxMs === undefined || gap > out.itlMaxMs) out.itlMaxMs = gap;
    }
    this.lastTokenAt = this.chunkAt;
  }

  /** A usage report of the stream: later reports are cumulative, a field they leave out keeps its value. */
  takeUsage(report: unknown): void {
    if (report === null || typeof report !== 'object') return;
    mergeUsage((this.usage ??= {}), report);
    setTokens(this.out, tokensOf(this.usage));
  }

  onEvent(e: EventSourceMessage): void {
    if (this.done || this.failedCode !== undefined) return;
    const data = e.data;
    switch (this.req.api) {
      case 'chat': {
        if (data === '[DONE]') {
          this.done = true;
          return;
        }
        if (data.includes('"error":')) {
          const p = tryParse(data);
          if (p?.error !== undefined && p.error !== null) {
            this.failedCode = errorCode(p, 200);
            return;
          }
        }
        if (CONTENT.test(data) || data.includes('"tool_calls":[')) this.token();
        if (data.includes('"usage":{')) this.takeUsage(tryParse(data)?.usage);
        return;
      }
      case 'responses': {
        const type = e.event ?? '';
        if (type === 'response.output_text.delta' || type === 'response.refusal.delta') this.token();
        else if (type === 'response.completed' || type === 'response.incomplete') {
          this.done = true;
          this.takeUsage(tryParse(data)?.response?.usage);
        } else if (type === 'response.failed') {
          const c = tryParse(data)?.response?.error?.code;
          this.failedCode = typeof c === 'string' ? c : 'response_failed';
        } else if (type === 'error') {
          const p = tryParse(data);
          this.failedCode = typeof p?.code === 'string' ? p.code : errorCode(p, 200);
        }
        return;
      }
      case 'messages': {
        const type = e.event ?? '';
        if (type === 'content_block_delta') this.token();
        else if (type === 'message_start') this.takeUsage(tryParse(data)?.message?.usage);
        else if (type === 'message_delta') this.takeUsage(tryParse(data)?.usage);
        else if (type === 'message_stop') this.done = true;
        else if (type === 'error') this.failedCode = errorCode(tryParse(data), 200);
        return;
      }
      case 'embeddings':
      case 'images':
        return;
    }
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    // undici writes the request right after this returns.
    const writtenAt = this.target.clock.now();
    this.controller = c;
    if (this.settled) {
      c.abort(new Error('settled'));
      return;
    }
    this.out.sent = true;
    if (this.scheduled) this.out.lagMs = writtenAt > this.t0 ? writtenAt - this.t0 : 0;
    else {
      this.t0 = writtenAt;
      this.out.startMs = writtenAt - this.runStart;
    }
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (this.settled) return;
    this.out.status = statusCode;
    const rid = headers['x-gateway-request-id'] ?? headers['request-id'];
    if (typeof rid === 'string') this.out.requestId = rid;
    if (statusCode >= 200 && statusCode < 300 && this.req.stream) {
      const ct = headers['content-type'];
      this.sse = typeof ct === 'string' && ct.includes('text/event-stream');
      if (this.sse) {
        this.decoder = new StringDecoder('utf8');
        this.bound = new SseBound();
        this.parser = createParser({ onEvent: (e) => this.onEvent(e) });
      }
    }
    if (statusCode >= 300) {
      this.limit = MAX_ERROR_BODY;
      this.headers = headers;
    }
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    // The arrival of these bytes: taken before anything is decoded or parsed.
    this.chunkAt = this.target.clock.now();
    if (this.settled) return;
    if (this.parser !== undefined && this.decoder !== undefined) {
      const text = this.decoder.write(chunk);
      try {
        this.bound?.feed(text);
      } catch {
        // An endless line or event: the gateway's answer is refused, as every other command refuses it.
        this.#stop('response_too_large');
        return;
      }
      this.parser.feed(text);
      if (this.failedCode !== undefined) {
        // The stream failed: record it, then stop reading.
        this.#stop(this.failedCode);
      }
      return;
    }
    if (this.kept < this.limit) {
      if (this.first === undefined) this.first = chunk;
      else (this.parts ??= [this.first]).push(chunk);
      this.kept += chunk.length;
    }
  }

  text(): string {
    const whole = this.parts !== undefined ? Buffer.concat(this.parts) : this.first;
    return whole === undefined ? '' : whole.toString('utf8');
  }

  onResponseEnd(): void {
    if (this.settled) return;
    const status = this.out.status;
    if (status < 200 || status >= 300) {
      this.finish(this.client.answerError(this.req.request, status, this.text(), this.headers ?? {}).code);
      return;
    }
    if (this.sse) {
      if (this.failedCode !== undefined) this.finish(this.failedCode);
      else if (!this.done) this.finish('stream_incomplete');
      else {
        this.out.ok = true;
        this.finish();
      }
      return;
    }
    if (this.req.stream) {
      this.finish('not_a_stream');
      return;
    }
    this.#whole(status);
  }

  /** A whole (non-streamed) 2xx answer: a success with its usage, unless it is not JSON or says it failed. */
  #whole(status: number): void {
    const whole = this.kept <= this.limit;
    const p = whole ? tryParse(this.text()) : undefined;
    if (p === undefined && whole) {
      this.finish('malformed_body');
      return;
    }
    if (p?.status === 'failed') {
      this.finish(errorCode(p, status));
      return;
    }
    if (p !== undefined) {
      const produced = producedOf(this.req.path, p);
      if (produced.tokens !== undefined) setTokens(this.out, produced.tokens);
      if (produced.images !== undefined) this.out.images = produced.images;
    }
    this.out.ok = true;
    this.finish();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.settled) return;
    if (LOCAL_LIMIT_CODES.has(rootCode(err) ?? '')) this.out.localLimit = true;
    this.finish(this.client.failure(this.req.request, err, this.out.requestId).code);
  }
}

/**
 * Sends one request with `client` (default the target's). `t0`: the scheduled start (clock time) latency is
 * measured from in the open loop; undefined in the closed loop (from the write). `runStart` is the run's origin for
 * `startMs`. Never rejects.
 */
export function exchange(
  target: Target,
  req: Sendable,
  t0: number | undefined,
  runStart: number,
  flight: Flight,
  client: GatewayClient = target.client,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const x = new Exchange(req, target, client, t0, runStart, flight, resolve);
    if (flight.aborted) {
      x.cancel();
      return;
    }
    flight.add(x);
    // Held here: a request that fails at once has settled (and let go of its outcome) before dispatch returns.
    const out = x.out;
    try {
      out.spanId = client.dispatch(req.request, req.body, x);
      out.traceId = client.trace.traceId;
    } catch (e) {
      x.onResponseError(undefined as unknown as Dispatcher.DispatchController, e as Error);
    }
  });
}
