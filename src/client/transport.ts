/**
 * The connection pool of a GatewayClient, on undici's public API only. `EnvHttpProxyAgent` honours HTTPS_PROXY,
 * HTTP_PROXY and NO_PROXY (and their lower-case forms) as curl does: an https gateway is reached through a CONNECT
 * tunnel (the bearer token travels inside TLS, the proxy sees only the host name), a plain-http gateway through an
 * ordinary forward request. Extra certificate authorities (`ca`) are added to Node's own trust store (which already
 * holds NODE_EXTRA_CA_CERTS), for direct and tunnelled connections alike.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';

/** Settings of the default dispatcher. */
export interface TransportOptions {
  /** Limit of a TCP/TLS connect, in milliseconds. */
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

/** The default dispatcher: keep-alive pool per origin, proxies from the environment (if any), extra CAs. */
export function createDispatcher(o: TransportOptions): Dispatcher {
  const extra = o.ca === undefined ? [] : typeof o.ca === 'string' ? [o.ca] : [...o.ca];
  // Node replaces (not extends) its trust store when `ca` is given: keep the built-in roots. NODE_EXTRA_CA_CERTS
  // is honoured by Node only while `ca` is absent, so read it here too.
  const env = o.env ?? process.env;
  const envExtra = env.NODE_EXTRA_CA_CERTS;
  const tls =
    extra.length > 0
      ? {
          ca: [
            ...rootCertificates,
            ...(envExtra !== undefined && envExtra !== '' ? [readPem(envExtra)] : []),
            ...extra,
          ],
        }
      : {};
  const proxies = proxySettings(env);
  const connect = { timeout: o.connectTimeoutMs, ...tls };
  const pool = {
    keepAliveTimeout: 4_000,
    ...(o.connections !== undefined ? { connections: o.connections } : {}),
  };
  // No proxy configured: a plain Agent. EnvHttpProxyAgent would parse every request's origin and match it against
  // NO_PROXY only to pick the same direct agent (a visible cost at thousands of requests a second in gw batch).
  if (proxies.httpProxy === '' && proxies.httpsProxy === '') return new Agent({ ...pool, connect });
  const options = {
    ...pool,
    connect,
    // Through a proxy, the TLS session to the gateway runs inside the tunnel: the same trust store.
    requestTls: { timeout: o.connectTimeoutMs, ...tls },
    // A plain-http gateway goes through a plain-http proxy as a forward request (what curl does; most corporate
    // proxies allow CONNECT only to port 443). https always tunnels.
    proxyTunnel: false,
    // Read here rather than by undici from process.env, so an embedding program (and gw's tests) can pass its own.
    ...proxies,
  };
  return new EnvHttpProxyAgent(options);
}

function readPem(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // Node itself only warns about an unreadable NODE_EXTRA_CA_CERTS
  }
}
