/** Capped exponential backoff with jitter, and Retry-After parsing. Pure: the clock and randomness are injected. */

/** Backoff settings; delays in milliseconds. */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor?: number;
  /** Returns [0, 1); the delay is scaled into [50%, 100%] of the exponential value. */
  random?: () => number;
}

/** Delay before retry number `attempt` (0-based). */
export function backoffDelay(attempt: number, o: BackoffOptions): number {
  const base = Math.min(o.maxMs, o.initialMs * (o.factor ?? 2) ** attempt);
  const r = (o.random ?? Math.random)();
  return Math.round(base * (0.5 + r / 2));
}

/** Parses Retry-After (seconds or HTTP date) and retry-after-ms; returns milliseconds or undefined. */
export function parseRetryAfter(
  headers: Record<string, string | string[] | undefined>,
  now: () => number = Date.now,
): number | undefined {
  const pick = (k: string): string | undefined => {
    const v = headers[k];
    return Array.isArray(v) ? v[0] : v;
  };
  const ms = pick('retry-after-ms');
  if (ms !== undefined && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = pick('retry-after');
  if (ra === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.round(Number(ra) * 1000);
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now());
}

/** A sleep that ends early (rejecting with an AbortError) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
