import type { Dispatcher, FormData } from 'undici';
import type { z } from 'zod';
import { GwError, InterruptedError, TimeoutError, isAbortError } from '../core/errors.js';
import { backoffDelay, parseRetryAfter, sleep as realSleep } from './backoff.js';
import { ConnectionError, GatewayError, ResponseShapeError, errorFromBody } from './errors.js';
import { decodeSseBatches, type SseEvent } from './sse.js';
import { Agent, redirect, request } from './undici-lite.js';

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
}

/** HTTP methods the gateway uses. */
export type Method = 'GET' | 'POST' | 'DELETE' | 'HEAD';

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
}

/** A parsed answer with the gateway request id. */
export interface ApiResult<T> {
  data: T;
  status: number;
  requestId: string | undefined;
  headers: Record<string, string | string[] | undefined>;
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

/** An open binary answer (downloads). The caller must consume or destroy `body`. */
export interface RawResult {
  status: number;
  requestId: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /**
   * Gives a body chunk's memory back once it is written out (downloads reuse read buffers; optional, and a no-op
   * for anything but a chunk exactly as `body` yielded it).
   */
  release?: (chunk: Buffer) => void;
  /** undici's body: a Node Readable with `.text()`, `.json()`, `.dump()`. */
  body: Dispatcher.ResponseData['body'];
}

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const RETRY_METHODS = new Set<Method>(['GET', 'HEAD', 'DELETE']);
const REQUEST_ID = 'x-gateway-request-id';

function header(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
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
 * undici's redirect interceptor as downloads use it: at most 5 hops. throwOnMaxRedirect is implemented by undici 7
 * but missing from its types: a redirect loop must fail, not hand back the last 3xx.
 */
function followRedirects(): Dispatcher.DispatcherComposeInterceptor {
  return redirect({ maxRedirections: 5, throwOnMaxRedirect: true } as { maxRedirections: number });
}

/**
 * The typed HTTP client of the gateway. Knows nothing of the CLI: it joins paths to the base URL by string
 * concatenation (a base path prefix is kept), sends the bearer token only to the gateway's own origin, surfaces
 * `X-Gateway-Request-Id` on every result and error, retries only GET/HEAD/DELETE (a retried POST could bill twice),
 * and maps every documented error shape to one GatewayError.
 */
export class GatewayClient {
  readonly baseUrl: string;
  readonly validate: boolean;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher;
  readonly #redirecting: Dispatcher;
  #bulk: { dispatcher: Dispatcher; release: (chunk: Buffer) => void } | undefined;
  readonly #ownsDispatcher: boolean;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #onExchange: ((x: Exchange) => void) | undefined;
  readonly #maxRetries: number;
  readonly #userAgent: string;

  constructor(o: GatewayClientOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.validate = o.validate ?? true;
    this.#token = o.token;
    this.#timeoutMs = o.timeoutMs ?? 60_000;
    this.#ownsDispatcher = o.dispatcher === undefined;
    this.#dispatcher =
      o.dispatcher ?? new Agent({ keepAliveTimeout: 4_000, connect: { timeout: this.#timeoutMs } });
    this.#redirecting = this.#dispatcher.compose(followRedirects());
    this.#sleep = o.sleep ?? realSleep;
    this.#random = o.random ?? Math.random;
    this.#now = o.now ?? Date.now;
    this.#onExchange = o.onExchange;
    this.#maxRetries = o.maxRetries ?? 2;
    this.#userAgent = o.userAgent ?? 'gw';
  }

  /** The origin (scheme, host, port) of the gateway. */
  get origin(): string {
    return new URL(this.baseUrl).origin;
  }

  /** Closes the connection pool (only when the client created it). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /**
   * The dispatcher of downloads: gw's BulkDispatcher (large reads, see bulk-dispatcher.ts) under undici's redirect
   * interceptor, or the injected dispatcher (tests' MockAgent) when there is one.
   */
  async #downloads(): Promise<{ dispatcher: Dispatcher; release?: (chunk: Buffer) => void }> {
    if (!this.#ownsDispatcher) return { dispatcher: this.#redirecting };
    if (this.#bulk === undefined) {
      const { BulkDispatcher } = await import('./bulk-dispatcher.js');
      const bulk = new BulkDispatcher({ connectTimeoutMs: this.#timeoutMs });
      this.#bulk = {
        dispatcher: bulk.compose(followRedirects()),
        release: (chunk) => bulk.release(chunk),
      };
    }
    return this.#bulk;
  }

  /** Sends a JSON (or multipart) request and parses the JSON answer. */
  async request<T>(o: RequestOptions<T>): Promise<ApiResult<T>> {
    const retryable = RETRY_METHODS.has(o.method);
    const maxRetries = o.retries ?? this.#maxRetries;
    for (let attempt = 0; ; attempt++) {
      let res: { status: number; headers: Record<string, string | string[] | undefined>; text: string };
      try {
        res = await this.#once(o, attempt);
      } catch (e) {
        if (retryable && attempt < maxRetries && e instanceof ConnectionError) {
          await this.#sleep(
            backoffDelay(attempt, { initialMs: 500, maxMs: 30_000, random: this.#random }),
            o.signal,
          );
          continue;
        }
        throw e;
      }
      const requestId = header(res.headers, REQUEST_ID);
      if (res.status >= 400) {
        if (retryable && attempt < maxRetries && RETRY_STATUS.has(res.status)) {
          const wait =
            parseRetryAfter(res.headers, this.#now) ??
            backoffDelay(attempt, { initialMs: 500, maxMs: 30_000, random: this.#random });
          await this.#sleep(Math.min(wait, 60_000), o.signal);
          continue;
        }
        throw withRetryAfter(errorFromBody(res.status, res.text, requestId), res.headers, this.#now);
      }
      return {
        data: this.#parse(o, res.status, res.text, requestId),
        status: res.status,
        requestId,
        headers: res.headers,
      };
    }
  }

  /** Opens a server-sent-event stream (never retried: a stream may already have produced billed output). */
  async stream(o: Omit<RequestOptions<unknown>, 'schema'>): Promise<StreamResult> {
    const started = this.#now();
    const url = this.#url(o.path, o.query);
    const timeoutMs = o.timeoutMs ?? this.#timeoutMs;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        dispatcher: this.#dispatcher,
        method: o.method,
        headers: { ...this.#headers(url, o), accept: 'text/event-stream' },
        body: o.form ?? (o.body === undefined ? null : JSON.stringify(o.body)),
        signal: o.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (e) {
      this.#report(o, url, undefined, started, undefined, 0, e);
      throw this.#mapError(e, o, timeoutMs);
    }
    const headers = res.headers;
    const requestId = header(headers, REQUEST_ID);
    this.#report(o, url, res.statusCode, started, requestId, 0);
    if (res.statusCode >= 400) {
      const text = await res.body.text().catch(() => '');
      throw errorFromBody(res.statusCode, text, requestId);
    }
    const contentType = header(headers, 'content-type') ?? '';
    if (!contentType.includes('text/event-stream')) {
      const text = await res.body.text().catch(() => '');
      throw new ResponseShapeError(
        `expected an event stream, got ${contentType || 'no content type'}: ${text.slice(0, 120)}`,
        {
          status: res.statusCode,
          requestId,
        },
      );
    }
    const body = res.body;
    const mapError = (e: unknown): unknown => this.#mapError(e, o, timeoutMs, requestId);
    async function* batches(): AsyncGenerator<SseEvent[]> {
      try {
        for await (const batch of decodeSseBatches(body)) yield batch;
      } catch (e) {
        throw mapError(e);
      } finally {
        body.destroy();
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
   * origin; undici's redirect interceptor drops Authorization when a redirect changes origin.
   */
  async raw(o: {
    path: string;
    headers?: Record<string, string>;
    signal?: AbortSignal | undefined;
    timeoutMs?: number | undefined;
  }): Promise<RawResult> {
    const started = this.#now();
    const url = /^https?:\/\//.test(o.path) ? o.path : this.#url(o.path, undefined);
    const timeoutMs = o.timeoutMs ?? this.#timeoutMs;
    const req = { method: 'GET' as const, path: o.path };
    const { dispatcher, release } = await this.#downloads();
    for (let attempt = 0; ; attempt++) {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          dispatcher,
          method: 'GET',
          headers: { ...this.#headers(url, { method: 'GET', path: o.path }), accept: '*/*', ...o.headers },
          signal: o.signal,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
      } catch (e) {
        this.#report(req, url, undefined, started, undefined, attempt, e);
        const mapped = this.#mapError(e, req, timeoutMs);
        if (mapped instanceof ConnectionError && attempt < this.#maxRetries) {
          await this.#sleep(
            backoffDelay(attempt, { initialMs: 500, maxMs: 30_000, random: this.#random }),
            o.signal,
          );
          continue;
        }
        throw mapped;
      }
      const requestId = header(res.headers, REQUEST_ID);
      this.#report(req, url, res.statusCode, started, requestId, attempt);
      if (res.statusCode >= 400) {
        const text = await res.body.text().catch(() => '');
        if (attempt < this.#maxRetries && RETRY_STATUS.has(res.statusCode)) {
          const wait =
            parseRetryAfter(res.headers, this.#now) ??
            backoffDelay(attempt, { initialMs: 500, maxMs: 30_000, random: this.#random });
          await this.#sleep(Math.min(wait, 60_000), o.signal);
          continue;
        }
        throw withRetryAfter(errorFromBody(res.statusCode, text, requestId), res.headers, this.#now);
      }
      return {
        status: res.statusCode,
        requestId,
        headers: res.headers,
        body: res.body,
        ...(release !== undefined ? { release } : {}),
      };
    }
  }

  #url(path: string, query: Query | undefined): string {
    return this.baseUrl + (path.startsWith('/') ? path : `/${path}`) + buildQuery(query);
  }

  #headers(
    url: string,
    o: Pick<RequestOptions<unknown>, 'method' | 'path' | 'body' | 'form' | 'headers'>,
  ): Record<string, string> {
    const h: Record<string, string> = { 'user-agent': this.#userAgent, accept: 'application/json' };
    // The token goes to the gateway's own origin only (a result URL on a CDN never sees it).
    if (this.#token !== undefined && this.#token.length > 0 && new URL(url).origin === this.origin) {
      h.authorization = `Bearer ${this.#token}`;
    }
    if (o.body !== undefined && o.form === undefined) h['content-type'] = 'application/json';
    return { ...h, ...o.headers };
  }

  async #once(
    o: RequestOptions<unknown>,
    attempt: number,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
    const started = this.#now();
    const url = this.#url(o.path, o.query);
    const timeoutMs = o.timeoutMs ?? this.#timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = o.signal !== undefined ? AbortSignal.any([o.signal, timeout]) : timeout;
    let requestId: string | undefined;
    try {
      const res = await request(url, {
        dispatcher: this.#dispatcher,
        method: o.method,
        headers: this.#headers(url, o),
        body: o.form ?? (o.body === undefined ? null : JSON.stringify(o.body)),
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      requestId = header(res.headers, REQUEST_ID);
      const text = await res.body.text();
      this.#report(o, url, res.statusCode, started, requestId, attempt);
      return { status: res.statusCode, headers: res.headers, text };
    } catch (e) {
      // An answer cut short (dropped, or stalled past the timeout) after its headers still names the exchange.
      this.#report(o, url, undefined, started, requestId, attempt, e);
      throw this.#mapError(e, o, timeoutMs, requestId, timeout.aborted && o.signal?.aborted !== true);
    }
  }

  #mapError(
    e: unknown,
    o: Pick<RequestOptions<unknown>, 'method' | 'path' | 'signal'>,
    timeoutMs: number,
    requestId?: string,
    timedOut = false,
  ): unknown {
    if (e instanceof GwError) return e;
    const code = (e as { code?: unknown }).code;
    const what = `${o.method} ${o.path}`;
    if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new TimeoutError(`${what}: no answer within ${Math.round(timeoutMs / 1000)}s (--timeout)`, {
        requestId,
        hint: 'raise --timeout (e.g. --timeout 2m) or check the gateway',
      });
    }
    if (o.signal?.aborted === true || isAbortError(e)) return new InterruptedError();
    if (code === 'UND_ERR_REQ_RETRY' || (e instanceof Error && /redirect/i.test(e.message))) {
      // undici's own text advises on Client/Pool internals; say what happened instead.
      const to = e instanceof Error ? /redirect to (\S+?)\.?(?:\s|$)/i.exec(e.message)?.[1] : undefined;
      return new ConnectionError(
        `${what}: too many redirects (a redirect loop${to !== undefined ? ` at ${to}` : ''})`,
        { requestId, cause: e },
      );
    }
    const msg = e instanceof Error ? e.message : String(e);
    // With a request id the answer had begun: the connection was lost in the middle of it.
    const what2 = requestId !== undefined ? 'the connection dropped mid-answer' : 'connection failed';
    return new ConnectionError(`${what}: ${what2}: ${msg}${typeof code === 'string' ? ` (${code})` : ''}`, {
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
        {
          status,
          requestId,
        },
      );
    }
    return parsed.data;
  }

  #report(
    o: Pick<RequestOptions<unknown>, 'method' | 'path'>,
    url: string,
    status: number | undefined,
    started: number,
    requestId: string | undefined,
    attempt: number,
    error?: unknown,
  ): void {
    if (this.#onExchange === undefined) return;
    const rel = url.startsWith(this.baseUrl) ? url.slice(this.baseUrl.length) : url.replace(/\?.*$/, '');
    const x: Exchange = {
      method: o.method,
      path: rel,
      status,
      ms: this.#now() - started,
      requestId,
      attempt,
    };
    if (error !== undefined) x.error = error instanceof Error ? error.message : JSON.stringify(error);
    this.#onExchange(x);
  }
}

function withRetryAfter(
  e: GatewayError,
  headers: Record<string, string | string[] | undefined>,
  now: () => number,
): GatewayError {
  const ms = parseRetryAfter(headers, now);
  if (ms !== undefined) e.retryAfterMs = ms;
  return e;
}

export { GatewayError };
