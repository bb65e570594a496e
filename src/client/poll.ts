import { backoffDelay, sleep as realSleep } from './backoff.js';
import { ConnectionError, GatewayError, TimeoutError, UserAbortError } from './errors.js';

/** The longest Retry-After a poll honours (2 minutes): longer asks are shortened to it. */
export const MAX_RETRY_AFTER_MS = 120_000;

/** How to follow a task until it ends. */
export interface PollOptions<T> {
  /** Fetches the current record. */
  fetch: (signal: AbortSignal | undefined) => Promise<T>;
  /** True when the record is in a terminal state. */
  done: (record: T) => boolean;
  /** Exponential schedule: first delay, cap. Ignored when `steps` is given. */
  initialMs?: number;
  maxMs?: number;
  /** A fixed schedule (e.g. beta assets: 2, 5, 10, 20 s), its last step repeated. */
  steps?: readonly number[];
  /** Overall limit; past it a TimeoutError is thrown. */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Called after every successful fetch. */
  onUpdate?: (record: T, elapsedMs: number) => void;
  /** Called when a transient error is absorbed (429, 5xx, dropped connection). */
  onTransient?: (error: Error, waitMs: number) => void;
  /**
   * Consecutive transient errors tolerated before giving up, when there is no `timeoutMs` (default 8: about
   * 2.5 minutes of a failing gateway at the default schedule). With a limit, the limit is the user's patience:
   * transient errors are absorbed until it, and the TimeoutError names the last one.
   */
  maxTransient?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

function transient(e: unknown): boolean {
  if (e instanceof ConnectionError) return true;
  const status = e instanceof GatewayError ? e.status : undefined;
  return status !== undefined && (status === 408 || status === 429 || status >= 500);
}

/**
 * The limit of one poll's request: the request timeout and the time left before the wait's deadline (at least
 * 1 s), whichever is shorter, so one hung answer cannot outlive the wait; undefined when neither is set.
 */
export function pollRequestTimeout(
  deadline: number | undefined,
  now: number,
  requestTimeoutMs: number | undefined,
): number | undefined {
  const left = deadline !== undefined ? Math.max(1000, deadline - now) : undefined;
  return left !== undefined && requestTimeoutMs !== undefined
    ? Math.min(left, requestTimeoutMs)
    : (left ?? requestTimeoutMs);
}

/**
 * Polls until `done`, with capped exponential backoff and jitter (or a fixed step schedule), honouring
 * Retry-After on 429/503 answers, absorbing a bounded number of transient errors, and stopping with a
 * TimeoutError or UserAbortError that the caller decorates with the resume command.
 */
export async function poll<T>(o: PollOptions<T>): Promise<T> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? realSleep;
  const started = now();
  const deadline = o.timeoutMs !== undefined ? started + o.timeoutMs : Infinity;
  let attempt = 0;
  let failures = 0;
  let lastError: GatewayError | undefined;
  // A limit reached while the gateway kept failing names the last failure and its request id.
  const timedOut = (): TimeoutError => {
    const s = Math.round((now() - started) / 1000);
    if (failures === 0 || lastError === undefined) return new TimeoutError(`still running after ${s}s`);
    return new TimeoutError(`still no answer after ${s}s; the last poll failed: ${lastError.message}`, {
      requestId: lastError.requestId,
      cause: lastError,
    });
  };
  for (;;) {
    if (o.signal?.aborted) throw new UserAbortError();
    let wait: number;
    try {
      const record = await o.fetch(o.signal);
      failures = 0;
      o.onUpdate?.(record, now() - started);
      if (o.done(record)) return record;
      wait = nextDelay(o, attempt++);
    } catch (e) {
      failures++;
      if (!transient(e) || (deadline === Infinity && failures > (o.maxTransient ?? 8))) throw e;
      lastError = e as GatewayError;
      const retryAfter = e instanceof GatewayError ? e.retryAfterMs : undefined;
      // Retry-After is honoured up to a maximum (a server asking for 1e9 s is not waited for; Node timers also
      // overflow past 2^31 ms); the time left caps it again below.
      wait =
        retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0
          ? Math.min(retryAfter, MAX_RETRY_AFTER_MS)
          : nextDelay(o, attempt++);
      o.onTransient?.(e as Error, wait);
    }
    const left = deadline - now();
    if (left <= 0) throw timedOut();
    try {
      await sleep(Math.min(wait, left), o.signal);
    } catch {
      throw new UserAbortError();
    }
    if (now() >= deadline) {
      // One last look, so a task that finished during the final sleep is not reported as a timeout.
      let record: T;
      try {
        record = await o.fetch(o.signal);
      } catch (e) {
        if (!transient(e)) throw e;
        lastError = e as GatewayError;
        failures++;
        throw timedOut();
      }
      failures = 0;
      o.onUpdate?.(record, now() - started);
      if (o.done(record)) return record;
      throw timedOut();
    }
  }
}

function nextDelay<T>(o: PollOptions<T>, attempt: number): number {
  if (o.steps !== undefined && o.steps.length > 0) {
    return o.steps[Math.min(attempt, o.steps.length - 1)] as number;
  }
  return backoffDelay(attempt, {
    initialMs: o.initialMs ?? 2000,
    maxMs: o.maxMs ?? 30_000,
    random: o.random ?? Math.random,
  });
}
