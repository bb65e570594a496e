import { check } from '../../contract/validate.js';
import { violationError } from '../validation.js';
import {
  isVideoFailure,
  isVideoTerminal,
  videoCreateSchema,
  videoError,
  videoRecordSchema,
  type VideoCreateInput,
  type VideoRecord,
} from '../../contract/video.js';
import { poll, pollRequestTimeout } from '../poll.js';
import { ResponseShapeError, TaskFailedError } from '../errors.js';
import type { ApiResult, GatewayClient, RawResult } from '../gateway-client.js';

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** Automatic retries of a GET (default the client's); `wait` passes 0 and absorbs failures itself. */
  retries?: number | undefined;
}

function videoPath(id: string): string {
  return `/v1/videos/${encodeURIComponent(id)}`;
}

/**
 * Checks a create body against common.md §2.3 (a RequestValidationError, whose code is the documented gateway code
 * where one exists: invalid_duration, invalid_resolution, model_not_found; else invalid_seed / invalid_reference
 * / invalid_input). Returns the body unchanged.
 */
export function validateCreate(body: unknown): VideoCreateInput {
  const r = check(videoCreateSchema, body);
  if (r.ok) return body as VideoCreateInput;
  throw violationError(r.violation, { documentedCode: true });
}

/**
 * `POST /v1/videos` (common.md §4): creates a video task; the answer carries `video_id`. The body is checked
 * against §2.3 first unless the client was built with `validate: false`. Never retried (it would bill twice).
 */
export async function create(
  client: GatewayClient,
  body: VideoCreateInput,
  o: CallOptions = {},
): Promise<ApiResult<VideoRecord>> {
  // async: a rule violation is a rejected promise, like every other failure of this call.
  if (client.validate) validateCreate(body);
  return client.request({
    method: 'POST',
    path: '/v1/videos',
    body,
    schema: videoRecordSchema,
    signal: o.signal,
    timeoutMs: o.timeoutMs,
  });
}

/** `GET /v1/videos/{video_id}` (common.md §4): the task state, result URL and `expires_at`. */
export function retrieve(
  client: GatewayClient,
  id: string,
  o: CallOptions = {},
): Promise<ApiResult<VideoRecord>> {
  return client.request({
    method: 'GET',
    path: videoPath(id),
    schema: videoRecordSchema,
    signal: o.signal,
    timeoutMs: o.timeoutMs,
    retries: o.retries,
  });
}

/**
 * `GET /v1/videos/{video_id}/content` (common.md §4): the binary file, redirects followed (the token is never
 * sent to another origin). Pass `headers: {range: 'bytes=N-'}` to resume. Before completion the gateway answers
 * a not-ready error (a GatewayError).
 */
export async function content(
  client: GatewayClient,
  id: string,
  o: {
    headers?: Record<string, string>;
    signal?: AbortSignal | undefined;
    timeoutMs?: number | undefined;
  } = {},
): Promise<RawResult> {
  const path = `${videoPath(id)}/content`;
  const res = await client.raw({
    path,
    ...(o.headers !== undefined ? { headers: o.headers } : {}),
    signal: o.signal,
    timeoutMs: o.timeoutMs,
  });
  // common.md §4: the answer is the video file. A JSON body or an HTML page in its place (a malformed answer, a
  // proxy's page) is an error, never saved as the video.
  const type = res.headers['content-type'];
  const contentType = (Array.isArray(type) ? type[0] : type) ?? '';
  if (/json|text\/html/i.test(contentType)) {
    res.body.on('error', () => undefined).destroy();
    throw new ResponseShapeError(`GET ${path}: expected the video file, got ${contentType}`, {
      status: res.status,
      requestId: res.requestId,
    });
  }
  return res;
}

/** Options of `wait`. Time sources are injectable for tests. */
export interface WaitOptions {
  signal?: AbortSignal | undefined;
  /** Overall limit (a TimeoutError past it). */
  timeoutMs?: number | undefined;
  /** First delay (default 2 s) and cap (default 30 s) of the exponential backoff with jitter. */
  initialMs?: number | undefined;
  maxMs?: number | undefined;
  /** Per-request limit (default: the client's); each poll is also bounded by the time left. */
  requestTimeoutMs?: number | undefined;
  onUpdate?: ((record: VideoRecord, elapsedMs: number, requestId: string | undefined) => void) | undefined;
  onTransient?: ((error: Error, waitMs: number) => void) | undefined;
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
  now?: (() => number) | undefined;
}

/**
 * Polls `GET /v1/videos/{id}` until a terminal state of common.md §3 (completed/success/failed/cancelled) and
 * returns that answer, success or failure alike (use `failureOf` to turn a failure into an error). Backoff with
 * jitter from ~2 s capped at ~30 s, Retry-After honoured on 429, transient errors absorbed; TimeoutError on
 * `timeoutMs`, InterruptedError when `signal` aborts.
 */
export function wait(
  client: GatewayClient,
  id: string,
  o: WaitOptions = {},
): Promise<ApiResult<VideoRecord>> {
  const now = o.now ?? Date.now;
  const deadline = o.timeoutMs !== undefined ? now() + o.timeoutMs : undefined;
  const started = now();
  return poll({
    fetch: (signal) => {
      // Bound each request by the time left, so one hung request cannot outlive the wait's limit.
      const timeoutMs = pollRequestTimeout(deadline, now(), o.requestTimeoutMs);
      // No retries inside a poll: the poll absorbs transient errors (Retry-After included) within its limit,
      // where a client retry's sleep could carry the wait past --timeout.
      return retrieve(client, id, { signal, timeoutMs, retries: 0 });
    },
    done: (r) => isVideoTerminal(r.data.status),
    onUpdate: (r) => o.onUpdate?.(r.data, now() - started, r.requestId),
    ...(o.initialMs !== undefined ? { initialMs: o.initialMs } : {}),
    ...(o.maxMs !== undefined ? { maxMs: o.maxMs } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.signal !== undefined ? { signal: o.signal } : {}),
    ...(o.onTransient !== undefined ? { onTransient: o.onTransient } : {}),
    ...(o.sleep !== undefined ? { sleep: o.sleep } : {}),
    ...(o.random !== undefined ? { random: o.random } : {}),
    now,
  });
}

/**
 * A TaskFailedError for a failed or cancelled record, carrying the task's error and the request id
 * (the error's own `request_id` when it has one); undefined for any other state.
 */
export function failureOf(id: string, result: ApiResult<VideoRecord>): TaskFailedError | undefined {
  const state = result.data.status;
  if (!isVideoFailure(state)) return undefined;
  const err = videoError(result.data);
  const errRequestId = (result.data.error as { request_id?: unknown } | null | undefined)?.request_id;
  const detail = err.code !== undefined || err.message !== undefined;
  return new TaskFailedError(
    `video ${id} ended ${state}${detail ? `: ${[err.code, err.message].filter(Boolean).join(': ')}` : ''}`,
    {
      state,
      taskId: id,
      code: `video_${state}`,
      requestId: typeof errRequestId === 'string' ? errRequestId : result.requestId,
      hint:
        state === 'cancelled'
          ? 'the task was cancelled or not continued upstream; create it again if needed'
          : 'record the video_id and request id for support; create it again if needed',
    },
  );
}
