/**
 * One timed request of `gw load`, driven through undici's public `Dispatcher.dispatch` handler API so every
 * timestamp is taken in the callback that delivers the bytes (`onResponseData`), before any JSON is parsed:
 * time to first token is the arrival of the network read that completed the first content event, inter-token gaps
 * are the gaps between those arrivals. Stream events are framed by eventsource-parser; only events that matter
 * (usage, errors, terminals) are parsed as JSON, after their timestamp was taken.
 *
 * Where latency starts: in the open loop at the request's scheduled start (how late it was written is its lag);
 * in the closed loop at the moment undici writes it on its connection (`onRequestStart`, called synchronously
 * right before the write). Not at the dispatch: undici lets a kept-alive connection sit for one turn of the event
 * loop before reusing it (so a server's close can be seen first), and under load that turn is the client's own
 * delay, not the gateway's. A connection's set-up therefore counts in the open loop only; `--warmup` opens them.
 *
 * A request fails when: the status is not 2xx; the connection fails or times out; a stream carries an error event
 * (chat: a frame with a top-level `error`; responses: `error` or `response.failed`; messages: `error`) or ends
 * before its terminal event (`[DONE]`, `response.completed|incomplete`, `message_stop`); or a 200 body is not JSON.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import { SseBound } from '../client/sse.js';
import type { Prepared, TextApi } from './workload.js';

/** What one request produced (times in ms). */
export interface Outcome {
  /** `video`: an item of `gw load --api video` (see video.ts). */
  api: TextApi | 'video';
  stream: boolean;
  ok: boolean;
  /** HTTP status (0 when no answer came). */
  status: number;
  /** Error code of a failure: the gateway's `error.code`, a stream error's code, or gw's (`timeout`, `ECONNRESET`…). */
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
  /** True when the run was interrupted while this request was in flight (not counted). */
  cancelled?: boolean;
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

/** Where to send, with what credentials. */
export interface Target {
  /** The connection pool (open loop). */
  dispatcher: Dispatcher;
  /**
   * The closed loop's i-th virtual user's own connection (one request at a time on it, as a benchmark tool's
   * connection): no pool to pick a free connection from on every request.
   */
  lane?: (i: number) => Dispatcher;
  /** Path prefix of the base URL (without trailing slash), e.g. `` or `/gateway`. */
  prefix: string;
  /** Request headers of streamed and of whole answers (built once: accept differs). */
  headers: { stream: Record<string, string>; plain: Record<string, string> };
  timeoutMs: number;
}

/** One request in flight, as Flight sees it. */
export interface Pending {
  deadline: number;
  /** Where Flight holds it (Flight's own bookkeeping; unset while it is not held). */
  flightSlot?: number | undefined;
  expire(): void;
  cancel(): void;
}

/**
 * The requests in flight of a step: one timer sweeping for timeouts and one abort listener for all of them, instead
 * of a timer and a listener per request (both cost more than the rest of a tiny request's bookkeeping).
 *
 * They are held in an array, each knowing its index (removal moves the last one into its place), not in a Set: a
 * Set that lives for the whole run and has a request added and removed thousands of times a second made V8 promote
 * about 270 bytes per request to the old generation (garbage that only a full collection reclaims) and tripled the
 * time of each young-generation collection; measured on tiny requests at 64 connections, the array promotes nothing.
 */
export class Flight {
  readonly #live: Pending[] = [];
  readonly #timer: ReturnType<typeof setInterval>;
  #aborted = false;

  constructor(
    readonly timeoutMs: number,
    signal: AbortSignal,
  ) {
    const sweep = Math.max(5, Math.min(250, Math.floor(timeoutMs / 4)));
    this.#timer = setInterval(() => {
      const now = performance.now();
      const live = this.#live;
      // Backwards: expiring one moves the last (already visited) into its place.
      for (let i = live.length - 1; i >= 0; i--) {
        const p = live[i];
        if (p !== undefined && now >= p.deadline) p.expire();
      }
    }, sweep);
    if (signal.aborted) this.#aborted = true;
    else signal.addEventListener('abort', () => this.abortAll(), { once: true });
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

  /** Cancels every request in flight (Ctrl-C, --stop-on). */
  abortAll(): void {
    this.#aborted = true;
    for (const p of [...this.#live]) p.cancel();
  }

  /** Stops the timer. */
  close(): void {
    clearInterval(this.#timer);
  }
}

/** Fields of a JSON body or event the recorder reads. */
interface Parsed {
  error?: { code?: unknown; type?: unknown } | string | null;
  usage?: Record<string, unknown> | null;
  response?: { usage?: Record<string, unknown> | null; error?: { code?: unknown } | null; status?: unknown };
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

function usageTokens(u: Record<string, unknown> | null | undefined): number | undefined {
  const n = u?.completion_tokens ?? u?.output_tokens;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
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
};

const CONTENT = /"(?:content|refusal)":"(?!")/;
/** The gaps of an outcome without any (most answers): one shared empty list instead of one per request. */
const NO_GAPS: readonly number[] = Object.freeze([]);

/** One request in flight: its own dispatch handler (methods on a prototype, not a dozen closures per request). */
class Exchange implements Dispatcher.DispatchHandler, Pending {
  out: Outcome;
  readonly deadline: number;
  /** Where latency is measured from (see the constructor). */
  t0: number;
  /** True in the open loop: t0 is the schedule, and the write's delay is the lag. */
  readonly scheduled: boolean;
  settled = false;
  flightSlot: number | undefined;
  controller: Dispatcher.DispatchController | undefined;
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

  /**
   * `t0`: the scheduled start (open loop), or undefined (closed loop: latency runs from the write, see above;
   * until then from the dispatch, for a request that never got written).
   */
  constructor(
    readonly req: Prepared,
    t0: number | undefined,
    readonly runStart: number,
    readonly flight: Flight,
    timeoutMs: number,
    public resolve: (o: Outcome) => void,
  ) {
    const now = performance.now();
    this.scheduled = t0 !== undefined;
    this.t0 = t0 ?? now;
    this.deadline = now + timeoutMs;
    this.out = {
      api: req.api,
      stream: req.stream,
      ok: false,
      status: 0,
      startMs: this.t0 - runStart,
      lagMs: now > this.t0 ? now - this.t0 : 0,
      e2eMs: 0,
      itlMs: NO_GAPS,
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
    out.e2eMs = performance.now() - this.t0;
    if (this.gaps !== undefined) out.itlMs = this.gaps;
    if (code !== undefined) {
      out.ok = false;
      out.code = code;
    }
    this.resolve(out);
    this.resolve = noop;
    this.out = SETTLED;
    this.controller = undefined;
    this.first = undefined;
    this.parts = undefined;
    this.gaps = undefined;
    this.parser = undefined;
    this.decoder = undefined;
    this.bound = undefined;
  }

  /** Settles with `code` and aborts the request on its connection. */
  #stop(code: string): void {
    const c = this.controller;
    this.finish(code);
    c?.abort(Object.assign(new Error(code), { code }));
  }

  expire(): void {
    this.#stop('timeout');
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

  onEvent(e: EventSourceMessage): void {
    if (this.done || this.failedCode !== undefined) return;
    const data = e.data;
    const out = this.out;
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
        if (data.includes('"usage":{')) {
          const n = usageTokens(tryParse(data)?.usage);
          if (n !== undefined) out.outputTokens = n;
        }
        return;
      }
      case 'responses': {
        const type = e.event ?? '';
        if (type === 'response.output_text.delta' || type === 'response.refusal.delta') this.token();
        else if (type === 'response.completed' || type === 'response.incomplete') {
          this.done = true;
          const n = usageTokens(tryParse(data)?.response?.usage);
          if (n !== undefined) out.outputTokens = n;
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
        else if (type === 'message_delta') {
          // Cumulative totals: overwrite, never add.
          const n = usageTokens(tryParse(data)?.usage);
          if (n !== undefined) out.outputTokens = n;
        } else if (type === 'message_stop') this.done = true;
        else if (type === 'error') this.failedCode = errorCode(tryParse(data), 200);
        return;
      }
      case 'embeddings':
        return;
    }
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    // undici writes the request right after this returns.
    const writtenAt = performance.now();
    this.controller = c;
    if (this.settled) {
      c.abort(new Error('settled'));
      return;
    }
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
    if (statusCode >= 300) this.limit = MAX_ERROR_BODY;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    // The arrival of these bytes: taken before anything is decoded or parsed.
    this.chunkAt = performance.now();
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

  body(): Parsed | undefined {
    const whole = this.parts !== undefined ? Buffer.concat(this.parts) : this.first;
    return tryParse(whole === undefined ? '' : whole.toString('utf8'));
  }

  onResponseEnd(): void {
    if (this.settled) return;
    const status = this.out.status;
    if (status < 200 || status >= 300) {
      this.finish(errorCode(this.body(), status));
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
    const whole = this.kept <= this.limit;
    const p = whole ? this.body() : undefined;
    if (p === undefined && whole) {
      this.finish('malformed_body');
      return;
    }
    if (p?.status === 'failed') {
      this.finish(errorCode(p, status));
      return;
    }
    const n = usageTokens(p?.usage);
    if (n !== undefined) this.out.outputTokens = n;
    this.out.ok = true;
    this.finish();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    const code = (err as { code?: unknown }).code;
    this.finish(typeof code === 'string' ? code : err.name || 'connection_error');
  }
}

/**
 * Sends one request. `t0`: the scheduled start (performance.now()) latency is measured from in the open loop;
 * undefined in the closed loop (from the write). `runStart` is the run's origin for `startMs`. Never rejects.
 */
export function exchange(
  target: Target,
  req: Prepared,
  t0: number | undefined,
  runStart: number,
  flight: Flight,
  dispatcher: Dispatcher = target.dispatcher,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const x = new Exchange(req, t0, runStart, flight, target.timeoutMs, resolve);
    if (flight.aborted) {
      x.cancel();
      return;
    }
    flight.add(x);
    try {
      dispatcher.dispatch(
        {
          path: `${target.prefix}${req.path}`,
          method: 'POST',
          headers: req.stream ? target.headers.stream : target.headers.plain,
          body: req.body,
        },
        x,
      );
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      x.finish(typeof code === 'string' ? code : 'dispatch_error');
    }
  });
}
