/**
 * The connection pool of a GatewayClient, on undici's public API only. Proxies are read as curl reads them:
 * HTTPS_PROXY, HTTP_PROXY and NO_PROXY (and their lower-case forms); a proxy without a scheme is http; NO_PROXY
 * holds host names (a name also covers its subdomains), IP addresses and CIDR ranges (curl >= 7.86), `*` for all.
 * An https gateway is reached through a CONNECT tunnel (the bearer token travels inside TLS, the proxy sees only
 * the host name), a plain-http gateway through an ordinary forward request. Extra certificate authorities (`ca`)
 * are added to Node's own trust store (which already holds NODE_EXTRA_CA_CERTS), for direct and tunnelled
 * connections alike.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { BlockList, isIP } from 'node:net';
import { Agent, Dispatcher, Pool, ProxyAgent } from 'undici';
import { ConnectionError } from './errors.js';

/** Settings of the default dispatcher. */
export interface TransportOptions {
  /** Limit of a TCP/TLS connect and of a proxy's answer to CONNECT, in milliseconds. */
  connectTimeoutMs: number;
  /** Extra trusted certificates (PEM text), added to the built-in ones. */
  ca?: string | readonly string[] | undefined;
  /** Where HTTPS_PROXY, HTTP_PROXY, NO_PROXY (or their lower-case forms) are read; default process.env. */
  env?: Record<string, string | undefined> | undefined;
  /** Most connections kept to one origin (default: no limit); requests past it wait for a free one. */
  connections?: number | undefined;
}

/** The proxy settings of an environment, lower-case names first (as curl and undici read them). */
export function proxySettings(env: Record<string, string | undefined>): {
  httpProxy: string;
  httpsProxy: string;
  noProxy: string;
} {
  const pick = (name: string): string => env[name.toLowerCase()] || env[name.toUpperCase()] || '';
  const httpProxy = pick('http_proxy');
  return { httpProxy, httpsProxy: pick('https_proxy') || httpProxy, noProxy: pick('no_proxy') };
}

/**
 * A proxy setting as a URL: a value without a scheme (`proxy:3128`, `user:pw@proxy:3128`) is http, as curl reads
 * it. Throws a ConnectionError (`proxy_failed`) naming the variable, never quoting the value (it may hold a
 * password), for text that is no URL or a scheme undici cannot use.
 */
export function proxyUrl(value: string, name = 'HTTPS_PROXY'): URL {
  const text = value.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL | undefined;
  try {
    url = new URL(withScheme);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.hostname === '' || !/^(https?|socks5?):$/.test(url.protocol)) {
    throw new ConnectionError(`${name} is not a proxy address (use e.g. http://proxy.example:3128)`, {
      code: 'proxy_failed',
    });
  }
  return url;
}

/** One NO_PROXY entry: a host name (with its subdomains), or addresses (one, or a CIDR range). */
type Bypass = { port: number } & ({ name: string } | { addresses: BlockList });

/** `10.0.0.0/8` → ['10.0.0.0', 8, 'ipv4']; a bare address is a range of one; anything else undefined. */
function range(text: string): [string, number, 'ipv4' | 'ipv6'] | undefined {
  const [addr = '', bits, extra] = text.split('/');
  const v = isIP(addr);
  if (v === 0 || extra !== undefined) return undefined;
  const max = v === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  return prefix >= 0 && prefix <= max ? [addr, prefix, v === 4 ? 'ipv4' : 'ipv6'] : undefined;
}

/**
 * Parses NO_PROXY: entries separated by commas or spaces, each `name`, `.name`, `*.name`, an IP address or a CIDR
 * range, with an optional `:port` (`[::1]:443` for IPv6). Address ranges are matched by Node's own BlockList.
 */
export function parseNoProxy(text: string): Bypass[] | '*' {
  const out: Bypass[] = [];
  for (const raw of text.split(/[,\s]+/)) {
    if (raw === '') continue;
    if (raw === '*') return '*';
    // `[::1]:443`, `host:443`; a bare IPv6 address (`::1`, `fd00::/8`) has colons but no port.
    const m =
      /^\[([^\]]+)\](?::(\d+))?$/.exec(raw) ??
      (raw.split(':').length === 2 ? /^(.+):(\d+)$/.exec(raw) : null);
    const host = (m?.[1] ?? raw).toLowerCase();
    const port = m?.[2] !== undefined ? Number(m[2]) : 0;
    const r = range(host);
    if (r === undefined) {
      out.push({ port, name: host.replace(/^\*?\./, '') });
      continue;
    }
    const addresses = new BlockList();
    addresses.addSubnet(...r);
    out.push({ port, addresses });
  }
  return out;
}

/** True when a request to `hostname`:`port` goes direct under these NO_PROXY entries. */
export function bypassesProxy(hostname: string, port: number, entries: Bypass[] | '*'): boolean {
  if (entries === '*') return true;
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const v = isIP(host);
  return entries.some((e) => {
    if (e.port !== 0 && e.port !== port) return false;
    if ('name' in e) return host === e.name || host.endsWith(`.${e.name}`);
    // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) matches the IPv4 range it carries (BlockList's rule).
    return v !== 0 && e.addresses.check(host, v === 4 ? 'ipv4' : 'ipv6');
  });
}

/** A proxy answered CONNECT with something other than 200 (407: it wants credentials). */
export class ProxyRefusedError extends Error {
  readonly code = 'GW_PROXY_REFUSED';
  constructor(readonly status: number) {
    super(
      status === 407
        ? 'the proxy requires authentication (HTTP 407)'
        : `the proxy refused the tunnel (HTTP ${status})`,
    );
    this.name = 'ProxyRefusedError';
  }
}

/**
 * The pool that talks to the proxy itself. A CONNECT is an ordinary request to undici: its answer would be
 * awaited for the default 300 s headers timeout, so a proxy that accepts and stays silent held gw for five
 * minutes; here it is bounded by the connect timeout. A CONNECT answered with anything but 200 fails with a
 * ProxyRefusedError (undici reports it as an aborted request, which reads as Ctrl-C).
 */
function tunnelPool(connectTimeoutMs: number): (origin: URL, opts: object) => Dispatcher {
  return (origin, opts) => {
    const pool = new Pool(origin, { ...opts, headersTimeout: connectTimeoutMs });
    const connect = pool.connect.bind(pool);
    return Object.assign(pool, {
      connect: async (o: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> => {
        const answer = await connect(o);
        if (answer.statusCode === 200) return answer;
        answer.socket.destroy();
        throw new ProxyRefusedError(answer.statusCode);
      },
    });
  };
}

/**
 * Chooses per origin between going direct and the http or https proxy (NO_PROXY), and closes what it opened.
 * A request given up while its connection was still being made (abortWhileConnecting) stays queued inside undici
 * until that connect ends, and close() would wait for it: once there is one, close() destroys instead.
 */
class Transport extends Dispatcher {
  private readonly bypass: Bypass[] | '*';
  private abandoned = 0;
  constructor(
    private readonly direct: Dispatcher,
    private readonly http: Dispatcher | undefined,
    private readonly https: Dispatcher | undefined,
    noProxy: string,
  ) {
    super();
    this.bypass = http === undefined && https === undefined ? [] : parseNoProxy(noProxy);
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.pick(String(opts.origin)).dispatch(opts, handler);
  }

  /** Counts a request given up before it reached a connection. */
  abandon(): void {
    this.abandoned++;
  }

  private pick(origin: string): Dispatcher {
    // No proxy configured: no origin parsed on the way (thousands of requests a second in gw batch).
    if (this.http === undefined && this.https === undefined) return this.direct;
    const url = new URL(origin);
    const proxy = url.protocol === 'https:' ? this.https : this.http;
    if (proxy === undefined) return this.direct;
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    return bypassesProxy(url.hostname, port, this.bypass) ? this.direct : proxy;
  }

  private get all(): Dispatcher[] {
    return [...new Set([this.direct, this.http, this.https])].filter((d): d is Dispatcher => d !== undefined);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const done =
      this.abandoned > 0 ? this.destroy() : Promise.all(this.all.map((d) => d.close())).then(() => undefined);
    if (callback === undefined) return done;
    void done.then(callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const err = typeof a === 'function' ? null : (a ?? null);
    const callback = typeof a === 'function' ? a : b;
    const done = Promise.all(this.all.map((d) => d.destroy(err))).then(() => undefined);
    if (callback === undefined) return done;
    void done.then(callback);
  }
}

/** A controller for a request that never reached a connection (nothing to pause or abort). */
const NOT_STARTED: Dispatcher.DispatchController = {
  aborted: true,
  paused: false,
  reason: null,
  abort: () => undefined,
  pause: () => undefined,
  resume: () => undefined,
};

/**
 * undici acts on a request's signal only once the request is on a connection: while the TCP connect, the TLS
 * handshake or a proxy's CONNECT is still under way, Ctrl-C and --timeout were ignored until the connect ended
 * on its own. This fails the request as soon as its signal aborts, and cancels it should the connection come later.
 */
function abortWhileConnecting(onAbandon: () => void): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const signal = (opts as { signal?: unknown }).signal;
    if (!(signal instanceof AbortSignal) || signal.aborted) return dispatch(opts, handler);
    let started = false;
    let failed = false;
    const reason = (): Error => (signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    const onAbort = (): void => {
      if (started) return; // undici aborts a request on a connection itself
      failed = true;
      onAbandon();
      handler.onResponseError?.(NOT_STARTED, reason());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => signal.removeEventListener('abort', onAbort);
    return dispatch(opts, {
      onRequestStart: (c, context) => {
        started = true;
        settle();
        if (failed) c.abort(reason());
        else handler.onRequestStart?.(c, context);
      },
      onRequestUpgrade: (c, status, headers, socket) =>
        handler.onRequestUpgrade?.(c, status, headers, socket),
      onResponseStart: (c, status, headers, message) =>
        handler.onResponseStart?.(c, status, headers, message),
      onResponseData: (c, chunk) => handler.onResponseData?.(c, chunk),
      onResponseEnd: (c, trailers) => handler.onResponseEnd?.(c, trailers),
      onResponseError: (c, err) => {
        settle();
        if (!failed) handler.onResponseError?.(c, err);
      },
    });
  };
}

/** The default dispatcher: keep-alive pool per origin, proxies from the environment (if any), extra CAs. */
export function createDispatcher(o: TransportOptions): Dispatcher {
  const tls = trustStore(o);
  const env = o.env ?? process.env;
  const proxies = proxySettings(env);
  const connect = { timeout: o.connectTimeoutMs, ...tls };
  const pool = {
    keepAliveTimeout: 4_000,
    ...(o.connections !== undefined ? { connections: o.connections } : {}),
  };
  const direct = new Agent({ ...pool, connect });
  const via = (value: string, name: string): Dispatcher | undefined =>
    value === ''
      ? undefined
      : new ProxyAgent({
          uri: proxyUrl(value, name).href,
          ...pool,
          connect,
          proxyTls: { timeout: o.connectTimeoutMs },
          // Through a proxy, the TLS session to the gateway runs inside the tunnel: the same trust store.
          requestTls: { timeout: o.connectTimeoutMs, ...tls },
          // A plain-http gateway goes through a plain-http proxy as a forward request (what curl does; most
          // corporate proxies allow CONNECT only to port 443). https always tunnels.
          proxyTunnel: false,
          clientFactory: tunnelPool(o.connectTimeoutMs),
        });
  const http = via(proxies.httpProxy, 'HTTP_PROXY');
  const https = proxies.httpsProxy === proxies.httpProxy ? http : via(proxies.httpsProxy, 'HTTPS_PROXY');
  const transport = new Transport(direct, http, https, proxies.noProxy);
  return transport.compose(abortWhileConnecting(() => transport.abandon()));
}

/** TLS options with the extra CAs, or none. */
function trustStore(o: TransportOptions): { ca?: string[] } {
  const extra = o.ca === undefined ? [] : typeof o.ca === 'string' ? [o.ca] : [...o.ca];
  if (extra.length === 0) return {};
  // Node replaces (not extends) its trust store when `ca` is given: keep the built-in roots. NODE_EXTRA_CA_CERTS
  // is honoured by Node only while `ca` is absent, so read it here too.
  const envExtra = (o.env ?? process.env).NODE_EXTRA_CA_CERTS;
  return {
    ca: [
      ...rootCertificates,
      ...(envExtra !== undefined && envExtra !== '' ? [readPem(envExtra)] : []),
      ...extra,
    ],
  };
}

function readPem(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // Node itself only warns about an unreadable NODE_EXTRA_CA_CERTS
  }
}

/**
 * An interceptor that removes the headers `names` from every request not addressed to `origin`. undici's redirect
 * interceptor drops Authorization and cookies when a redirect changes origin but keeps every other header; the
 * gateway's own headers (`traceparent`) and a user's extra headers (`--header`) stay with the gateway too. Composed
 * under the redirect interceptor, it sees every hop.
 */
export function gatewayOnly(
  origin: string,
  names: readonly string[],
): Dispatcher.DispatcherComposeInterceptor {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  return (dispatch) => (opts, handler) => {
    const to = typeof opts.origin === 'string' ? opts.origin : opts.origin?.origin;
    if (to === origin || opts.headers === undefined || opts.headers === null) return dispatch(opts, handler);
    return dispatch({ ...opts, headers: withoutHeaders(opts.headers, drop) }, handler);
  };
}

/** `headers` (an object, a flat [name, value, …] list or [name, value] pairs) without the names in `drop`. */
function withoutHeaders(
  headers: NonNullable<Dispatcher.DispatchOptions['headers']>,
  drop: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  const keep = (name: unknown, value: unknown): void => {
    if (typeof name !== 'string' || drop.has(name.toLowerCase())) return;
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) out.push(name, String(v));
  };
  if (Array.isArray(headers) && (headers.length === 0 || !Array.isArray(headers[0]))) {
    const flat = headers as unknown[];
    for (let i = 0; i + 1 < flat.length; i += 2) keep(flat[i], flat[i + 1]);
  } else {
    const entries = Symbol.iterator in headers ? headers : Object.entries(headers);
    for (const [name, value] of entries as Iterable<[unknown, unknown]>) keep(name, value);
  }
  return out;
}
