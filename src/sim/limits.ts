/**
 * Bounds that keep a long-running `gw sim` small whatever its clients send: a request body limit (413 past it)
 * and a request log that forgets the oldest entries and keeps bodies only for the newest ones.
 */
import type { LoggedRequest } from './server.js';

/** Largest request body accepted (a video reference or a Base64 image fits easily). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Requests remembered in `Sim.requests` (the oldest are dropped past twice this many). */
export const REQUEST_LOG_LIMIT = 5_000;

/** Newest requests whose parsed body is kept; older entries keep method, path, headers and status only. */
export const REQUEST_BODIES_KEPT = 200;

/**
 * Trims the log after a push: bodies beyond the newest REQUEST_BODIES_KEPT are dropped (the entry stays), and
 * past 2 × REQUEST_LOG_LIMIT entries the oldest are removed in one splice (amortised O(1) per request).
 */
export function keepRequestLogBounded(log: LoggedRequest[]): void {
  const old = log[log.length - 1 - REQUEST_BODIES_KEPT];
  if (old !== undefined && old.body !== undefined) old.body = undefined;
  if (log.length > 2 * REQUEST_LOG_LIMIT) log.splice(0, log.length - REQUEST_LOG_LIMIT);
}
