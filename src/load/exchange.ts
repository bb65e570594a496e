/**
 * One timed request of `gw load`, driven through undici's public `Dispatcher.dispatch` handler API so every
 * timestamp is taken in the callback that delivers the bytes (`onResponseData`), before any JSON is parsed:
 * time to first token is the arrival of the network read that completed the first content event, inter-token gaps
 * are the gaps between those arrivals. Stream events are framed by eventsource-parser; only events that matter
 * (usage, errors, terminals) are parsed as JSON, after their timestamp was taken.
 *
 * A request fails when: the status is not 2xx; the connection fails or times out; a stream carries an error event
 * (chat: a frame with a top-level `error`; responses: `error` or `response.failed`; messages: `error`) or ends
 * before its terminal event (`[DONE]`, `response.completed|incomplete`, `message_stop`); or a 200 body is not JSON.
 */
import { performance } from 'node:perf_hooks';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import type { Prepared, TextApi } from './workload.js';

/** What one request produced (times in ms). */
export interface Outcome {
  api: TextApi;
  stream: boolean;
  ok: boolean;
  /** HTTP status (0 when no answer came). */
  status: number;
  /** Error code of a failure: the gateway's `error.code`, a stream error's code, or gw's (`timeout`, `ECONNRESET`…). */
  code?: string;
  requestId?: string;
  /** Scheduled (open loop) or actual (closed loop) start, relative to the run's start. */
  startMs: number;
  /** How late the request left compared to its schedule (open loop). */
  lagMs: number;
  e2eMs: number;
  ttftMs?: number;
  /** Gaps between successive content events. */
  itlMs: number[];
  /** Output tokens from the gateway's usage; undefined when it reported none. */
  outputTokens?: number;
  /** True when the run was interrupted while this request was in flight (not counted). */
  cancelled?: boolean;
}

/** Bytes kept of a successful non-streamed body (for its usage) and of an error body (for its code). */
const MAX_OK_BODY = 8 << 20;
const MAX_ERROR_BODY = 64 << 10;

/** Where to send, with what credentials. */
export interface Target {
  dispatcher: Dispatcher;
  /** Path prefix of the base URL (without trailing slash), e.g. `` or `/gateway`. */
  prefix: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** Fields of a JSON body or event the recorder reads. */
interface Parsed {
  error?: { code?: unknown; type?: unknown } | string | null;
  usage?: Record<string, unknown> | null;
  response?: { usage?: Record<string, unknown> | null; error?: { code?: unknown } | null; status?: unknown };
  code?: unknown;
  type?: unknown;
  status?: unknown;
}

function tryParse(text: string): Parsed | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

function usageTokens(u: Record<string, unknown> | null | undefined): number | undefined {
  const n = u?.completion_tokens ?? u?.output_tokens;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** The error code of an error body in any of the gateway's envelopes. */
export function errorCode(body: Parsed | undefined, status: number): string {
  const e = body?.error;
  if (typeof e === 'object' && e !== null) {
    if (typeof e.code === 'string' && e.code !== '') return e.code;
    if (typeof e.code === 'number') return String(e.code);
    if (typeof e.type === 'string' && e.type !== '') return e.type;
  }
  if (typeof body?.code === 'string' && body.code !== '') return body.code;
  return `http_${status}`;
}

const CONTENT = /"(?:content|refusal)":"(?!")/;

/**
 * Sends one request. `t0` is the performance.now() instant latency is measured from (the scheduled start in the
 * open loop); `runStart` is the run's origin for `startMs`. Never rejects.
 */
export function exchange(
  target: Target,
  req: Prepared,
  t0: number,
  runStart: number,
  signal: AbortSignal,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const sentAt = performance.now();
    const out: Outcome = {
      api: req.api,
      stream: req.stream,
      ok: false,
      status: 0,
      startMs: t0 - runStart,
      lagMs: Math.max(0, sentAt - t0),
      e2eMs: 0,
      itlMs: [],
    };
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let sse = false;
    let parser: EventSourceParser | undefined;
    let decoder: InstanceType<typeof TextDecoder> | undefined;
    let chunkAt = 0;
    let lastTokenAt = 0;
    let done = false;
    let failedCode: string | undefined;
    const parts: Buffer[] = [];
    let kept = 0;
    let limit = MAX_OK_BODY;

    const finish = (code?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      out.e2eMs = performance.now() - t0;
      if (code !== undefined) {
        out.ok = false;
        out.code = code;
      }
      resolve(out);
    };
    const timer = setTimeout(() => {
      controller?.abort(Object.assign(new Error('timeout'), { code: 'timeout' }));
      finish('timeout');
    }, target.timeoutMs);
    const onAbort = (): void => {
      out.cancelled = true;
      controller?.abort(Object.assign(new Error('interrupted'), { code: 'interrupted' }));
      finish('interrupted');
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });

    const token = (): void => {
      if (out.ttftMs === undefined) out.ttftMs = chunkAt - t0;
      else out.itlMs.push(chunkAt - lastTokenAt);
      lastTokenAt = chunkAt;
    };
    const onEvent = (e: EventSourceMessage): void => {
      if (done || failedCode !== undefined) return;
      const data = e.data;
      switch (req.api) {
        case 'chat': {
          if (data === '[DONE]') {
            done = true;
            return;
          }
          if (data.includes('"error":')) {
            const p = tryParse(data);
            if (p?.error !== undefined && p.error !== null) {
              failedCode = errorCode(p, 200);
              return;
            }
          }
          if (CONTENT.test(data) || data.includes('"tool_calls":[')) token();
          if (data.includes('"usage":{')) {
            const n = usageTokens(tryParse(data)?.usage);
            if (n !== undefined) out.outputTokens = n;
          }
          return;
        }
        case 'responses': {
          const type = e.event ?? '';
          if (type === 'response.output_text.delta' || type === 'response.refusal.delta') token();
          else if (type === 'response.completed' || type === 'response.incomplete') {
            done = true;
            const n = usageTokens(tryParse(data)?.response?.usage);
            if (n !== undefined) out.outputTokens = n;
          } else if (type === 'response.failed') {
            const p = tryParse(data);
            const c = p?.response?.error?.code;
            failedCode = typeof c === 'string' ? c : 'response_failed';
          } else if (type === 'error') {
            const p = tryParse(data);
            failedCode = typeof p?.code === 'string' ? p.code : errorCode(p, 200);
          }
          return;
        }
        case 'messages': {
          const type = e.event ?? '';
          if (type === 'content_block_delta') token();
          else if (type === 'message_delta') {
            // Cumulative totals: overwrite, never add.
            const n = usageTokens(tryParse(data)?.usage);
            if (n !== undefined) out.outputTokens = n;
          } else if (type === 'message_stop') done = true;
          else if (type === 'error') failedCode = errorCode(tryParse(data), 200);
          return;
        }
        case 'embeddings':
          return;
      }
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (settled) c.abort(new Error('settled'));
      },
      onResponseStart(_c, statusCode, headers) {
        out.status = statusCode;
        const rid = headers['x-gateway-request-id'] ?? headers['request-id'];
        if (typeof rid === 'string') out.requestId = rid;
        const ct = headers['content-type'];
        sse =
          statusCode >= 200 &&
          statusCode < 300 &&
          req.stream &&
          typeof ct === 'string' &&
          ct.includes('text/event-stream');
        if (sse) {
          decoder = new TextDecoder('utf-8');
          parser = createParser({ onEvent });
        }
        if (statusCode >= 300) limit = MAX_ERROR_BODY;
      },
      onResponseData(_c, chunk) {
        chunkAt = performance.now();
        if (settled) return;
        if (parser !== undefined && decoder !== undefined) {
          parser.feed(decoder.decode(chunk, { stream: true }));
          if (failedCode !== undefined) {
            // The stream failed: record it, then stop reading.
            finish(failedCode);
            controller?.abort(Object.assign(new Error('stream error'), { code: 'stream_error' }));
          }
          return;
        }
        if (kept < limit) {
          parts.push(chunk);
          kept += chunk.length;
        }
      },
      onResponseEnd() {
        if (settled) return;
        const status = out.status;
        if (status < 200 || status >= 300) {
          finish(errorCode(tryParse(Buffer.concat(parts).toString('utf8')), status));
          return;
        }
        if (sse) {
          if (failedCode !== undefined) finish(failedCode);
          else if (!done) finish('stream_incomplete');
          else {
            out.ok = true;
            finish();
          }
          return;
        }
        if (req.stream) {
          finish('not_a_stream');
          return;
        }
        const p = kept <= limit ? tryParse(Buffer.concat(parts).toString('utf8')) : undefined;
        if (p === undefined && kept <= limit) {
          finish('malformed_body');
          return;
        }
        if (p?.status === 'failed') {
          finish(errorCode(p, status));
          return;
        }
        const n = usageTokens(p?.usage);
        if (n !== undefined) out.outputTokens = n;
        out.ok = true;
        finish();
      },
      onResponseError(_c, err) {
        const code = (err as { code?: unknown }).code;
        finish(typeof code === 'string' ? code : err.name || 'connection_error');
      },
    };
    try {
      target.dispatcher.dispatch(
        {
          path: `${target.prefix}${req.path}`,
          method: 'POST',
          headers: { ...target.headers, accept: req.stream ? 'text/event-stream' : 'application/json' },
          body: req.body,
        },
        handler,
      );
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      finish(typeof code === 'string' ? code : 'dispatch_error');
    }
  });
}
