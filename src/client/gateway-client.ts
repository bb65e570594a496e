import { interceptors, type Dispatcher, type FormData } from 'undici';
import type { z } from 'zod';
import { backoffDelay, parseRetryAfter, sleep as realSleep } from './backoff.js';
import { normalizeBaseUrl } from './base-url.js';
import type { Readable } from 'node:stream';
import { BodyTooLargeError, decodedBody, formatBytes, readText } from './body.js';
import {
  ConnectionError,
  GatewayError,
  ResponseShapeError,
  TimeoutError,
  UserAbortError,
  errorFromBody,
} from './errors.js';
import { describeNetworkError, isAbortError } from './network-errors.js';
import { SseLineTooLongError, decodeSseBatches, type SseEvent } from './sse.js';
import { deadline } from './deadline.js';
import { MAX_SPAN_GAPS, TraceContext, usageOf, type RequestSpan } from './trace.js';
import { createDispatcher, gatewayOnly } from './transport.js';

/** One HTTP exchange as reported to `onExchange` (drives `--verbose`). Never carries the token or headers. */
export interface Exchange {
  method: string;
  /** Path and query relative to the base URL, or the absolute URL for another origin. */
  path: string;
  status: number | undefined;
  ms: number;
  requestId: string | undefined;
  attempt: number;
  error?: string;
}

/** Options of a GatewayClient. `sleep`, `random` and `now` are injectable so tests never wait on the clock. */
export interface GatewayClientOptions {
  baseUrl: string;
  token?: string | undefined;
  /** Per-request limit: whole answer for JSON calls; time to headers and idle gap between chunks for streams. */
  timeoutMs?: number | undefined;
  dispatcher?: Dispatcher | undefined;
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
  now?: (() => number) | undefined;
  onExchange?: ((x: Exchange) => void) | undefined;
  /** Client-side contract validation (resources consult it); `false` sends rule-breaking bodies as they are. */
  validate?: boolean | undefined;
  /** Automatic retries for GET/HEAD/DELETE. */
  maxRetries?: number | undefined;
  userAgent?: string | undefined;
  /** Extra trusted certificate authorities (PEM text), added to Node's own (and NODE_EXTRA_CA_CERTS). */
  ca?: string | readonly string[] | undefined;
  /** Environment to read HTTPS_PROXY/HTTP_PROXY/NO_PROXY and NODE_EXTRA_CA_CERTS from (default process.env). */
  proxyEnv?: Record<string, string | undefined> | undefined;
  /** Largest JSON answer read into memory (default 64 MiB); a larger one is an error. */
  maxResponseBytes?: number | undefined;
  /** Most connections to the gateway's origin (default: no limit); a load generator sizes its pool with it. */
  connections?: number | undefined;
  /**
   * The trace every request joins (`traceparent`, sent to the gateway's origin only); share one between the
   * clients of one job so they make one trace. Default: a new trace for this client.
   */
  trace?: TraceContext | undefined;
  /** Told of every request when it ended (its answer read, its stream over, or its failure): telemetry exporters. */
  onSpan?: ((s: RequestSpan) => void) | undefined;
  /**
   * Extra headers sent with every request to the gateway's origin, never to another origin (a result URL, a
   * redirect's next hop); each replaces the client's own header of the same name, a request's own headers replace it.
   */
  headers?: Record<string, string> | undefined;
}

/** An answer of `call`: its body as it arrives, failures mapped like every call's. Consume or return `chunks`. */
export interface CallResult {
  status: number;
  requestId: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  chunks: AsyncIterable<Buffer>;
}

/** HTTP methods the gateway uses (PUT and PATCH only through `call`, for routes gw has no verb for). */
export type Method = 'GET' | 'POST' | 'DELETE' | 'HEAD' | 'PUT' | 'PATCH';

/** Query values; arrays repeat the key. */
export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

/** A request. `schema` checks the answer (tolerant schemas: unknown fields pass). */
export interface RequestOptions<T> {
  method: Method;
  path: string;
  query?: Query | undefined;
  body?: unknown;
  /** A multipart body instead of JSON. */
  form?: FormData | undefined;
  headers?: Record<string, string> | undefined;
  schema?: z.ZodType<T> | undefined;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /**
   * Automatic retries of this call (GET/HEAD/DELETE only; default the client's `maxRetries`). Pollers pass 0:
   * they absorb transient errors themselves, within their own time limit.
   */
  retries?: number | undefined;
  /** Epoch milliseconds after which no retry is started (a caller's overall limit). */
  deadline?: number | undefined;
}

/** A parsed answer with the gateway request id. */
export interface ApiResult<T> {
  data: T;
  status: number;
  requestId: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** The answer's text as received (JSON calls): `data` is its parse, this lets a caller keep it unchanged. */
  text?: string;
}

/** An open event stream. */
export interface StreamResult {
  status: number;
  requestId: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  events: AsyncIterable<SseEvent>;
  /** The same events grouped by network read (one promise per read, not per event); consume this or `events`. */
  batches: AsyncIterable<SseEvent[]>;
}

/**
 * A request built once and sent many times with `dispatch`: undici's options without the body (origin, path,
 * method, the headers with the token on the gateway's origin only, the client's timeouts).
 */
export interface PreparedRequest {
  readonly method: Method;
  /** The path as given (errors name it). */
  readonly path: string;
  readonly url: string;
  readonly options: {
    readonly origin: string;
    readonly path: string;
    readonly method: Method;
    readonly headers: Readonly<Record<string, string>>;
    readonly headersTimeout: number;
    readonly bodyTimeout: number;
  };
}

/** An open binary answer (downloads). The caller must consume or destroy `body`. */
export interface RawResult {
  status: number;
  requestId: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** undici's body: a Node Readable with `.text()`, `.arrayBuffer()`, `.dump()`. */
  body: Dispatcher.ResponseData['body'];
}

/** `30s`, `2.5s`, `250ms` (a sub-second limit would read `0.0s`). */
function formatSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const RETRY_METHODS = new Set<Method>(['GET', 'HEAD', 'DELETE']);
const REQUEST_ID = 'x-gateway-request-id';
/** Longest Retry-After the client waits out itself; a longer one ends the call with the error (it carries it). */
export const MAX_RETRY_AFTER_MS = 60_000;
/** Largest Retry-After carried on an error (a caller's sleep must stay a sane number). */
const MAX_REPORTED_RETRY_AFTER_MS = 24 * 3_600_000;
/** JSON answers larger than this are refused (memory bound). */
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Error bodies are read up to this size (only the message matters). */
const MAX_ERROR_BODY_BYTES = 1024 * 1024;
/** Connection failures worth another try: the server went away or is restarting; not DNS, TLS or timeouts. */
const RETRY_CONNECT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

type Headers = Record<string, string | string[] | undefined>;

function header(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Builds `?a=1&b=2`; arrays repeat their key. */
export function buildQuery(query: Query | undefined): string {
  if (query === undefined) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (typeof v === 'object') for (const item of v) p.append(k, item);
    else p.append(k, String(v));
  }
  const s = p.toString();
  return s.length > 0 ? `?${s}` : '';
}

/**
 * What kind of answer a send expects: it decides redirects, timeouts and the accept header. `call` (gw api) is a
 * body passed through: no redirect followed, the timeout bounds the wait for headers and each gap, like a stream.
 */
type Mode = 'json' | 'stream' | 'raw' | 'call';

/** One send: a request, or an absolute URL for downloads. */
interface Send {
  method: Method;
  /** Path relative to the base URL (shown in errors and `--verbose`), or an absolute URL. */
  path: string;
  url: string;
  headers: Record<string, string>;
  body: string | Buffer | FormData | null;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  retries: number;
  deadline: number | undefined;
  mode: Mode;
  /** The body's model, for spans. */
  model: string | undefined;
}

/** One attempt's span: its id and when it started (Unix milliseconds). */
interface Attempt {
  spanId: string;
  startUnixMs: number;
}

/** An answer with a success status, its body not yet read; `timedOut` says whether the call's own limit fired. */
interface Answer {
  res: Dispatcher.ResponseData;
  /** The body decoded as its Content-Encoding says (downloads: as received). */
  body: Readable;
  requestId: string | undefined;
  attempt: number;
  started: number;
  timedOut: () => boolean;
  span: Attempt;
}

/** A 3xx to an API call: reported with where it points (only downloads follow redirects). */
function redirectError(
  s: { method: string; path: string },
  status: number,
  headers: Headers,
  requestId: string | undefined,
): GatewayError {
  const location = header(headers, 'location');
  return new GatewayError({
    status,
    headers,
    code: 'redirect',
    message: `${s.method} ${s.path}: the gateway answered ${status} redirect${location !== undefined ? ` to ${location}` : ' without a Location'}; redirects are not followed on API calls`,
    requestId,
    hint: 'the base URL is probably not the gateway itself (a trailing path, http instead of https, or an old host): use the address the redirect names',
  });
}

/** The body's model (`model`, or alpha's `model_name`), JSON or multipart, for spans. */
function modelOf(o: Pick<RequestOptions<unknown>, 'body' | 'form'>): string | undefined {
  const fromForm = o.form?.get('model');
  if (typeof fromForm === 'string') return fromForm;
  const b = o.body;
  if (b === null || typeof b !== 'object') return undefined;
  const m =
    (b as { model?: unknown; model_name?: unknown }).model ?? (b as { model_name?: unknown }).model_name;
  return typeof m === 'string' ? m : undefined;
}

/** A prepared request's headers as undici's flat [name, value, …] list, made once per prepared request. */
const flatCache = new WeakMap<PreparedRequest, string[]>();
function flatHeaders(p: PreparedRequest): string[] {
  let flat = flatCache.get(p);
  if (flat === undefined) {
    flat = Object.entries(p.options.headers).flat();
    flatCache.set(p, flat);
  }
  return flat;
}

/** When a stream's chunks (network reads with events) arrive: time to the first, gaps between the later ones. */
class StreamTiming {
  readonly #started: number;
  #last: number | undefined;
  #ttft: number | undefined;
  readonly #gaps: number[] = [];

  /** `started`: the request's start, in `now`'s time. */
  constructor(
    readonly now: () => number,
    started: number,
  ) {
    this.#started = started;
  }

  chunk(): void {
    const t = this.now();
    if (this.#last === undefined) this.#ttft = t - this.#started;
    else if (this.#gaps.length < MAX_SPAN_GAPS) this.#gaps.push(t - this.#last);
    this.#last = t;
  }

  span(): Pick<RequestSpan, 'ttftMs' | 'chunkGapsMs'> {
    return { ttftMs: this.#ttft, chunkGapsMs: this.#gaps };
  }
}

/**
 * The typed HTTP client of the gateway. Knows nothing of the CLI: it joins paths to the base URL by string
 * concatenation (a base path prefix is kept), sends the bearer token only to the gateway's own origin, surfaces
 * `X-Gateway-Request-Id` on every result and error, retries only GET/HEAD/DELETE (a retried POST could bill twice),
 * and maps every documented error shape to one GatewayError. Every call goes through one send path (`#send`) on
 * undici's public API: JSON answers, event streams and downloads alike.
 */
export class GatewayClient {
  readonly baseUrl: string;
  readonly validate: boolean;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher;
  readonly #redirecting: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #onExchange: ((x: Exchange) => void) | undefined;
  readonly #maxRetries: number;
  readonly #userAgent: string;
  readonly #maxResponseBytes: number;
  readonly #origin: string;
  readonly #options: GatewayClientOptions;
  readonly #trace: TraceContext;
  readonly #onSpan: ((s: RequestSpan) => void) | undefined;
  /** The extra headers, names in lower case (one value per name). */
  readonly #extra: Record<string, string>;

  constructor(o: GatewayClientOptions) {
    this.#options = o;
    this.baseUrl = normalizeBaseUrl(o.baseUrl);
    this.#origin = new URL(this.baseUrl).origin;
    this.validate = o.validate ?? true;
    this.#token = o.token;
    this.#timeoutMs = o.timeoutMs ?? 60_000;
    this.#ownsDispatcher = o.dispatcher === undefined;
    this.#dispatcher =
      o.dispatcher ??
      createDispatcher({
        connectTimeoutMs: this.#timeoutMs,
        ca: o.ca,
        env: o.proxyEnv,
        connections: o.connections,
      });
    this.#extra = Object.fromEntries(Object.entries(o.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    // Downloads follow redirects (a result on a CDN); undici's interceptor drops Authorization on a cross-origin
    // hop, gatewayOnly the trace header and the extra headers, and throwOnMaxRedirect (implemented, missing from
    // undici's types) makes a loop fail.
    this.#redirecting = this.#dispatcher.compose(
      gatewayOnly(this.#origin, ['traceparent', ...Object.keys(this.#extra)]),
      interceptors.redirect({ maxRedirections: 5, throwOnMaxRedirect: true } as { maxRedirections: number }),
    );
    this.#trace = o.trace ?? new TraceContext();
    this.#onSpan = o.onSpan;
    this.#sleep = o.sleep ?? realSleep;
    this.#random = o.random ?? Math.random;
    this.#now = o.now ?? Date.now;
    this.#onExchange = o.onExchange;
    this.#maxRetries = o.maxRetries ?? 2;
    this.#userAgent = o.userAgent ?? 'gw';
    this.#maxResponseBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** The per-request limit in milliseconds (see GatewayClientOptions.timeoutMs). */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * A client with the same settings and connection pool (closing it leaves the pool open) that also reports its
   * exchanges to `o.onExchange` (after this client's own observer) and validates as `o.validate` says. A caller
   * that must tell apart the exchanges of concurrent jobs (the probe's checks) gives each job its own.
   */
  derive(o: { onExchange?: (x: Exchange) => void; validate?: boolean }): GatewayClient {
    const own = this.#onExchange;
    const extra = o.onExchange;
    return new GatewayClient({
      ...this.#options,
      dispatcher: this.#dispatcher,
      trace: this.#trace,
      validate: o.validate ?? this.validate,
      onExchange:
        own !== undefined && extra !== undefined
          ? (x) => {
              own(x);
              extra(x);
            }
          : (extra ?? own),
    });
  }

  /** The origin (scheme, host, port) of the gateway. */
  get origin(): string {
    return this.#origin;
  }

  /** The trace this client's requests join. */
  get trace(): TraceContext {
    return this.#trace;
  }

  /** Closes the connection pool (only when the client created it). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /** Sends a JSON (or multipart) request and parses the JSON answer. */
  async request<T>(o: RequestOptions<T>): Promise<ApiResult<T>> {
    const s = this.#prepare(o, 'json');
    const a = await this.#send(s);
    const { res, requestId } = a;
    let text: string;
    try {
      text = await readText(a.body, this.#maxResponseBytes);
    } catch (e) {
      // An answer cut short (dropped, stalled past the timeout, too large) still names the exchange.
      this.#report(s, a, undefined, e);
      const mapped = this.#mapError(e, s, s.timeoutMs, requestId, a.timedOut());
      this.#endSpan(s, a.span, res.statusCode, requestId, { error: mapped });
      throw mapped;
    }
    this.#report(s, a, res.statusCode);
    let data: T;
    try {
      data = this.#parse(o, res.statusCode, text, requestId);
    } catch (e) {
      this.#endSpan(s, a.span, res.statusCode, requestId, { error: e });
      throw e;
    }
    if (this.#onSpan !== undefined) this.#endSpan(s, a.span, res.statusCode, requestId, usageOf(data));
    return { data, status: res.statusCode, requestId, headers: res.headers, text };
  }

  /**
   * Opens a server-sent-event stream. The timeout bounds the wait for the headers and the gap between events;
   * comments (`: keepalive`) are not events, so a stream of comments alone still times out.
   */
  async stream(o: Omit<RequestOptions<unknown>, 'schema'>): Promise<StreamResult> {
    const s = this.#prepare(o, 'stream');
    const a = await this.#send(s);
    const { res, requestId } = a;
    const headers = res.headers;
    this.#report(s, a, res.statusCode);
    const contentType = header(headers, 'content-type') ?? '';
    if (!contentType.includes('text/event-stream')) {
      const text = await readText(a.body, MAX_ERROR_BODY_BYTES, true).catch(() => '');
      const err = new ResponseShapeError(
        `expected an event stream, got ${contentType || 'no content type'}: ${text.slice(0, 120)}`,
        { status: res.statusCode, requestId },
      );
      this.#endSpan(s, a.span, res.statusCode, requestId, { error: err });
      throw err;
    }
    const body = a.body;
    let idle = false;
    const mapError = (e: unknown): unknown => this.#mapError(e, s, s.timeoutMs, requestId, idle);
    const timeoutMs = s.timeoutMs;
    const timing = this.#onSpan !== undefined ? new StreamTiming(this.#now, a.span.startUnixMs) : undefined;
    const ended = (error?: unknown): void =>
      this.#endSpan(s, a.span, res.statusCode, requestId, { error, ...timing?.span() });
    async function* batches(): AsyncGenerator<SseEvent[]> {
      let timer: NodeJS.Timeout | undefined;
      let failure: unknown;
      const arm = (): void => {
        timer = setTimeout(() => {
          idle = true;
          body.destroy(new Error('no event within the timeout'));
        }, timeoutMs);
      };
      try {
        arm();
        for await (const batch of decodeSseBatches(body)) {
          // The consumer's time (printing) is not the gateway's silence.
          clearTimeout(timer);
          timing?.chunk();
          yield batch;
          arm();
        }
      } catch (e) {
        failure = mapError(e);
        throw failure;
      } finally {
        clearTimeout(timer);
        body.destroy();
        ended(failure);
      }
    }
    const source = batches();
    async function* events(): AsyncGenerator<SseEvent> {
      for await (const batch of source) for (const ev of batch) yield ev;
    }
    return { status: res.statusCode, requestId, headers, events: events(), batches: source };
  }

  /**
   * Opens a binary answer for downloading, following redirects. The bearer token goes only to the gateway's
   * origin; undici's redirect interceptor drops Authorization when a redirect changes origin. The timeout bounds
   * the wait for the headers and each gap in the data.
   */
  async raw(o: {
    path: string;
    headers?: Record<string, string>;
    signal?: AbortSignal | undefined;
    timeoutMs?: number | undefined;
  }): Promise<RawResult> {
    const s = this.#prepare({ method: 'GET', ...o }, 'raw');
    const a = await this.#send(s);
    this.#report(s, a, a.res.statusCode);
    // The span ends with the headers: the body is the caller's to read (a download's time is its own).
    this.#endSpan(s, a.span, a.res.statusCode, a.requestId, {});
    return { status: a.res.statusCode, requestId: a.requestId, headers: a.res.headers, body: a.res.body };
  }

  /**
   * A call of any route as given (gw api): the body as bytes (JSON unless `headers` say otherwise), the answer's
   * status, headers and body unread, whatever its type. Same token rules, extra headers, retries (GET/HEAD/DELETE
   * only) and error mapping as every call; redirects are reported, not followed. The timeout bounds the wait for
   * the headers and each gap in the body, so an event stream may run as long as it keeps sending.
   */
  async call(o: {
    method: Method;
    path: string;
    query?: Query | undefined;
    body?: string | Buffer | undefined;
    headers?: Record<string, string> | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<CallResult> {
    // `body: null` asks #prepare for the JSON content type; the bytes themselves are sent as given.
    const s = this.#prepare({ ...o, body: o.body === undefined ? undefined : null }, 'call');
    s.body = o.body ?? null;
    const a = await this.#send(s);
    this.#report(s, a, a.res.statusCode);
    // As for downloads, the span ends with the headers: the body is printed at the caller's pace.
    this.#endSpan(s, a.span, a.res.statusCode, a.requestId, {});
    const { res, requestId } = a;
    const mapError = (e: unknown): unknown => this.#mapError(e, s, s.timeoutMs, requestId);
    async function* chunks(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of a.body) yield chunk as Buffer;
      } catch (e) {
        // A body cut or stalled mid-way names the call like any other failure.
        throw mapError(e);
      } finally {
        a.body.destroy();
      }
    }
    return { status: res.statusCode, requestId, headers: res.headers, chunks: chunks() };
  }

  /**
   * Builds a request for `dispatch`: the URL, the headers (the token on the gateway's origin only; `accept` for an
   * event stream or JSON), and the client's timeouts (the wait for the headers and each gap in the body).
   */
  prepare(o: {
    method: Method;
    path: string;
    query?: Query | undefined;
    /** True when the body sent with it is JSON. */
    json?: boolean | undefined;
    stream?: boolean | undefined;
  }): PreparedRequest {
    const s = this.#prepare(
      { method: o.method, path: o.path, query: o.query, body: o.json === true ? null : undefined },
      o.stream === true ? 'stream' : 'json',
    );
    const u = new URL(s.url);
    return {
      method: s.method,
      path: s.path,
      url: s.url,
      options: {
        origin: u.origin,
        path: `${u.pathname}${u.search}`,
        method: s.method,
        headers: s.headers,
        headersTimeout: s.timeoutMs,
        bodyTimeout: s.timeoutMs,
      },
    };
  }

  /**
   * Sends a prepared request through the client's dispatcher (the same connection pool, proxy, CAs and timeouts as
   * every call) and hands undici's callbacks to `handler` as they come, for a program that takes its own
   * timestamps as bytes arrive (a load generator). Nothing is retried, followed, parsed or reported to
   * `onExchange` or `onSpan`; the handler turns what it got into errors with `answerError` and `failure`. Returns
   * the span id of the request's `traceparent` (a new one per request).
   */
  dispatch(p: PreparedRequest, body: Buffer | string | null, handler: Dispatcher.DispatchHandler): string {
    const o = p.options;
    const spanId = this.#trace.spanId();
    // Spelled out: `{ ...p.options, body }` made V8 build each request's options as a slow object, and undici's
    // reads of it cost a sixth of gw load's requests per second (measured on tiny requests at 64 connections).
    // The headers go as undici's flat list: the prepared ones and this request's traceparent (prepare() builds
    // requests for the gateway's origin only).
    this.#dispatcher.dispatch(
      {
        origin: o.origin,
        path: o.path,
        method: o.method,
        headers: [...flatHeaders(p), 'traceparent', this.#trace.header(spanId)],
        headersTimeout: o.headersTimeout,
        bodyTimeout: o.bodyTimeout,
        body,
      },
      handler,
    );
    return spanId;
  }

  /** The error of a dispatch that got no complete answer (refused, TLS, proxy, timeout): the client's mapping. */
  failure(p: PreparedRequest, e: unknown, requestId?: string): GatewayError {
    return this.#mapError(
      e,
      { ...p, signal: undefined },
      p.options.headersTimeout,
      requestId,
    ) as GatewayError;
  }

  /** The error of an answer that is not a success: a redirect (never followed on API calls), or the error body's. */
  answerError(p: PreparedRequest, status: number, text: string, headers: Headers): GatewayError {
    const requestId = header(headers, REQUEST_ID);
    if (status >= 300 && status < 400) return redirectError(p, status, headers, requestId);
    return errorFromBody(status, text, requestId, headers);
  }

  #prepare(o: Omit<RequestOptions<unknown>, 'schema'>, mode: Mode): Send {
    const url = mode === 'raw' && /^https?:\/\//.test(o.path) ? o.path : this.#url(o.path, o.query);
    return {
      method: o.method,
      path: o.path,
      url,
      headers: { ...this.#headers(url, o, mode), ...o.headers },
      body: o.form ?? (o.body === undefined ? null : JSON.stringify(o.body)),
      signal: o.signal,
      timeoutMs: o.timeoutMs ?? this.#timeoutMs,
      retries: RETRY_METHODS.has(o.method) ? (o.retries ?? this.#maxRetries) : 0,
      deadline: o.deadline,
      mode,
      model: this.#onSpan !== undefined ? modelOf(o) : undefined,
    };
  }

  /**
   * The one send path: sends, retries what may be retried (GET/HEAD/DELETE on 408/429/5xx and dropped or
   * refused connections, honouring Retry-After within MAX_RETRY_AFTER_MS and the caller's deadline, otherwise
   * capped exponential backoff with jitter), and turns an error status into a GatewayError. Returns an answer
   * with a success status whose body the caller reads.
   */
  async #send(s: Send): Promise<Answer> {
    const u = new URL(s.url);
    const dispatcher = s.mode === 'raw' ? this.#redirecting : this.#dispatcher;
    const traced = this.#sameOrigin(s.url);
    for (let attempt = 0; ; attempt++) {
      const started = this.#now();
      // Each attempt is a request of its own: its own span, its own traceparent.
      const span: Attempt = { spanId: this.#trace.spanId(), startUnixMs: started };
      // A traceparent given with --header-override is the user's to send.
      if (traced && this.#extra.traceparent === undefined)
        s.headers.traceparent = this.#trace.header(span.spanId);
      // JSON calls: the timeout bounds the whole answer. Streams and downloads: the wait for headers and each gap.
      const guard = s.mode === 'json' ? deadline(s.signal, s.timeoutMs) : undefined;
      const signal = guard?.signal ?? s.signal;
      const timedOut = (): boolean => guard?.timedOut() === true;
      let res: Dispatcher.ResponseData;
      try {
        res = await dispatcher.request({
          origin: u.origin,
          path: `${u.pathname}${u.search}`,
          method: s.method,
          headers: s.headers,
          body: s.body,
          signal,
          headersTimeout: s.timeoutMs,
          bodyTimeout: s.timeoutMs,
          // Downloads: larger reads mean fewer trips through the stream machinery.
          ...(s.mode === 'raw' ? { highWaterMark: 1024 * 1024 } : {}),
        });
      } catch (e) {
        const late = timedOut();
        this.#report(s, { attempt, started, requestId: undefined }, undefined, e);
        const mapped = this.#mapError(e, s, s.timeoutMs, undefined, late);
        const code = (e as { code?: unknown }).code;
        const again =
          mapped instanceof ConnectionError && typeof code === 'string' && RETRY_CONNECT_CODES.has(code);
        this.#endSpan(s, span, undefined, undefined, { error: mapped });
        if (again && attempt < s.retries) {
          const wait = backoffDelay(attempt, { initialMs: 500, maxMs: 30_000, random: this.#random });
          if (this.#fits(s, wait)) {
            await this.#pause(wait, s.signal);
            continue;
          }
        }
        throw mapped;
      }
      const requestId = header(res.headers, REQUEST_ID);
      const status = res.statusCode;
      if (status >= 300 && status < 400) {
        // Only downloads follow redirects (the interceptor did, or gave up): a JSON route or stream that moved
        // is reported as such, with where it points, instead of as an odd answer.
        await res.body.dump().catch(() => undefined);
        this.#report(s, { attempt, started, requestId }, status);
        const err = redirectError(s, status, res.headers, requestId);
        this.#endSpan(s, span, status, requestId, { error: err });
        throw err;
      }
      const encoding = header(res.headers, 'content-encoding');
      // Downloads are saved as sent (a file's bytes, resumed by range); every other answer is read decoded.
      const body = s.mode === 'raw' ? res.body : decodedBody(res.body, encoding);
      if (body === undefined) {
        await res.body.dump().catch(() => undefined);
        this.#report(s, { attempt, started, requestId }, status);
        const err = new ResponseShapeError(
          `${s.method} ${s.path}: the answer is encoded as "${encoding ?? ''}", which gw cannot decode (gzip, deflate, br)`,
          { status, requestId, code: 'unsupported_encoding' },
        );
        this.#endSpan(s, span, status, requestId, { error: err });
        throw err;
      }
      if (status >= 400) {
        const text = await readText(body, MAX_ERROR_BODY_BYTES, true).catch(() => '');
        this.#report(s, { attempt, started, requestId }, status);
        const retryAfter = parseRetryAfter(res.headers, this.#now);
        const err = errorFromBody(status, text, requestId, res.headers);
        this.#endSpan(s, span, status, requestId, { error: err });
        if (attempt < s.retries && RETRY_STATUS.has(status)) {
          const wait =
            retryAfter ?? backoffDelay(attempt, { initialMs: 500, maxMs: 30_000, random: this.#random });
          if (wait <= MAX_RETRY_AFTER_MS && this.#fits(s, wait)) {
            await this.#pause(wait, s.signal);
            continue;
          }
        }
        if (retryAfter !== undefined) err.retryAfterMs = Math.min(retryAfter, MAX_REPORTED_RETRY_AFTER_MS);
        throw err;
      }
      return { res, body, requestId, attempt, started, timedOut, span };
    }
  }

  /** True when a wait of `ms` still ends before the caller's deadline. */
  #fits(s: Send, ms: number): boolean {
    return s.deadline === undefined || this.#now() + ms < s.deadline;
  }

  async #pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.#sleep(ms, signal);
    } catch (e) {
      if (signal?.aborted === true || isAbortError(e)) throw new UserAbortError();
      throw e;
    }
  }

  #url(path: string, query: Query | undefined): string {
    return this.baseUrl + (path.startsWith('/') ? path : `/${path}`) + buildQuery(query);
  }

  /**
   * The client's headers for `url`: user agent, what answer it reads, the body's type; on the gateway's own origin
   * only, the token and then the extra headers (a result URL on a CDN never sees them).
   */
  #headers(
    url: string,
    o: Pick<RequestOptions<unknown>, 'body' | 'form'>,
    mode: Mode,
  ): Record<string, string> {
    const accept = mode === 'stream' ? 'text/event-stream' : mode === 'json' ? 'application/json' : '*/*';
    const h: Record<string, string> = { 'user-agent': this.#userAgent, accept };
    if (o.body !== undefined && o.form === undefined) h['content-type'] = 'application/json';
    if (!this.#sameOrigin(url)) return h;
    if (this.#token !== undefined && this.#token.length > 0) h.authorization = `Bearer ${this.#token}`;
    return Object.assign(h, this.#extra);
  }

  /** True when `url` is on the gateway's origin (most are built from the base URL: no parse needed for those). */
  #sameOrigin(url: string): boolean {
    const o = this.#origin;
    // The origin followed by "/" can only be that origin (not `origin@other`, not a longer port).
    if (url.startsWith(o) && url.charCodeAt(o.length) === 47) return true;
    return new URL(url).origin === o;
  }

  #mapError(
    e: unknown,
    o: Pick<Send, 'method' | 'path' | 'signal' | 'url'>,
    timeoutMs: number,
    requestId?: string,
    timedOut = false,
  ): unknown {
    if (e instanceof GatewayError) return e;
    const code = (e as { code?: unknown }).code;
    const what = `${o.method} ${o.path}`;
    if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new TimeoutError(`${what}: no answer within ${formatSeconds(timeoutMs)}`, {
        requestId,
        cause: e,
      });
    }
    if (o.signal?.aborted === true || isAbortError(e)) return new UserAbortError();
    if (e instanceof BodyTooLargeError) {
      return new ResponseShapeError(`${what}: ${e.message}; the client refuses to read it into memory`, {
        status: 200,
        requestId,
        code: 'response_too_large',
      });
    }
    if (e instanceof SseLineTooLongError) {
      return new ResponseShapeError(
        `${what}: ${e.message} (${formatBytes(e.limit)} at most); the stream was stopped`,
        { status: 200, requestId, code: 'response_too_large' },
      );
    }
    if (code === 'UND_ERR_REQ_RETRY' || (e instanceof Error && /redirect/i.test(e.message))) {
      // undici's own text advises on Client/Pool internals; say what happened instead.
      const to = e instanceof Error ? /redirect to (\S+?)\.?(?:\s|$)/i.exec(e.message)?.[1] : undefined;
      return new ConnectionError(
        `${what}: too many redirects (a redirect loop${to !== undefined ? ` at ${to}` : ''})`,
        { requestId, cause: e },
      );
    }
    const net = describeNetworkError(e, new URL(o.url).host);
    if (net.code === 'timeout') return new TimeoutError(`${what}: ${net.message}`, { requestId, cause: e });
    // With a request id the answer had begun: the connection was lost in the middle of it.
    const message =
      requestId !== undefined && net.code === 'connection_error'
        ? `${what}: the connection dropped mid-answer: ${net.message}`
        : `${what}: ${net.message}`;
    return new ConnectionError(message, {
      code: net.code,
      host: net.host,
      tls: net.tls,
      requestId,
      cause: e,
    });
  }

  #parse<T>(o: RequestOptions<T>, status: number, text: string, requestId: string | undefined): T {
    let json: unknown;
    try {
      json = text.length === 0 ? {} : JSON.parse(text);
    } catch (e) {
      throw new ResponseShapeError(
        `${o.method} ${o.path}: the answer is not valid JSON: ${text.slice(0, 80)}`,
        {
          status,
          requestId,
          cause: e,
        },
      );
    }
    if (o.schema === undefined) return json as T;
    const parsed = o.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue !== undefined && issue.path.length > 0 ? issue.path.join('.') : 'body';
      throw new ResponseShapeError(
        `${o.method} ${o.path}: unexpected answer at ${where}: ${issue?.message ?? 'invalid'}`,
        { status, requestId },
      );
    }
    return parsed.data;
  }

  /** Tells `onSpan` that an attempt ended: answered (with what it measured) or failed with `error`. */
  #endSpan(
    s: Send,
    a: Attempt,
    status: number | undefined,
    requestId: string | undefined,
    extra: Pick<
      RequestSpan,
      'ttftMs' | 'chunkGapsMs' | 'inputTokens' | 'cachedInputTokens' | 'outputTokens'
    > & { error?: unknown },
  ): void {
    if (this.#onSpan === undefined) return;
    const { error, ...measured } = extra;
    const own = s.url.startsWith(this.baseUrl);
    const path = (own ? s.url.slice(this.baseUrl.length) : new URL(s.url).pathname).replace(/\?.*$/, '');
    const code = error instanceof GatewayError ? error.code : error !== undefined ? 'error' : undefined;
    this.#onSpan({
      traceId: this.#trace.traceId,
      spanId: a.spanId,
      method: s.method,
      path,
      origin: own ? this.#origin : new URL(s.url).origin,
      startUnixMs: a.startUnixMs,
      durationMs: this.#now() - a.startUnixMs,
      status,
      requestId,
      errorCode: code,
      model: s.model,
      ...measured,
    });
  }

  #report(
    s: Send,
    a: Pick<Answer, 'attempt' | 'started' | 'requestId'>,
    status: number | undefined,
    error?: unknown,
  ): void {
    if (this.#onExchange === undefined) return;
    const path = s.url.startsWith(this.baseUrl)
      ? s.url.slice(this.baseUrl.length)
      : s.url.replace(/\?.*$/, '');
    const x: Exchange = {
      method: s.method,
      path,
      status,
      ms: this.#now() - a.started,
      requestId: a.requestId,
      attempt: a.attempt,
    };
    if (error !== undefined) x.error = error instanceof Error ? error.message : JSON.stringify(error);
    this.#onExchange(x);
  }
}

export { GatewayError };
