/**
 * Extra request headers (`--header 'Name: value'`, GW_HEADERS, a profile's `headers`): their syntax, the headers a
 * user may not set, how they merge, and how they are shown. The client sends them to the gateway's origin only.
 */
import { UsageError } from './errors.js';

/** One extra header: its name as the user wrote it, and its value. */
export interface ExtraHeader {
  name: string;
  value: string;
}

/** RFC 9110 §5.6.2: a field name is a token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers that frame the message or the connection: gw (undici) writes them from the URL and the body, and a
 * second value would corrupt the request or reach another host. Never settable.
 */
const FRAMING = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  'proxy-authorization',
]);

/**
 * Headers gw sets itself: the token, the body's type, what answer it reads, and the trace it joins. `--header`
 * replaces them only with `--header-override` (the user means it); `gw api` sets Content-Type and Accept freely.
 */
export const OWN_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'accept-encoding',
  'user-agent',
  'traceparent',
] as const;
const OWN = new Set<string>(OWN_HEADERS);
const BODY = new Set(['content-type', 'accept']);

/** Names of headers whose value is a credential: also masked wherever gw prints (as the token is). */
const CREDENTIAL = /auth|key|token|secret|passw|cookie|session|signature|credential/i;

/** True when a header of this name carries a credential (its value is then masked in every output). */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL.test(name);
}

/**
 * Checks a header's name and value (`from` names where it came from: `--header`, `GW_HEADERS`, a profile key). A
 * value must be one line: no CR, LF, NUL or other control character but tab (RFC 9110 §5.5). The value is never
 * quoted in the error: it may be a secret.
 */
export function checkHeader(name: string, value: string, from: string): void {
  if (!TOKEN.test(name)) {
    throw new UsageError(
      `${from}: "${visible(name)}" is not a header name (letters, digits and ${"!#$%&'*+.^_`|~-"} only, RFC 9110)`,
      { field: from },
    );
  }
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) {
      const what =
        c === 0x0d || c === 0x0a ? 'a line break (CR/LF)' : c === 0 ? 'a NUL byte' : 'a control character';
      throw new UsageError(`${from}: the value of ${name} contains ${what}; a header value is one line`, {
        field: from,
      });
    }
  }
  if (FRAMING.has(name.toLowerCase())) {
    throw new UsageError(`${from}: ${name} cannot be set: gw writes it from the request itself`, {
      field: from,
      hint:
        name.toLowerCase() === 'host'
          ? 'the Host header is the host of --base-url; to reach the gateway by another address, use a name that resolves to it'
          : undefined,
    });
  }
}

/** Parses `Name: value` (curl's and gh's form); the value is trimmed. `Name:` alone (empty value) is allowed. */
export function parseHeader(text: string, from: string): ExtraHeader {
  const colon = text.indexOf(':');
  if (colon <= 0) {
    throw new UsageError(`${from}: "${visible(text.slice(0, 40))}" is not 'Name: value'`, {
      field: from,
      hint: "write it as --header 'X-Route: blue'",
    });
  }
  const name = text.slice(0, colon).trim();
  const value = text.slice(colon + 1).trim();
  checkHeader(name, value, from);
  return { name, value };
}

/**
 * Merges header lists, later lists winning per name (case-insensitive): the profile, then GW_HEADERS, then
 * `--header`. An empty value removes the header (curl's `-H 'Name:'`), so one run can drop a profile's header.
 */
export function mergeHeaders(...lists: ReadonlyArray<readonly ExtraHeader[]>): ExtraHeader[] {
  const byName = new Map<string, ExtraHeader>();
  for (const list of lists) {
    for (const h of list) {
      const key = h.name.toLowerCase();
      byName.delete(key);
      if (h.value !== '') byName.set(key, h);
    }
  }
  return [...byName.values()];
}

/**
 * Refuses a header gw sets itself unless the user opted in (`--header-override`); `body` (gw api) lets Content-Type
 * and Accept through, since they describe the call's own body and answer.
 */
export function checkOverride<H extends ExtraHeader>(
  headers: readonly H[],
  o: { override: boolean; body: boolean; from: (h: H) => string },
): void {
  if (o.override) return;
  for (const h of headers) {
    const key = h.name.toLowerCase();
    if (!OWN.has(key) || (o.body && BODY.has(key))) continue;
    throw new UsageError(
      `${o.from(h)}: ${h.name} is a header gw sets itself; add --header-override to replace it`,
      {
        field: o.from(h),
        hint:
          key === 'authorization'
            ? 'gw sends the token as Authorization: Bearer (GW_TOKEN, gw login); --header-override sends your value instead'
            : undefined,
      },
    );
  }
}

/** The headers as the client sends them: lower-case names (one value per name, whatever the case typed). */
export function headerRecord(headers: readonly ExtraHeader[]): Record<string, string> {
  return Object.fromEntries(headers.map((h) => [h.name.toLowerCase(), h.value]));
}

/** `Name: …last4`: how gw shows a header (its value may be a secret). */
export function showHeader(h: ExtraHeader): string {
  return `${h.name}: ${maskValue(h.value)}`;
}

/** A header value as gw shows it: `…last4` (short values as `…`). */
export function maskValue(v: string): string {
  return v.length <= 8 ? '…' : `…${v.slice(-4)}`;
}

/** Text with control characters shown as `\xNN`, for quoting a bad name in an error. */
function visible(text: string): string {
  let out = '';
  for (const c of text) {
    const n = c.charCodeAt(0);
    out += n < 0x20 || n === 0x7f ? `\\x${n.toString(16).padStart(2, '0')}` : c;
  }
  return out;
}
