/**
 * The abort signal of one JSON exchange: the caller's signal and the exchange's timeout.
 *
 * `AbortSignal.any([caller, AbortSignal.timeout(ms)])` does the same in one line, but costs a batch of thousands of
 * requests dearly: every timeout signal keeps a timer (and the composite signal, weak references) alive for the
 * whole timeout after its exchange ended, so at a few thousand requests a second the heap holds a minute of dead
 * timers that each young-generation collection copies. An AbortController of its own per exchange is cheaper but
 * still not cheap (an EventTarget, its listeners, a timer: about 3 % of a batch's CPU). So exchanges share: every
 * exchange whose deadline falls in the same slice of time (a twentieth of its timeout, at most 100 ms, never
 * earlier than the deadline) gets the same signal, aborted with a TimeoutError when that slice ends; an exchange
 * still running then is past its deadline, one that ended long ago no longer listens. The slices of one caller's
 * signal follow it with one listener in all (not one per exchange, which also trips Node's "possible EventTarget
 * memory leak" warning past ten). A slice lives until its time, so a process holds at most a few hundred of them
 * (one per slice of the longest timeout) however many requests it sends; their timers never keep it alive.
 */
import { setMaxListeners } from 'node:events';

/** What `deadline()` returns: the signal to send with, and whether the timeout (not the caller) fired. */
export interface Deadline {
  readonly signal: AbortSignal | undefined;
  /** True when the timeout (not the caller) aborted the exchange. */
  timedOut(): boolean;
}

/** setTimeout's largest delay; a longer timeout is no timeout at all in practice. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The longest slice: a deadline fires at most this late. */
const MAX_SLICE_MS = 100;

interface Slice {
  readonly ac: AbortController;
  fired: boolean;
}

/** The live slices of each caller's signal (and of exchanges without one), by the time they end. */
const byCaller = new WeakMap<AbortSignal, Map<number, Slice>>();
const uncalled = new Map<number, Slice>();

function slicesOf(parent: AbortSignal | undefined): Map<number, Slice> {
  if (parent === undefined) return uncalled;
  let slices = byCaller.get(parent);
  if (slices === undefined) {
    const own = new Map<number, Slice>();
    slices = own;
    byCaller.set(parent, own);
    parent.addEventListener(
      'abort',
      () => {
        for (const s of own.values()) s.ac.abort(parent.reason);
        own.clear();
      },
      { once: true },
    );
  }
  return slices;
}

const never = (): boolean => false;

/** A signal that aborts when `parent` does, or once `timeoutMs` (and at most one slice more) has passed. */
export function deadline(parent: AbortSignal | undefined, timeoutMs: number): Deadline {
  if (parent?.aborted === true || timeoutMs > MAX_TIMER_MS) return { signal: parent, timedOut: never };
  const slice = Math.max(1, Math.min(MAX_SLICE_MS, Math.floor(timeoutMs / 20)));
  const now = Date.now();
  const end = Math.ceil((now + Math.max(0, timeoutMs)) / slice) * slice;
  const slices = slicesOf(parent);
  let s = slices.get(end);
  if (s === undefined) {
    const ac = new AbortController();
    // Every exchange of the slice listens to it (undici adds one listener per request).
    setMaxListeners(0, ac.signal);
    const made: Slice = { ac, fired: false };
    s = made;
    slices.set(end, made);
    setTimeout(() => {
      slices.delete(end);
      made.fired = true;
      ac.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    }, end - now).unref();
  }
  const mine = s;
  return {
    signal: mine.ac.signal,
    timedOut: () => mine.fired && parent?.aborted !== true,
  };
}
