/** The one rule for a gateway base URL, used by the client and by every place a user gives one. */

/** Why a base URL was refused. */
export class BaseUrlError extends Error {
  /** `not_url`: unparseable; `scheme`: not http/https; `shape`: a query or fragment. */
  readonly reason: 'not_url' | 'scheme' | 'shape';
  constructor(message: string, reason: BaseUrlError['reason']) {
    super(message);
    this.name = 'BaseUrlError';
    this.reason = reason;
  }
}

/**
 * Normalises a base URL: trims it, drops trailing slashes and one trailing `/v1` (the client adds `/v1/…` itself),
 * keeps any other path prefix. Throws BaseUrlError for text that is not a URL or a scheme other than http/https.
 */
export function normalizeBaseUrl(text: string): string {
  const trimmed = text.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new BaseUrlError(`"${text}" is not a URL (use e.g. https://gateway.example.com)`, 'not_url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BaseUrlError(
      `"${text}" uses ${url.protocol.slice(0, -1)}; only http and https are supported`,
      'scheme',
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new BaseUrlError(
      `"${text}" has a query or fragment; give only scheme, host, port and path prefix`,
      'shape',
    );
  }
  return trimmed.replace(/\/+$/, '').replace(/\/v1$/, '').replace(/\/+$/, '');
}
