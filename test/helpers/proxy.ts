/**
 * Small proxies on 127.0.0.1 for tests: a CONNECT tunnel and a plain HTTP forward proxy in one node:http server.
 * `hosts` maps names only the proxy knows (e.g. `gateway.internal`) to a loopback address, so a client reaching
 * them must go through the proxy (it cannot resolve them itself). Everything seen is recorded.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { closeAfterTest } from './servers.js';

/** No proxy variables from the machine running the tests (spread into a run's env). */
export const NO_PROXY_ENV = {
  HTTP_PROXY: '',
  HTTPS_PROXY: '',
  NO_PROXY: '',
  http_proxy: '',
  https_proxy: '',
  no_proxy: '',
};

/** What the proxy saw. */
export interface ProxyLog {
  /** `host:port` of each CONNECT request. */
  connects: string[];
  /** Absolute URLs of forwarded (plain HTTP) requests, with their headers. */
  forwards: { url: string; headers: IncomingHttpHeaders }[];
  /** Every byte that crossed a CONNECT tunnel from the client (to check nothing readable leaks). */
  tunnelBytes: Buffer[];
}

/** A running proxy. */
export interface TestProxy extends ProxyLog {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts a proxy; `hosts` maps a host name to `127.0.0.1` (the port is kept). Closed after each test. With
 * `connectStatus` every CONNECT is answered with that status (407 with a Proxy-Authenticate challenge) instead
 * of a tunnel.
 */
export async function startProxy(
  hosts: Record<string, string> = {},
  o: { connectStatus?: number } = {},
): Promise<TestProxy> {
  const log: ProxyLog = { connects: [], forwards: [], tunnelBytes: [] };
  const sockets = new Set<Socket>();
  const mapHost = (host: string): string => hosts[host.toLowerCase()] ?? host;
  const server = createServer((req, res) => {
    // A forward request: the request line carries the absolute URL.
    const target = new URL(req.url ?? '/');
    log.forwards.push({ url: target.href, headers: req.headers });
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    const up = httpRequest(
      {
        host: mapHost(target.hostname),
        port: target.port || 80,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => {
      res.writeHead(502).end('bad gateway');
    });
    req.pipe(up);
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    log.connects.push(target);
    if (o.connectStatus !== undefined) {
      const auth = o.connectStatus === 407 ? 'Proxy-Authenticate: Basic realm="test"\r\n' : '';
      client.end(`HTTP/1.1 ${o.connectStatus} Refused\r\n${auth}Content-Length: 0\r\n\r\n`);
      return;
    }
    const at = target.lastIndexOf(':');
    const host = mapHost(target.slice(0, at));
    const port = Number(target.slice(at + 1));
    const up = connect(port, host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) up.write(head);
      client.on('data', (b: Buffer) => log.tunnelBytes.push(b));
      client.pipe(up);
      up.pipe(client);
    });
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfterTest(server);
  const { port } = server.address() as AddressInfo;
  return Object.assign(log, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** A proxy that accepts connections, reads what it is sent and never answers. */
export interface SilentProxy {
  url: string;
  /** Resolves once a client has sent its first bytes (a CONNECT request line). */
  asked: Promise<string>;
}

/** Starts a proxy that stays silent (a CONNECT is never answered); closed after each test. */
export async function startSilentProxy(): Promise<SilentProxy> {
  let heard: (first: string) => void = () => undefined;
  const asked = new Promise<string>((resolve) => (heard = resolve));
  const server = createTcpServer((sock) => {
    sock.on('error', () => undefined);
    sock.once('data', (b: Buffer) => heard(b.toString('latin1').split('\r\n')[0] ?? ''));
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfterTest({
    closeAllConnections: () => {
      for (const s of sockets) s.destroy();
    },
    close: (callback: () => void) => server.close(callback),
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, asked };
}
