/**
 * What a failed create means for billing. A 429 means nothing was created (resend it); a connection that failed
 * before the request was written created nothing either (resend it); an error answer of the gateway created
 * nothing (the item failed); anything else — a connection lost after the request was written, a timeout waiting
 * for the answer, an answer that could not be read, a 502/503/504 or a 5xx that is not the gateway's JSON error
 * (a front proxy that gave up while the gateway may have accepted the create) — may have created it: in doubt,
 * never resent silently, and its estimate stays in the spend.
 */
import { NEVER_CONNECTED_CODES } from '../client/network-errors.js';
import { GwError, InterruptedError, TimeLimitError, UsageError } from '../core/errors.js';

/** How a create ended, when it did not succeed. */
export type SendOutcome =
  | { kind: 'rate-limited'; retryAfterMs: number | undefined; code: string; message: string }
  | { kind: 'not-sent'; code: string; message: string }
  | {
      kind: 'failed';
      status: number | undefined;
      code: string;
      message: string;
      body: unknown;
      requestId?: string | undefined;
    }
  | { kind: 'auth'; error: Error }
  | { kind: 'doubt'; code: string; message: string; requestId?: string | undefined };

/** Statuses a proxy in front of the gateway answers while the gateway may still be working on the request. */
const PROXY_STATUSES = new Set([502, 503, 504]);

/** The client's own names for failures before any request byte could leave (refused, DNS, TLS, proxy tunnel). */
const NOT_SENT_FAILURES = new Set(['connection_refused', 'dns_failed', 'tls_failed', 'proxy_failed']);

/** Every `code` found along an error's cause chain. */
function codes(e: unknown): string[] {
  const out: string[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 8 && cur !== null && typeof cur === 'object'; i++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === 'string') out.push(c);
    const errors = (cur as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const x of errors) out.push(...codes(x));
    cur = (cur as { cause?: unknown }).cause;
  }
  return out;
}

function field<T>(e: unknown, name: string, type: 'number' | 'string'): T | undefined {
  const v = (e as Record<string, unknown> | null)?.[name];
  return typeof v === type ? (v as T) : undefined;
}

/** Classifies a create's failure (gw's own errors and the client's, by their fields, not their classes). */
export function classify(e: unknown): SendOutcome {
  const message = e instanceof Error ? e.message : String(e);
  const status = field<number>(e, 'status', 'number');
  const code = field<string>(e, 'code', 'string');
  const requestId = field<string>(e, 'requestId', 'string');
  if (e instanceof UsageError || (status === undefined && code === 'invalid_input')) {
    return { kind: 'failed', status: undefined, code: code ?? 'invalid_input', message, body: null };
  }
  if (status !== undefined && status >= 400 && code !== 'response_shape') {
    if (status === 429) {
      return {
        kind: 'rate-limited',
        retryAfterMs: field<number>(e, 'retryAfterMs', 'number'),
        code: code ?? 'rate_limited',
        message,
      };
    }
    if (status === 401 || status === 403) {
      return { kind: 'auth', error: e instanceof Error ? e : new GwError(message) };
    }
    const body = (e as { body?: unknown }).body;
    if (status >= 500 && (PROXY_STATUSES.has(status) || body === undefined)) {
      return { kind: 'doubt', code: code ?? `http_${status}`, message, requestId };
    }
    return { kind: 'failed', status, code: code ?? `http_${status}`, message, body: body ?? null, requestId };
  }
  const interrupted = e instanceof InterruptedError || code === 'interrupted';
  if (!interrupted && !(e instanceof TimeLimitError)) {
    if (code !== undefined && NOT_SENT_FAILURES.has(code)) return { kind: 'not-sent', code, message };
    const c = codes(e);
    const connect = c.find((x) => NEVER_CONNECTED_CODES.has(x));
    if (connect !== undefined) return { kind: 'not-sent', code: connect, message };
  }
  return {
    kind: 'doubt',
    code: interrupted ? 'interrupted' : (code ?? codes(e)[0] ?? 'connection_error'),
    message,
    requestId,
  };
}
