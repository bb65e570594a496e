/**
 * An undici Dispatcher for large GET answers (video and result-file downloads), built for throughput.
 *
 * undici's own Client reads the socket in 64 KiB slices (libuv's read size) and hands every slice through its
 * wasm HTTP parser and a Readable: about 40 µs of JavaScript per slice, 16 384 slices per GiB, which caps a
 * loopback download at ~0.4× curl (issue 9). This dispatcher reads with `net`'s `onread` into 2 MiB slabs, so a
 * GiB arrives in a few hundred reads that go straight to undici's handler without a copy.
 *
 * It plugs in under undici's own API: `request()` builds the body Readable, the redirect interceptor follows
 * Location (and drops Authorization across origins), the caller's timeouts and AbortSignal apply. It speaks
 * only what a download needs: one GET or HEAD per connection (`Connection: close`), HTTP/1.1 over TCP or TLS,
 * bodies framed by Content-Length, chunked transfer coding, or the connection's end. Errors carry undici's
 * codes (UND_ERR_SOCKET, UND_ERR_HEADERS_TIMEOUT, UND_ERR_BODY_TIMEOUT …) so callers map them the same way.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Dispatcher } from 'undici';
import WrapHandler from 'undici/lib/handler/wrap-handler.js';
import { DispatcherBase } from './undici-lite.js';

/** Bytes per read slab: a read fills at most what is left of the current slab. */
const SLAB = 2 * 1024 * 1024;
/** A new slab is started when less than this is left of the current one. */
const MIN_READ = 256 * 1024;
/** Released slabs kept for reuse. */
const FREE_SLABS = 8;
/** Largest response head (status line and headers) accepted. */
const MAX_HEAD = 64 * 1024;
/** Longest chunk-size or trailer line accepted in a chunked body. */
const MAX_LINE = 4096;

/** An error with one of undici's codes, so code that handles undici errors handles these too. */
export class BulkError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'BulkError';
  }
}

type Headers = Record<string, string | string[]>;

/** A parsed response head. */
export interface ResponseHead {
  statusCode: number;
  statusMessage: string;
  headers: Headers;
}

/**
 * Parses a response head (without its terminating blank line): `HTTP/1.x NNN reason` and `name: value` lines.
 * Names are lower-cased; a repeated name gives an array. Throws a BulkError on anything malformed.
 */
export function parseHead(text: string): ResponseHead {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
  if (!m)
    throw new BulkError(
      `malformed status line: ${JSON.stringify(lines[0]?.slice(0, 80))}`,
      'HPE_INVALID_STATUS',
    );
  const headers: Headers = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    // RFC 9112 §5: no whitespace before the colon; obsolete line folding is refused.
    if (colon <= 0 || /[\s]/.test(line.slice(0, colon))) {
      throw new BulkError(
        `malformed header line: ${JSON.stringify(line.slice(0, 80))}`,
        'HPE_INVALID_HEADER_TOKEN',
      );
    }
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    const prev = headers[name];
    if (prev === undefined) headers[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else headers[name] = [prev, value];
  }
  return { statusCode: Number(m[1]), statusMessage: m[2] ?? '', headers };
}

function single(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * Decodes the chunked transfer coding (RFC 9112 §7.1) across arbitrary slices of input. Data slices are views
 * of the input (no copy); chunk extensions and trailers are read and dropped.
 */
export class ChunkedDecoder {
  #state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  #line = '';
  #left = 0;

  /** True once the last chunk and the trailer section were read. */
  get done(): boolean {
    return this.#state === 'done';
  }

  /** Feeds bytes; returns the body data they carried and how many input bytes were used (the rest follows the body). */
  push(buf: Buffer): { data: Buffer[]; used: number } {
    const data: Buffer[] = [];
    let i = 0;
    while (i < buf.length && this.#state !== 'done') {
      if (this.#state === 'data') {
        const n = Math.min(this.#left, buf.length - i);
        data.push(buf.subarray(i, i + n));
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#state = 'data-end';
        continue;
      }
      // Line states: read up to LF.
      const nl = buf.indexOf(10, i);
      const end = nl === -1 ? buf.length : nl;
      this.#line += buf.toString('latin1', i, end);
      if (this.#line.length > MAX_LINE)
        throw new BulkError('chunked body: line too long', 'HPE_CHUNK_EXTENSIONS_OVERFLOW');
      i = end;
      if (nl === -1) break;
      i = nl + 1;
      const line = this.#line.endsWith('\r') ? this.#line.slice(0, -1) : this.#line;
      this.#line = '';
      if (this.#state === 'data-end') {
        if (line !== '') throw new BulkError('chunked body: missing CRLF after chunk data', 'HPE_STRICT');
        this.#state = 'size';
      } else if (this.#state === 'size') {
        const m = /^([0-9a-fA-F]{1,15})[ \t]*(?:;.*)?$/.exec(line);
        if (!m)
          throw new BulkError(
            `chunked body: bad chunk size ${JSON.stringify(line.slice(0, 40))}`,
            'HPE_INVALID_CHUNK_SIZE',
          );
        this.#left = parseInt(m[1] ?? '0', 16);
        this.#state = this.#left === 0 ? 'trailer' : 'data';
      } else if (line === '') {
        this.#state = 'done';
      }
    }
    return { data, used: i };
  }
}

/** Options of a BulkDispatcher. */
export interface BulkDispatcherOptions {
  /** Limit for the TCP (and TLS) connection to be established. */
  connectTimeoutMs?: number | undefined;
  /** Used when a request carries none: time to the response head, and the longest silence within the body. */
  headersTimeoutMs?: number | undefined;
  bodyTimeoutMs?: number | undefined;
  /** Extra certificate authorities to trust for https (like undici's `connect.ca`; NODE_EXTRA_CA_CERTS also works). */
  ca?: string | Buffer | undefined;
}

/** A read slab: its memory and the views of it handed out and not yet given back. */
interface Slab {
  buf: Buffer;
  /** byteOffset → length of each view lent to the handler. */
  lent: Map<number, number>;
  /** Still being filled by reads (never reused while current). */
  current: boolean;
}

/**
 * Read memory. Slabs are allocated once and reused when the consumer gives their views back (`release`), so a
 * long download runs in a handful of slabs instead of allocating (and garbage-collecting) a GiB of them. A
 * consumer that never releases is safe: its slabs are simply not reused and the garbage collector frees them.
 */
export class SlabPool {
  readonly #free: Slab[] = [];
  readonly #byMemory = new WeakMap<ArrayBufferLike, Slab>();

  /** A slab to fill. */
  take(): Slab {
    const slab = this.#free.pop() ?? { buf: Buffer.allocUnsafe(SLAB), lent: new Map(), current: true };
    slab.current = true;
    this.#byMemory.set(slab.buf.buffer, slab);
    return slab;
  }

  /** Records a view lent to the consumer. */
  lend(slab: Slab, view: Buffer): void {
    slab.lent.set(view.byteOffset, view.length);
  }

  /** The slab is full (or its exchange ended): reusable as soon as every lent view is back. */
  retire(slab: Slab): void {
    slab.current = false;
    this.#recycle(slab);
  }

  /**
   * The consumer is done with `view` (written to disk). Only a view exactly as lent counts; anything else (a copy,
   * a concatenation, a sub-slice) is ignored, so a wrong call can never free memory still in use.
   */
  release(view: Buffer): void {
    const slab = this.#byMemory.get(view.buffer);
    if (slab === undefined || slab.lent.get(view.byteOffset) !== view.length) return;
    slab.lent.delete(view.byteOffset);
    this.#recycle(slab);
  }

  #recycle(slab: Slab): void {
    if (slab.current || slab.lent.size > 0) return;
    this.#byMemory.delete(slab.buf.buffer);
    if (this.#free.length < FREE_SLABS) this.#free.push(slab);
  }
}

/** The dispatcher's defaults, resolved. */
interface Limits {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  ca: string | Buffer | undefined;
}

type Handler = Dispatcher.DispatchHandler;
type Controller = Dispatcher.DispatchController;

/** The controller handed to undici's handler: pause, resume and abort one exchange. */
class Control implements Controller {
  constructor(private readonly x: Exchange) {}
  get aborted(): boolean {
    return this.x.aborted;
  }
  get paused(): boolean {
    return this.x.paused;
  }
  get reason(): Error | null {
    return this.x.reason;
  }
  pause(): void {
    this.x.pause();
  }
  resume(): void {
    this.x.resume();
  }
  abort(reason: Error): void {
    this.x.abort(reason);
  }
}

/** Serialises request headers (object or flat array form), refusing CR, LF and NUL in names and values. */
function headerLines(headers: Dispatcher.DispatchOptions['headers']): string[] {
  const pairs: Array<[string, string]> = [];
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([String(headers[i]), String(headers[i + 1])]);
  } else if (headers != null && typeof headers === 'object') {
    for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
      if (v === undefined || v === null) continue;
      for (const one of Array.isArray(v) ? v : [v]) pairs.push([k, String(one)]);
    }
  }
  const out: string[] = [];
  for (const [k, v] of pairs) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) || /[\r\n\0]/.test(v)) {
      throw new BulkError(`invalid request header ${JSON.stringify(k)}`, 'UND_ERR_INVALID_ARG');
    }
    const lower = k.toLowerCase();
    // The connection is ours to frame: one request, then close.
    if (lower === 'host' || lower === 'connection' || lower === 'keep-alive' || lower === 'transfer-encoding')
      continue;
    out.push(`${k}: ${v}`);
  }
  return out;
}

/** One request on its own connection. */
class Exchange {
  readonly #handler: Handler;
  readonly #controller: Controller;
  #socket: Socket | undefined;
  #finished = false;
  #paused = false;
  #aborted = false;
  #reason: Error | null = null;
  #timer: NodeJS.Timeout | undefined;
  #head: Buffer | undefined;
  #slab: Slab | undefined;
  #slabUsed = 0;
  /** Body framing once the head is read: bytes left (Content-Length), a chunked decoder, or until close. */
  #left = -1;
  #chunked: ChunkedDecoder | undefined;
  #phase: 'connect' | 'head' | 'body' = 'connect';

  constructor(
    private readonly opts: Dispatcher.DispatchOptions,
    handler: Handler,
    private readonly o: Limits,
    private readonly onDone: (x: Exchange) => void,
    private readonly pool: SlabPool,
  ) {
    this.#handler = handler;
    this.#controller = new Control(this);
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get paused(): boolean {
    return this.#paused;
  }

  get reason(): Error | null {
    return this.#reason;
  }

  start(): void {
    try {
      this.#handler.onRequestStart?.(this.#controller, {});
    } catch (e) {
      this.#fail(e);
      return;
    }
    if (this.#aborted) return;
    let url: URL;
    let request: string;
    try {
      const method = this.opts.method;
      if (
        (method !== 'GET' && method !== 'HEAD') ||
        (this.opts.body !== undefined && this.opts.body !== null)
      ) {
        throw new BulkError(
          `the bulk dispatcher sends only GET and HEAD without a body (got ${method})`,
          'UND_ERR_INVALID_ARG',
        );
      }
      url = new URL(this.opts.path, this.opts.origin);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new BulkError(`unsupported protocol ${url.protocol}`, 'UND_ERR_INVALID_ARG');
      }
      const query = this.opts.query as Record<string, unknown> | null | undefined;
      if (query != null) {
        for (const [k, v] of Object.entries(query)) url.searchParams.append(k, String(v));
      }
      request =
        [
          `${method} ${url.pathname}${url.search} HTTP/1.1`,
          `host: ${url.host}`,
          ...headerLines(this.opts.headers),
          'connection: close',
        ].join('\r\n') + '\r\n\r\n';
    } catch (e) {
      this.#fail(e);
      return;
    }
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const onread = { buffer: () => this.#nextBuffer(), callback: (n: number) => this.#onRead(n) };
    const socket =
      url.protocol === 'https:'
        ? tlsConnect({
            // `onread` is a net.Socket option TLSSocket passes on; @types/node lists it for net only.
            ...({ onread } as object),
            host,
            port,
            ALPNProtocols: ['http/1.1'],
            ...(this.o.ca !== undefined ? { ca: this.o.ca } : {}),
            ...(isIP(host) === 0 ? { servername: host } : {}),
          })
        : netConnect({ host, port, onread });
    this.#socket = socket;
    this.#arm(
      this.o.connectTimeoutMs,
      () => new BulkError(`connect timeout (${host}:${port})`, 'UND_ERR_CONNECT_TIMEOUT'),
    );
    socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      this.#phase = 'head';
      this.#arm(
        this.opts.headersTimeout ?? this.o.headersTimeoutMs,
        () => new BulkError('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT'),
      );
      socket.write(request);
    });
    socket.on('error', (e) => this.#fail(e));
    socket.on('close', () => {
      if (this.#finished) return;
      if (this.#phase === 'body' && this.#left === -1 && this.#chunked === undefined) this.#end();
      else this.#fail(new BulkError('other side closed', 'UND_ERR_SOCKET'));
    });
  }

  /** The region the next read fills: the rest of the current slab, or a fresh slab. */
  #nextBuffer(): Buffer {
    if (this.#slab === undefined || this.#slab.buf.length - this.#slabUsed < MIN_READ) {
      if (this.#slab !== undefined) this.pool.retire(this.#slab);
      this.#slab = this.pool.take();
      this.#slabUsed = 0;
    }
    return this.#slab.buf.subarray(this.#slabUsed);
  }

  /** `onread` callback: `n` bytes landed at the start of the region #nextBuffer() gave. False pauses reading. */
  #onRead(n: number): boolean {
    const slab = this.#slab;
    if (slab === undefined) return false;
    const chunk = slab.buf.subarray(this.#slabUsed, this.#slabUsed + n);
    this.#slabUsed += n;
    if (this.#finished) return false;
    try {
      if (this.#phase === 'head') this.#onHead(chunk);
      else if (this.#phase === 'body') this.#onBody(chunk);
    } catch (e) {
      this.#fail(e);
      return false;
    }
    return !this.#paused && !this.#finished;
  }

  #onHead(chunk: Buffer): void {
    let buf = this.#head === undefined ? chunk : Buffer.concat([this.#head, chunk]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) {
        if (buf.length > MAX_HEAD) throw new BulkError('response head too large', 'UND_ERR_HEADERS_OVERFLOW');
        // A copy: the slab under this view may be recycled before the rest of the head arrives.
        this.#head = Buffer.from(buf);
        return;
      }
      const head = parseHead(buf.toString('latin1', 0, end));
      buf = buf.subarray(end + 4);
      this.#head = undefined;
      // 1xx answers (100 Continue, 103 Early Hints) precede the real one.
      if (head.statusCode >= 100 && head.statusCode < 200) continue;
      this.#startBody(head);
      if (buf.length > 0 && !this.#finished) this.#onBody(buf);
      return;
    }
  }

  #startBody(head: ResponseHead): void {
    this.#phase = 'body';
    const te = single(head.headers, 'transfer-encoding');
    const cl = single(head.headers, 'content-length');
    const noBody = this.opts.method === 'HEAD' || head.statusCode === 204 || head.statusCode === 304;
    if (noBody) this.#left = 0;
    else if (te !== undefined) {
      if (!/(^|,)\s*chunked\s*$/i.test(te)) {
        throw new BulkError(`unsupported transfer-encoding: ${te}`, 'HPE_INVALID_TRANSFER_ENCODING');
      }
      this.#chunked = new ChunkedDecoder();
    } else if (cl !== undefined) {
      if (!/^\d+$/.test(cl))
        throw new BulkError(`invalid content-length: ${cl}`, 'HPE_INVALID_CONTENT_LENGTH');
      this.#left = Number(cl);
    }
    this.#arm(
      this.opts.bodyTimeout ?? this.o.bodyTimeoutMs,
      () => new BulkError('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT'),
    );
    this.#handler.onResponseStart?.(this.#controller, head.statusCode, head.headers, head.statusMessage);
    if (this.#left === 0 && !this.#finished) this.#end();
  }

  #onBody(chunk: Buffer): void {
    this.#timer?.refresh();
    if (this.#chunked !== undefined) {
      const { data } = this.#chunked.push(chunk);
      for (const d of data) {
        if (this.#finished) return;
        this.#deliver(d);
      }
      if (this.#chunked.done && !this.#finished) this.#end();
      return;
    }
    if (this.#left === -1) {
      this.#deliver(chunk);
      return;
    }
    const take = chunk.length > this.#left ? chunk.subarray(0, this.#left) : chunk;
    this.#left -= take.length;
    if (take.length > 0) this.#deliver(take);
    if (this.#left === 0 && !this.#finished) this.#end();
  }

  /** Hands body bytes to the handler, lending the slab view (given back through the pool's `release`). */
  #deliver(view: Buffer): void {
    if (this.#slab !== undefined && view.buffer === this.#slab.buf.buffer) this.pool.lend(this.#slab, view);
    this.#handler.onResponseData?.(this.#controller, view);
  }

  /** A timer for the current phase; a body timer is refreshed by every read and stopped while paused. */
  #arm(ms: number, error: () => Error): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!(ms > 0)) return;
    this.#timer = setTimeout(() => this.#fail(error()), ms);
    this.#timer.unref();
  }

  /** Stops reading (the consumer is full); the body timer stops too. */
  pause(): void {
    this.#paused = true;
    if (this.#phase === 'body' && this.#timer !== undefined) clearTimeout(this.#timer);
  }

  /** Reads again. */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    if (this.#finished) return;
    if (this.#phase === 'body') {
      this.#arm(
        this.opts.bodyTimeout ?? this.o.bodyTimeoutMs,
        () => new BulkError('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT'),
      );
    }
    this.#socket?.resume();
  }

  /** Ends the exchange with `reason` (the caller's AbortSignal fired). */
  abort(reason?: Error): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason ?? new BulkError('Request aborted', 'UND_ERR_ABORTED');
    this.#fail(this.#reason);
  }

  #end(): void {
    this.#settle();
    try {
      this.#handler.onResponseEnd?.(this.#controller, {});
    } catch (e) {
      // The redirect handler dispatches the next hop from onResponseEnd; a failure there is the request's.
      this.#handler.onResponseError?.(this.#controller, e instanceof Error ? e : new Error(String(e)));
    }
  }

  #fail(e: unknown): void {
    if (this.#finished) return;
    this.#settle();
    this.#handler.onResponseError?.(this.#controller, e instanceof Error ? e : new Error(String(e)));
  }

  #settle(): void {
    this.#finished = true;
    if (this.#slab !== undefined) this.pool.retire(this.#slab);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#socket?.destroy();
    this.onDone(this);
  }

  /** Ends the exchange from outside (dispatcher destroy). */
  destroy(error: Error): void {
    this.#fail(error);
  }
}

/** See the module comment. `request()`, `stream()` … come from undici's API on the Dispatcher prototype. */
export class BulkDispatcher extends DispatcherBase {
  readonly #o: Limits;
  readonly #open = new Set<Exchange>();
  readonly #pool = new SlabPool();
  #closed = false;

  constructor(o: BulkDispatcherOptions = {}) {
    super();
    this.#o = {
      connectTimeoutMs: o.connectTimeoutMs ?? 10_000,
      headersTimeoutMs: o.headersTimeoutMs ?? 300_000,
      bodyTimeoutMs: o.bodyTimeoutMs ?? 300_000,
      ca: o.ca,
    };
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const h = WrapHandler.wrap(handler);
    const x = new Exchange(opts, h, this.#o, (done) => this.#open.delete(done), this.#pool);
    if (this.#closed) {
      x.destroy(new BulkError('The client is destroyed', 'UND_ERR_DESTROYED'));
      return false;
    }
    this.#open.add(x);
    x.start();
    return true;
  }

  /**
   * The consumer is done with a body chunk this dispatcher delivered (it was written out): its memory may be
   * reused. Optional; anything but an exact delivered chunk is ignored.
   */
  release(chunk: Buffer): void {
    this.#pool.release(chunk);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    this.#closed = true;
    // Exchanges in flight finish on their own; nothing is pooled.
    if (callback !== undefined) {
      callback();
      return;
    }
    return Promise.resolve();
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    this.#closed = true;
    const err = a instanceof Error ? a : new BulkError('The client is destroyed', 'UND_ERR_DESTROYED');
    for (const x of [...this.#open]) x.destroy(err);
    const cb = typeof a === 'function' ? a : b;
    if (cb !== undefined) {
      cb();
      return;
    }
    return Promise.resolve();
  }
}
