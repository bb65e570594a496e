/** The one rule for a gateway base URL, used by the client and by every place a user gives one. */

/** Why a base URL was refused. */
export class BaseUrlError extends Error {
  /**
   * `not_url`: missing or unparseable; `scheme`: not http/https; `shape`: a query or fragment; `userinfo`: a user
   * name or password in it.
   */
  readonly reason: 'not_url' | 'scheme' | 'shape' | 'userinfo';
  constructor(message: string, reason: BaseUrlError['reason']) {
    super(message);
    this.name = 'BaseUrlError';
    this.reason = reason;
  }
}

/**
 * `text` with the user name and password of every URL in it masked (`https://user:***@host`, a bare user name as
 * `***`, which may itself be a secret), so a URL can be shown in a message, a warning or a listing. A text
 * without a scheme (`user:pw@proxy:3128`, as proxy settings may be written) is read as starting with one.
 */
export function maskUserinfo(text: string): string {
  const mask = (info: string): string => {
    const colon = info.indexOf(':');
    return colon === -1 ? '***' : `${info.slice(0, colon)}:***`;
  };
  const masked = text.replace(
    /([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@]+)@/gi,
    (_m, scheme: string, info: string) => `${scheme}${mask(info)}@`,
  );
  if (masked !== text || text.includes('://')) return masked;
  return text.replace(/^([^\s/?#@]+)@/, (_m, info: string) => `${mask(info)}@`);
}

/**
 * Normalises a base URL: trims it, drops trailing slashes and one trailing `/v1` (the client adds `/v1/…` itself),
 * keeps any other path prefix. Throws BaseUrlError for a missing value, text that is not a URL, a scheme other
 * than http/https, a query or fragment, or a user name or password (gw authenticates with its token: a password
 * in the URL would be stored, printed and journalled with it). Messages show the URL with its password masked.
 */
export function normalizeBaseUrl(text: string): string {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new BaseUrlError('a base URL is required (e.g. https://gateway.example.com)', 'not_url');
  }
  const trimmed = text.trim();
  const shown = maskUserinfo(text);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new BaseUrlError(`"${shown}" is not a URL (use e.g. https://gateway.example.com)`, 'not_url');
  }
  if (url.username !== '' || url.password !== '') {
    throw new BaseUrlError(
      `"${maskUserinfo(url.href)}" holds a user name or password; give the address alone (the token authenticates)`,
      'userinfo',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BaseUrlError(
      `"${shown}" uses ${url.protocol.slice(0, -1)}; only http and https are supported`,
      'scheme',
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new BaseUrlError(
      `"${shown}" has a query or fragment; give only scheme, host, port and path prefix`,
      'shape',
    );
  }
  return trimmed.replace(/\/+$/, '').replace(/\/v1$/, '').replace(/\/+$/, '');
}
