/**
 * What a failed create means for billing. A 429 means nothing was created (resend it); a connection that failed
 * before the request was written created nothing either (resend it); an error answer created nothing (the item
 * failed); anything else — a connection lost after the request was written, a timeout waiting for the answer, an
 * answer that could not be read — may have created it: in doubt, never resent silently.
 */
import { GwError, InterruptedError, TimeoutError, UsageError } from '../core/errors.js';

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
  | { kind: 'auth'; error: GwError }
  | { kind: 'doubt'; code: string; message: string; requestId?: string | undefined };

/** undici (and Node's net) codes of a connection that was never established: no byte of the request left. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CONNECT',
]);

/** The first `code` found along an error's cause chain. */
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

function statusOf(e: unknown): number | undefined {
  const s = (e as { status?: unknown }).status;
  return typeof s === 'number' ? s : undefined;
}

/** Classifies a create's failure. */
export function classify(e: unknown): SendOutcome {
  const message = e instanceof Error ? e.message : String(e);
  const status = statusOf(e);
  const gw = e instanceof GwError ? e : undefined;
  const requestId = gw?.requestId;
  if (e instanceof UsageError) {
    return { kind: 'failed', status: undefined, code: e.code, message, body: null };
  }
  if (status !== undefined && status >= 400 && gw !== undefined && gw.code !== 'response_shape') {
    if (status === 429) {
      const ra = (e as { retryAfterMs?: unknown }).retryAfterMs;
      return {
        kind: 'rate-limited',
        retryAfterMs: typeof ra === 'number' ? ra : undefined,
        code: gw.code,
        message,
      };
    }
    if (status === 401 || status === 403) return { kind: 'auth', error: gw };
    return {
      kind: 'failed',
      status,
      code: gw.code,
      message,
      body: (gw as { body?: unknown }).body ?? null,
      requestId,
    };
  }
  if (!(e instanceof TimeoutError) && !(e instanceof InterruptedError)) {
    const c = codes(e);
    if (c.some((x) => CONNECT_CODES.has(x))) {
      return { kind: 'not-sent', code: c.find((x) => CONNECT_CODES.has(x)) ?? 'connect', message };
    }
  }
  const code =
    e instanceof TimeoutError
      ? 'timeout'
      : e instanceof InterruptedError
        ? 'interrupted'
        : (gw?.code ?? codes(e)[0] ?? 'connection_error');
  return { kind: 'doubt', code, message, requestId };
}
