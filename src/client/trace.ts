/**
 * W3C Trace Context for the gateway's requests: every request carries `traceparent: 00-<trace>-<span>-01`, one
 * trace id per command (every client of the command shares one TraceContext), a new span id per request (each
 * retry is a request of its own), the sampled flag set, so a gateway that traces joins gw's trace. Ids are random
 * bytes from a pool refilled in blocks: a load test's thousands of requests a second pay for a slice of a buffer,
 * not for a call into the crypto library each.
 */
import { randomFillSync } from 'node:crypto';
import { tokensOf, type Tokens } from '../contract/usage.js';

const pool = Buffer.alloc(4096);
let at = pool.length;

/** `bytes` random bytes as lower-case hex, never all zeros (W3C: an all-zero id is invalid). */
function randomHex(bytes: number): string {
  for (;;) {
    if (at + bytes > pool.length) {
      randomFillSync(pool);
      at = 0;
    }
    const hex = pool.toString('hex', at, at + bytes);
    at += bytes;
    if (!/^0+$/.test(hex)) return hex;
  }
}

const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;

/** The trace of one command: its id and the ids of its requests' spans. */
export class TraceContext {
  readonly traceId: string;

  /** `traceId`: 32 lower-case hex digits, not all zeros (default: a new random one). */
  constructor(traceId?: string) {
    if (traceId !== undefined && !TRACE_ID.test(traceId)) {
      throw new TypeError(`trace id "${traceId}" is not 32 lower-case hex digits (and not all zeros)`);
    }
    this.traceId = traceId ?? randomHex(16);
  }

  /** A new span id: 16 hex digits. */
  spanId(): string {
    return randomHex(8);
  }

  /** The `traceparent` header value of the request whose span id is `spanId` (version 00, sampled). */
  header(spanId: string): string {
    return `00-${this.traceId}-${spanId}-01`;
  }
}

/**
 * One finished request as a span, for a telemetry exporter (`onSpan`): what it asked, what came back, and its
 * timings. Never the token, headers or bodies.
 */
export interface RequestSpan {
  traceId: string;
  spanId: string;
  method: string;
  /** The path relative to the base URL, without the query (or the absolute URL's path on another origin). */
  path: string;
  /** The origin the request went to. */
  origin: string;
  /** When it started (Unix epoch, milliseconds) and how long it took until its answer ended or it failed. */
  startUnixMs: number;
  durationMs: number;
  /** The HTTP status (undefined when no answer came). */
  status?: number | undefined;
  requestId?: string | undefined;
  /** The error code of a failed request (the gateway's, a stream's, or the client's such as `timeout`). */
  errorCode?: string | undefined;
  /** The body's `model` (or `model_name`), when it names one. */
  model?: string | undefined;
  /** Streams: until the first event, and the gaps between later ones. */
  ttftMs?: number | undefined;
  chunkGapsMs?: readonly number[] | undefined;
  /** Every input token, those read from a cache included (OTel `gen_ai.usage.input_tokens`). */
  inputTokens?: number | undefined;
  /** Of the input tokens, those read from a cache (OTel `gen_ai.usage.cache_read.input_tokens`). */
  cachedInputTokens?: number | undefined;
  outputTokens?: number | undefined;
}

/** Gaps between stream events kept per span (a hostile endless stream must not grow memory). */
export const MAX_SPAN_GAPS = 32_768;

/** A span's token figures, from the tokens of its answer's usage (contract/usage.ts reads every API's). */
export function spanTokens(
  t: Tokens,
): Pick<RequestSpan, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'> {
  const out: Pick<RequestSpan, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'> = {};
  if (t.input !== undefined) out.inputTokens = t.input;
  if (t.cached !== undefined) out.cachedInputTokens = t.cached;
  if (t.output !== undefined) out.outputTokens = t.output;
  return out;
}

/** The token figures of an answer's body: its `usage`, if it has one. */
export function usageOf(
  data: unknown,
): Pick<RequestSpan, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'> {
  const u = data !== null && typeof data === 'object' ? (data as { usage?: unknown }).usage : undefined;
  return spanTokens(tokensOf(u));
}
