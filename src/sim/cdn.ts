import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FaultRule } from './config.js';

/** A file the CDN serves: fixed bytes, or `size` deterministic bytes generated on the fly (the 1 GiB bench). */
export interface CdnObject {
  bytes?: Buffer;
  size?: number;
  contentType: string;
  /** Unix ms after which the URL is refused (403, like an expired presigned URL). */
  expiresAt: number;
}

/** Deterministic filler byte at offset `i` (lets tests compare exact bytes without holding them). */
export function fillerByte(i: number): number {
  return (i * 31 + 7) & 0xff;
}

/** Generated content is written in slices of this size. */
const SLICE = 262_144;

/**
 * fillerByte repeats every 256 bytes (31 * 256 ≡ 0 mod 256), so every slice is a view into one precomputed
 * buffer: the origin serves generated files at memory speed and never limits a download benchmark.
 */
let pattern: Buffer | undefined;
function fillerView(start: number, end: number): Buffer {
  pattern ??= filler(0, SLICE + 256);
  const at = start % 256;
  return pattern.subarray(at, at + (end - start));
}

function filler(start: number, end: number): Buffer {
  const b = Buffer.allocUnsafe(end - start);
  for (let i = 0; i < b.length; i++) b[i] = fillerByte(start + i);
  return b;
}

/** CDN requests remembered (the oldest are dropped past twice this many). */
const CDN_LOG_LIMIT = 5_000;

/**
 * The simulator's second origin: result files live here, behind unguessable paths, with Content-Length and
 * Range support. It takes no token (a redirect from the gateway arrives without Authorization, as it should),
 * and records the Authorization header it saw so tests can prove none leaked.
 */
export class Cdn {
  readonly objects = new Map<string, CdnObject>();
  /** Authorization headers received (must stay empty). */
  readonly authorizationSeen: string[] = [];
  /** Requests received, with their `traceparent` (the gateway's own header: a file origin must never see it) and
   * every header (--header values must never reach it either). */
  readonly requests: Array<{
    method: string;
    path: string;
    range: string | undefined;
    traceparent: string | undefined;
    headers: IncomingHttpHeaders;
  }> = [];
  faults: () => FaultRule[] = () => [];
  #server: Server | undefined;
  baseUrl = '';
  #counter = 0;

  constructor(private readonly now: () => number) {}

  /** Publishes an object and returns its URL. */
  publish(obj: CdnObject, name = 'video.mp4'): string {
    const key = `/files/${(++this.#counter).toString(36)}-${Math.random().toString(36).slice(2, 10)}/${name}`;
    this.objects.set(key, obj);
    return this.baseUrl + key;
  }

  /** Starts listening. */
  async listen(host: string, port: number): Promise<void> {
    const server = createServer((req, res) => {
      // Looked up once per request: a rule with `times` counts the requests it matched.
      const faults = this.faults();
      // latency: the answer waits `ms` (tests pin download times so they do not ride on timer noise).
      const ms = faults.find((f) => f.kind === 'latency')?.ms ?? 0;
      if (ms <= 0) {
        this.#serve(req, res, faults);
        return;
      }
      const t = setTimeout(() => this.#serve(req, res, faults), ms);
      res.once('close', () => clearTimeout(t));
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    const a = server.address() as AddressInfo;
    this.baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${a.port}`;
  }

  #serve(req: IncomingMessage, res: ServerResponse, faults: FaultRule[]): void {
    const path = (req.url ?? '/').split('?')[0] as string;
    const range = req.headers.range;
    const tp = req.headers.traceparent;
    const traceparent = typeof tp === 'string' ? tp : undefined;
    this.requests.push({ method: req.method ?? 'GET', path, range, traceparent, headers: req.headers });
    if (this.requests.length > 2 * CDN_LOG_LIMIT)
      this.requests.splice(0, this.requests.length - CDN_LOG_LIMIT);
    if (req.headers.authorization !== undefined) this.authorizationSeen.push(req.headers.authorization);
    if (faults.some((f) => f.kind === 'redirect-loop')) {
      res.writeHead(302, { location: this.baseUrl + path });
      res.end();
      return;
    }
    const obj = this.objects.get(path);
    if (obj === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (this.now() > obj.expiresAt) {
      res
        .writeHead(403, { 'content-type': 'application/xml' })
        .end('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      return;
    }
    const size = obj.bytes?.length ?? obj.size ?? 0;
    let start = 0;
    let end = size;
    let status = 200;
    const headers: Record<string, string | number> = {
      'content-type': obj.contentType,
      'accept-ranges': 'bytes',
    };
    // A strong validator per object, and If-Range honoured: a range of another version gets the whole file.
    const etag = `"${path.replace(/[^a-z0-9]/gi, '').slice(-24)}-${size}"`;
    headers.etag = etag;
    const ifRange = req.headers['if-range'];
    const m =
      range !== undefined && (ifRange === undefined || ifRange === etag)
        ? /^bytes=(\d+)-(\d*)$/.exec(range)
        : null;
    if (m) {
      start = Number(m[1]);
      end = m[2] !== '' ? Math.min(size, Number(m[2]) + 1) : size;
      if (start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      status = 206;
      headers['content-range'] = `bytes ${start}-${end - 1}/${size}`;
    }
    headers['content-length'] = end - start;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const drop = faults.find((f) => f.kind === 'drop');
    // slow: the download starts, then stalls before the end (until the client gives up).
    const slow = drop === undefined ? faults.find((f) => f.kind === 'slow') : undefined;
    const cutRule = drop ?? slow;
    const stopAt = cutRule ? Math.min(end, start + (cutRule.after ?? Math.floor((end - start) / 2))) : end;
    // A drop destroys the connection once the bytes before it are out (the first write is corked a tick).
    const cut = (): void => {
      if (slow === undefined) res.write(Buffer.alloc(0), () => res.socket?.destroy());
    };
    if (obj.bytes) {
      res.write(obj.bytes.subarray(start, stopAt));
      if (cutRule) cut();
      else res.end();
      return;
    }
    // Generated content, written in 256 KiB slices with backpressure.
    let pos = start;
    const pump = (): void => {
      while (pos < stopAt) {
        const next = Math.min(stopAt, pos + SLICE);
        const ok = res.write(fillerView(pos, next));
        pos = next;
        if (!ok) {
          res.once('drain', pump);
          return;
        }
      }
      if (cutRule) cut();
      else res.end();
    };
    pump();
  }

  /** Stops listening and drops open connections. */
  async close(): Promise<void> {
    const s = this.#server;
    if (!s?.listening) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
