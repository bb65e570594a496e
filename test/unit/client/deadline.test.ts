import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deadline } from '../../../src/client/deadline.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('deadline (one JSON exchange: the caller signal and a timeout)', () => {
  it('aborts with a TimeoutError once the time has passed, never before, at most one slice later', () => {
    vi.useFakeTimers({ now: 1_000_003 });
    const d = deadline(undefined, 1000);
    vi.advanceTimersByTime(999);
    expect(d.signal?.aborted).toBe(false);
    // A slice of a 1 s timeout is 50 ms: the deadline (1 001 003) fires at the end of its slice (1 001 050).
    vi.advanceTimersByTime(47);
    expect(d.signal?.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(d.signal?.aborted).toBe(true);
    expect((d.signal?.reason as Error).name).toBe('TimeoutError');
    expect(d.timedOut()).toBe(true);
  });

  it('gives exchanges whose deadlines fall in the same slice one signal and one timer, however many there are', () => {
    vi.useFakeTimers({ now: 5_000_000 });
    const all = Array.from({ length: 500 }, () => deadline(undefined, 60_000));
    expect(new Set(all.map((d) => d.signal)).size).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    // 100 ms later: the next slice.
    vi.advanceTimersByTime(100);
    const later = deadline(undefined, 60_000);
    expect(later.signal).not.toBe(all[0]?.signal);
    expect(vi.getTimerCount()).toBe(2);
    vi.advanceTimersByTime(60_000);
    expect(all.every((d) => d.timedOut())).toBe(true);
    expect(later.timedOut()).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('lets a slice hold any number of listeners without a leak warning (undici adds one per request)', () => {
    const warn = vi.spyOn(process, 'emitWarning');
    const d = deadline(undefined, 60_000);
    const fns = Array.from({ length: 50 }, () => () => undefined);
    for (const f of fns) d.signal?.addEventListener('abort', f);
    expect(warn).not.toHaveBeenCalled();
    for (const f of fns) d.signal?.removeEventListener('abort', f);
    warn.mockRestore();
  });

  it("follows the caller's signal with its reason, and then it was not the timeout", () => {
    const caller = new AbortController();
    const d = deadline(caller.signal, 60_000);
    const why = new Error('interrupted');
    caller.abort(why);
    expect(d.signal?.aborted).toBe(true);
    expect(d.signal?.reason).toBe(why);
    expect(d.timedOut()).toBe(false);
  });

  it('is the caller signal itself when the caller already aborted', () => {
    const caller = new AbortController();
    caller.abort(new Error('gone'));
    const d = deadline(caller.signal, 60_000);
    expect(d.signal).toBe(caller.signal);
    expect(d.timedOut()).toBe(false);
  });

  it("adds one listener to a caller's signal shared by many exchanges", () => {
    vi.useFakeTimers({ now: 7_000_000 });
    const caller = new AbortController();
    const all = Array.from({ length: 300 }, (_, i) => {
      if (i === 150) vi.advanceTimersByTime(500);
      return deadline(caller.signal, 60_000);
    });
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    caller.abort(new Error('stop'));
    expect(all.every((d) => d.signal?.aborted === true && !d.timedOut())).toBe(true);
  });

  it('treats a timeout beyond what a timer can hold as none', () => {
    vi.useFakeTimers();
    const d = deadline(undefined, 2 ** 31);
    expect(vi.getTimerCount()).toBe(0);
    expect(d.signal).toBeUndefined();
  });
});
