/**
 * Polls and downloads of a batch's video and beta tasks go through their model's lane (limits.ts): a request starts
 * only while the lane is not paused, and one answered 429 pauses the lane (creates, polls and downloads of that
 * model alike) until its Retry-After, halving the model's limit once per round like a create's 429.
 */
import { sleep as realSleep } from '../client/backoff.js';
import { RateLimitError } from '../client/errors.js';
import type { Limits } from './limits.js';

/** The hooks a poll (`videos.wait`, `betaTasks.wait`) takes to follow `model`'s lane. */
export interface LaneHooks {
  /** The poll's pause between requests, then the lane's pause if there is one. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A transient error of a poll: a 429 pauses the lane. */
  onTransient: (error: Error, waitMs: number) => void;
  /** Waits until the lane is open (before the first poll). */
  open: (signal?: AbortSignal) => Promise<void>;
}

/** True for an error the gateway answered with 429 (the client throws a RateLimitError for every 429). */
export function isRateLimited(e: unknown): e is RateLimitError {
  return e instanceof RateLimitError;
}

/** Hooks that make one follower's polls follow `model`'s lane. */
export function laneHooks(
  limits: Limits,
  model: string,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void> = realSleep,
): LaneHooks {
  let round = limits.roundOf(model);
  const open = async (signal?: AbortSignal): Promise<void> => {
    await limits.whenOpen(model, signal);
    round = limits.roundOf(model);
  };
  return {
    open,
    sleep: async (ms, signal) => {
      await sleep(ms, signal);
      await open(signal);
    },
    onTransient: (error) => {
      if (!isRateLimited(error)) return;
      const ms = error.retryAfterMs;
      limits.refused(model, ms !== undefined && Number.isFinite(ms) ? ms : undefined, round);
    },
  };
}

/**
 * Runs a request of a created task (its wait, a download's opening) through its lane: it starts once the lane is
 * not paused, and a 429 it ends with pauses the lane and runs it again after the pause. A task that is merely
 * rate-limited is not lost (a poll gives up after a few transient errors in a row; a download after its client's
 * retries); --timeout and Ctrl-C still end it.
 */
export async function throughLane<R>(
  lane: LaneHooks,
  signal: AbortSignal,
  run: () => Promise<R>,
): Promise<R> {
  for (;;) {
    await lane.open(signal);
    try {
      return await run();
    } catch (e) {
      if (signal.aborted || !isRateLimited(e)) throw e;
      // The request gave up on this 429 without reporting it: it pauses the lane like the others did.
      lane.onTransient(e, 0);
    }
  }
}
