/** Turns Node's and undici's network errors into one line a user can act on. */
import type { ConnectionFailure } from './errors.js';

/** A network failure, classified. */
export interface NetworkFailure {
  code: ConnectionFailure | 'timeout';
  message: string;
  host: string;
  tls?: 'certificate' | 'protocol';
}

/** undici (and Node's net) codes of a connection that was never established: no byte of the request left. */
export const NEVER_CONNECTED_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CONNECT',
]);

/** OpenSSL's verification failures: the peer's certificate is not trusted for this name. */
const CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
]);

const CERT_TEXT: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'the certificate chain ends in an untrusted self-signed CA',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the certificate is not signed by a trusted CA',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the certificate is not signed by a trusted CA',
  CERT_HAS_EXPIRED: 'the certificate has expired',
  CERT_NOT_YET_VALID: 'the certificate is not valid yet',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate is for another host name',
};

/** The innermost error with a code (undici sometimes wraps the socket's error). */
function rootCause(e: unknown): {
  code?: string;
  message: string;
  hostname?: string;
  address?: string;
  port?: number;
} {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur !== null && typeof cur === 'object'; i++) {
    const c = cur as { code?: unknown; cause?: unknown };
    if (typeof c.code === 'string' && !c.code.startsWith('UND_ERR_')) break;
    if (c.cause === undefined) break;
    cur = c.cause;
  }
  const o = (cur ?? {}) as {
    code?: unknown;
    message?: unknown;
    hostname?: unknown;
    address?: unknown;
    port?: unknown;
  };
  return {
    ...(typeof o.code === 'string' ? { code: o.code } : {}),
    message: typeof o.message === 'string' ? o.message : String(cur),
    ...(typeof o.hostname === 'string' ? { hostname: o.hostname } : {}),
    ...(typeof o.address === 'string' ? { address: o.address } : {}),
    ...(typeof o.port === 'number' ? { port: o.port } : {}),
  };
}

/** The system error code under undici's wrapping (`EMFILE`, `ECONNRESET`…), if there is one. */
export function rootCode(e: unknown): string | undefined {
  return rootCause(e).code;
}

/** Classifies a failed connection to `host` (host:port of the URL asked for). */
export function describeNetworkError(e: unknown, host: string): NetworkFailure {
  const r = rootCause(e);
  const code = r.code ?? '';
  const firstLine = r.message.split('\n')[0] ?? '';
  if (code === 'ECONNREFUSED') {
    const where = r.address !== undefined && r.port !== undefined ? `${r.address}:${r.port}` : host;
    return { code: 'connection_refused', host: where, message: `connection refused by ${where}` };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NONAME') {
    const name = r.hostname ?? host;
    const why = code === 'EAI_AGAIN' ? 'the resolver did not answer' : 'no such host';
    return { code: 'dns_failed', host: name, message: `cannot resolve ${name} (${why})` };
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') {
    return { code: 'timeout', host, message: `could not connect to ${host} in time` };
  }
  if (CERT_CODES.has(code)) {
    const what = CERT_TEXT[code] ?? `certificate rejected (${code})`;
    return { code: 'tls_failed', tls: 'certificate', host, message: `TLS to ${host} failed: ${what}` };
  }
  if (
    code === 'EPROTO' ||
    code.startsWith('ERR_SSL_') ||
    /SSL routines|wrong version number/i.test(firstLine)
  ) {
    const why = /wrong version number|packet length too long|http request/i.test(firstLine)
      ? 'the server does not speak TLS on this port (http instead of https?)'
      : 'no common TLS protocol';
    return { code: 'tls_failed', tls: 'protocol', host, message: `TLS to ${host} failed: ${why}` };
  }
  if (code === 'GW_PROXY_REFUSED') {
    // transport.ts ProxyRefusedError: the proxy answered CONNECT with another status than 200 (407: credentials).
    return { code: 'proxy_failed', host, message: `${firstLine}, for the tunnel to ${host}` };
  }
  const reset = code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
  return {
    code: 'connection_error',
    host,
    message: `${reset ? 'the connection to ' + host + ' was closed' : 'connection to ' + host + ' failed'}: ${firstLine}${code !== '' ? ` (${code})` : ''}`,
  };
}

/** True when `e` is an AbortError raised by a cancelled signal. */
export function isAbortError(e: unknown): boolean {
  return e instanceof Error && (e.name === 'AbortError' || (e as { code?: unknown }).code === 'ABORT_ERR');
}
