/**
 * W3C Trace Context for the gateway's requests: every request carries `traceparent: 00-<trace>-<span>-01`, one
 * trace id per command (every client of the command shares one TraceContext), a new span id per request (each
 * retry is a request of its own), the sampled flag set, so a gateway that traces joins gw's trace. Ids are random
 * bytes from a pool refilled in blocks: a load test's thousands of requests a second pay for a slice of a buffer,
 * not for a call into the crypto library each.
 */
import { randomFillSync } from 'node:crypto';

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
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
}

/** Gaps between stream events kept per span (a hostile endless stream must not grow memory). */
export const MAX_SPAN_GAPS = 32_768;

/** Input and output tokens of an answer's `usage` (chat, responses, messages and embeddings spell them apart). */
export function usageOf(data: unknown): { inputTokens?: number; outputTokens?: number } {
  const u = data !== null && typeof data === 'object' ? (data as { usage?: unknown }).usage : undefined;
  if (u === null || typeof u !== 'object') return {};
  const r = u as Record<string, unknown>;
  const num = (...keys: string[]): number | undefined => {
    for (const k of keys) {
      const v = r[k];
      if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v;
    }
    return undefined;
  };
  const out: { inputTokens?: number; outputTokens?: number } = {};
  const input = num('prompt_tokens', 'input_tokens');
  const output = num('completion_tokens', 'output_tokens');
  if (input !== undefined) out.inputTokens = input;
  if (output !== undefined) out.outputTokens = output;
  return out;
}
