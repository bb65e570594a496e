/**
 * The abort signal of one JSON exchange: the caller's signal and the exchange's timeout, linked by hand.
 *
 * `AbortSignal.any([caller, AbortSignal.timeout(ms)])` does the same in one line, but costs a batch of thousands of
 * requests dearly: every timeout signal keeps a timer (and the composite signal, weak references) alive for the
 * whole timeout after its exchange ended, so at a few thousand requests a second the heap holds a minute of dead
 * timers that each young-generation collection copies. Here the timer is cleared when the exchange ends, and a
 * caller's signal shared by many exchanges gets one listener in all (not one per exchange, which also trips
 * Node's "possible EventTarget memory leak" warning past ten).
 */

/** What `deadline()` returns: the signal to send with, whether the timeout fired, and the clean-up. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** True when the timeout (not the caller) aborted the exchange. */
  timedOut(): boolean;
  /** Clears the timer and unlinks the caller's signal; call it once the answer is read (or the exchange failed). */
  dispose(): void;
}

/** setTimeout's largest delay; a longer timeout is no timeout at all in practice. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The exchanges linked to each caller signal. */
const linked = new WeakMap<AbortSignal, Set<AbortController>>();

function link(parent: AbortSignal, child: AbortController): () => void {
  let set = linked.get(parent);
  if (set === undefined) {
    const children = new Set<AbortController>();
    set = children;
    linked.set(parent, children);
    parent.addEventListener(
      'abort',
      () => {
        for (const c of children) c.abort(parent.reason);
        children.clear();
      },
      { once: true },
    );
  }
  const s = set;
  s.add(child);
  return () => s.delete(child);
}

const noop = (): void => {};

/** A signal that aborts when `parent` does or `timeoutMs` passes, whichever comes first. */
export function deadline(parent: AbortSignal | undefined, timeoutMs: number): Deadline {
  const ac = new AbortController();
  let fired = false;
  const timer =
    timeoutMs <= MAX_TIMER_MS
      ? setTimeout(() => {
          fired = true;
          ac.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
        }, timeoutMs)
      : undefined;
  timer?.unref();
  let unlink = noop;
  if (parent !== undefined) {
    if (parent.aborted) ac.abort(parent.reason);
    else unlink = link(parent, ac);
  }
  return {
    signal: ac.signal,
    timedOut: () => fired && parent?.aborted !== true,
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      unlink();
    },
  };
}
