/**
 * The connection pool of a GatewayClient, on undici's public API only. `EnvHttpProxyAgent` honours HTTPS_PROXY,
 * HTTP_PROXY and NO_PROXY (and their lower-case forms) as curl does: an https gateway is reached through a CONNECT
 * tunnel (the bearer token travels inside TLS, the proxy sees only the host name), a plain-http gateway through an
 * ordinary forward request. Extra certificate authorities (`ca`) are added to Node's own trust store (which already
 * holds NODE_EXTRA_CA_CERTS), for direct and tunnelled connections alike.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { EnvHttpProxyAgent, type Dispatcher } from 'undici';

/** Settings of the default dispatcher. */
export interface TransportOptions {
  /** Limit of a TCP/TLS connect, in milliseconds. */
  connectTimeoutMs: number;
  /** Extra trusted certificates (PEM text), added to the built-in ones. */
  ca?: string | readonly string[] | undefined;
}

/** The default dispatcher: keep-alive pool per origin, proxies from the environment, extra CAs. */
export function createDispatcher(o: TransportOptions): Dispatcher {
  const extra = o.ca === undefined ? [] : typeof o.ca === 'string' ? [o.ca] : [...o.ca];
  // Node replaces (not extends) its trust store when `ca` is given: keep the built-in roots. NODE_EXTRA_CA_CERTS
  // is honoured by Node only while `ca` is absent, so read it here too.
  const envExtra = process.env.NODE_EXTRA_CA_CERTS;
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
  const options = {
    keepAliveTimeout: 4_000,
    connect: { timeout: o.connectTimeoutMs, ...tls },
    // Through a proxy, the TLS session to the gateway runs inside the tunnel: the same trust store.
    requestTls: { timeout: o.connectTimeoutMs, ...tls },
    // A plain-http gateway goes through a plain-http proxy as a forward request (what curl does; most corporate
    // proxies allow CONNECT only to port 443). https always tunnels.
    proxyTunnel: false,
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
