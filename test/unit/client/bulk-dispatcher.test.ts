import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BulkDispatcher,
  BulkError,
  ChunkedDecoder,
  SlabPool,
  parseHead,
} from '../../../src/client/bulk-dispatcher.js';
import { redirect, request } from '../../../src/client/undici-lite.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'tls');
const servers: Array<{ close: () => void }> = [];

afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/**
 * A body of `n` deterministic bytes without a short period (a pattern repeating every 256 bytes would hide a reused
 * read buffer: the overwrite would write the same bytes again).
 */
function bytes(n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  let x = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; server: Server; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push({
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

/** A raw TCP server that answers every connection with `reply(socket)`. */
async function listenRaw(reply: (s: Socket) => void): Promise<string> {
  const sockets: Socket[] = [];
  const server = createNetServer((s) => {
    sockets.push(s);
    s.once('data', () => reply(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push({
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function get(
  dispatcher: BulkDispatcher | ReturnType<BulkDispatcher['compose']>,
  url: string,
  headers: Record<string, string> = {},
  extra: { signal?: AbortSignal; method?: 'GET' | 'HEAD' } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const res = await request(url, {
    dispatcher,
    method: extra.method ?? 'GET',
    headers,
    signal: extra.signal,
  });
  const parts: Buffer[] = [];
  for await (const c of res.body) parts.push(Buffer.from(c as Buffer));
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) };
}

async function failure(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(Error);
  return e as { code?: string; message: string };
}

describe('parseHead', () => {
  it('reads the status, lower-cases names and gathers repeated headers', () => {
    const h = parseHead(
      'HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\nSet-Cookie: a\r\nset-cookie: b',
    );
    expect(h).toEqual({
      statusCode: 206,
      statusMessage: 'Partial Content',
      headers: { 'content-length': '10', 'set-cookie': ['a', 'b'] },
    });
    expect(parseHead('HTTP/1.0 200').statusMessage).toBe('');
  });

  it('refuses a malformed status line, header line or folded header', () => {
    expect(() => parseHead('HTTP/2 200 OK')).toThrow(BulkError);
    expect(() => parseHead('HTTP/1.1 200 OK\r\nno colon')).toThrow(/malformed header/);
    expect(() => parseHead('HTTP/1.1 200 OK\r\nbad name: x')).toThrow(/malformed header/);
    expect(() => parseHead('HTTP/1.1 200 OK\r\na: b\r\n  folded')).toThrow(/malformed header/);
  });
});

describe('ChunkedDecoder', () => {
  const encoded = (parts: Buffer[], trailer = ''): Buffer =>
    Buffer.concat([
      ...parts.flatMap((p, i) => [
        Buffer.from(`${p.length.toString(16)}${i === 0 ? ';ext=1' : ''}\r\n`),
        p,
        Buffer.from('\r\n'),
      ]),
      Buffer.from(`0\r\n${trailer}\r\n`),
    ]);

  it('decodes the same bytes under any slicing of the input, and stops at the end of the body', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom('', 'x-checksum: abc\r\n'),
        (parts, cuts, trailer) => {
          const body = parts.map((p) => Buffer.from(p));
          const wire = Buffer.concat([encoded(body, trailer), Buffer.from('NEXT')]);
          const points = [...new Set(cuts.map((c) => c % (wire.length + 1)))].sort((a, b) => a - b);
          const d = new ChunkedDecoder();
          const out: Buffer[] = [];
          let used = 0;
          let prev = 0;
          for (const p of [...points, wire.length]) {
            if (d.done) break;
            const slice = wire.subarray(prev, p);
            const r = d.push(slice);
            out.push(...r.data);
            used += r.used;
            prev = p;
          }
          expect(d.done).toBe(true);
          expect(Buffer.concat(out).equals(Buffer.concat(body))).toBe(true);
          expect(wire.subarray(used).toString()).toBe('NEXT');
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  it('refuses a bad chunk size or missing CRLF after the data', () => {
    expect(() => new ChunkedDecoder().push(Buffer.from('zz\r\n'))).toThrow(/bad chunk size/);
    expect(() => new ChunkedDecoder().push(Buffer.from('2\r\nabX\r\n'))).toThrow(/missing CRLF/);
  });
});

describe('SlabPool', () => {
  it('reuses a slab only when it is full and every lent view came back exactly', () => {
    const pool = new SlabPool();
    const a = pool.take();
    const v1 = a.buf.subarray(0, 10);
    const v2 = a.buf.subarray(10, 30);
    pool.lend(a, v1);
    pool.lend(a, v2);
    pool.retire(a);
    pool.release(v1);
    pool.release(Buffer.from(v2)); // a copy: ignored
    pool.release(a.buf.subarray(10, 20)); // a sub-slice: ignored
    expect(pool.take() === a).toBe(false);
    pool.release(v2);
    expect(pool.take() === a).toBe(true);
  });

  it('never reuses the slab being filled', () => {
    const pool = new SlabPool();
    const a = pool.take();
    const v = a.buf.subarray(0, 5);
    pool.lend(a, v);
    pool.release(v);
    expect(pool.take() === a).toBe(false);
  });
});

describe('BulkDispatcher', () => {
  it('downloads a Content-Length body byte for byte and sends one GET with close', async () => {
    const data = bytes(12 * 1024 * 1024 + 7);
    const s = await listen((_req, res) => {
      res.writeHead(200, { 'content-length': data.length, 'content-type': 'video/mp4' });
      res.end(data);
    });
    const r = await get(new BulkDispatcher(), `${s.url}/v.mp4?x=1`, { range: 'bytes=0-' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('video/mp4');
    expect(r.body.equals(data)).toBe(true);
    expect(s.seen[0]?.url).toBe('/v.mp4?x=1');
    expect(s.seen[0]?.headers.connection).toBe('close');
    expect(s.seen[0]?.headers.range).toBe('bytes=0-');
    expect(s.seen[0]?.headers.host).toBe(new URL(s.url).host);
  });

  it('keeps every byte when slabs are reused behind a consumer that releases what it has written', async () => {
    const data = bytes(24 * 1024 * 1024);
    const s = await listen((_req, res) => {
      res.writeHead(200, { 'content-length': data.length });
      res.end(data);
    });
    const d = new BulkDispatcher();
    const res = await request(s.url, { dispatcher: d, method: 'GET' });
    const hash = createHash('sha256');
    let n = 0;
    for await (const c of res.body) {
      const chunk = c as Buffer;
      hash.update(chunk);
      n += chunk.length;
      d.release(chunk);
      // Yield so the socket refills slabs while the consumer lags behind.
      await new Promise((r) => setImmediate(r));
    }
    expect(n).toBe(data.length);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
  });

  it('never reuses memory still held: chunks kept unreleased, or released late, stay intact', async () => {
    const data = bytes(16 * 1024 * 1024);
    const s = await listen((_req, res) => {
      res.writeHead(200, { 'content-length': data.length });
      res.end(data);
    });
    // Held to the end without release: every view must still hold its bytes.
    const d = new BulkDispatcher();
    const held: Buffer[] = [];
    for await (const c of (await request(s.url, { dispatcher: d, method: 'GET' })).body)
      held.push(c as Buffer);
    expect(Buffer.concat(held).equals(data)).toBe(true);

    // Released eight chunks late (as a disk write queue would): the chunks in between must not change.
    const window: Array<{ chunk: Buffer; copy: Buffer }> = [];
    let bad = 0;
    let total = 0;
    for await (const c of (await request(s.url, { dispatcher: d, method: 'GET' })).body) {
      const chunk = c as Buffer;
      total += chunk.length;
      window.push({ chunk, copy: Buffer.from(chunk) });
      if (window.length > 8) {
        const old = window.shift();
        if (old !== undefined) {
          if (!old.chunk.equals(old.copy)) bad++;
          d.release(old.chunk);
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    expect([total, bad]).toEqual([data.length, 0]);
  });

  it('decodes a chunked body, and a body delimited by the end of the connection', async () => {
    const data = bytes(3 * 1024 * 1024);
    const chunked = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let i = 0; i < data.length; i += 500_000) res.write(data.subarray(i, i + 500_000));
      res.end();
    });
    expect((await get(new BulkDispatcher(), chunked.url)).body.equals(data)).toBe(true);

    const closing = await listenRaw((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\n\r\n');
      sock.end(data);
    });
    expect((await get(new BulkDispatcher(), closing)).body.equals(data)).toBe(true);
  });

  it('skips 1xx answers, and reads no body for HEAD or 204', async () => {
    const early = await listenRaw((sock) => {
      sock.end(
        'HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
      );
    });
    const r = await get(new BulkDispatcher(), early);
    expect([r.status, r.body.toString()]).toEqual([200, 'ok']);

    const s = await listen((req, res) => {
      if (req.url === '/empty') res.writeHead(204).end();
      else res.writeHead(200, { 'content-length': 5 }).end(req.method === 'HEAD' ? undefined : 'hello');
    });
    const head = await get(new BulkDispatcher(), s.url, {}, { method: 'HEAD' });
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([200, '5', 0]);
    expect((await get(new BulkDispatcher(), `${s.url}/empty`)).status).toBe(204);
  });

  it('follows redirects under undici’s interceptor, dropping Authorization when the origin changes', async () => {
    const cdn = await listen((_req, res) => res.writeHead(200, { 'content-length': 3 }).end('mp4'));
    const gateway = await listen((req, res) => {
      if (req.url === '/v1/content') res.writeHead(302, { location: '/v1/moved' }).end();
      else res.writeHead(302, { location: `${cdn.url}/files/v.mp4` }).end();
    });
    const d = new BulkDispatcher().compose(redirect({ maxRedirections: 5 }));
    const r = await get(d, `${gateway.url}/v1/content`, { authorization: 'Bearer sk-secret' });
    expect(r.body.toString()).toBe('mp4');
    expect(gateway.seen.map((q) => q.headers.authorization)).toEqual([
      'Bearer sk-secret',
      'Bearer sk-secret',
    ]);
    expect(cdn.seen.map((q) => q.headers.authorization)).toEqual([undefined]);
  });

  it('ends a redirect loop with an error instead of following it forever', async () => {
    const s = await listen((req, res) =>
      res.writeHead(302, { location: req.url === '/a' ? '/b' : '/a' }).end(),
    );
    const d = new BulkDispatcher().compose(
      redirect({ maxRedirections: 5, throwOnMaxRedirect: true } as { maxRedirections: number }),
    );
    const e = await failure(get(d, `${s.url}/a`));
    expect(e.message).toMatch(/redirect/i);
    expect(s.seen.length).toBeLessThanOrEqual(6);
  });

  it('reports a connection cut before the announced length as a socket error', async () => {
    const url = await listenRaw((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n');
      sock.end(Buffer.alloc(10));
    });
    const e = await failure(get(new BulkDispatcher(), url));
    expect(e.code).toBe('UND_ERR_SOCKET');
  });

  it('times out a silent server (headers) and a stalled body with undici’s codes', async () => {
    const silent = await listenRaw(() => undefined);
    const h = await failure(get(new BulkDispatcher({ headersTimeoutMs: 50 }), silent));
    expect(h.code).toBe('UND_ERR_HEADERS_TIMEOUT');

    const stalled = await listenRaw((sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    const b = await failure(get(new BulkDispatcher({ bodyTimeoutMs: 50 }), stalled));
    expect(b.code).toBe('UND_ERR_BODY_TIMEOUT');
  });

  it('stops when the caller aborts', async () => {
    const stalled = await listenRaw((sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    const ac = new AbortController();
    const p = get(new BulkDispatcher(), stalled, {}, { signal: ac.signal });
    setImmediate(() => ac.abort());
    const e = await failure(p);
    expect(e.message).toMatch(/abort/i);
  });

  it('refuses malformed answers and unsafe request headers (nothing sent for the latter)', async () => {
    const garbage = await listenRaw((sock) => sock.end('SSH-2.0-OpenSSH\r\n\r\n'));
    expect((await failure(get(new BulkDispatcher(), garbage))).code).toBe('HPE_INVALID_STATUS');
    const badLength = await listenRaw((sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n'));
    expect((await failure(get(new BulkDispatcher(), badLength))).code).toBe('HPE_INVALID_CONTENT_LENGTH');

    const s = await listen((_req, res) => res.end('x'));
    const e = await failure(get(new BulkDispatcher(), s.url, { 'x-evil': 'a\r\nx-injected: 1' }));
    expect(e.code).toBe('UND_ERR_INVALID_ARG');
    expect(s.seen).toEqual([]);
  });

  it('downloads over TLS', async () => {
    const key = readFileSync(join(FIXTURES, 'key.pem'));
    const cert = readFileSync(join(FIXTURES, 'cert.pem'));
    const data = bytes(2 * 1024 * 1024);
    const server = createHttpsServer({ key, cert }, (_req, res) => {
      res.writeHead(200, { 'content-length': data.length }).end(data);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push({ close: () => server.close() });
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v.mp4`;
    expect((await get(new BulkDispatcher({ ca: cert }), url)).body.equals(data)).toBe(true);
    // Without trusting the test CA the certificate is refused: verification is on.
    const e = await failure(get(new BulkDispatcher(), url));
    expect(e.message).toMatch(/self[- ]signed|certificate/i);
  });
});
