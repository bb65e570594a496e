import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deadline } from '../../../src/client/deadline.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('deadline (one JSON exchange: the caller signal and a timeout)', () => {
  it('aborts with a TimeoutError when the time passes, and says it was the timeout', () => {
    vi.useFakeTimers();
    const d = deadline(undefined, 1000);
    vi.advanceTimersByTime(999);
    expect(d.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).name).toBe('TimeoutError');
    expect(d.timedOut()).toBe(true);
  });

  it('leaves no timer behind once disposed (a finished exchange holds nothing for the rest of its timeout)', () => {
    vi.useFakeTimers();
    const d = deadline(undefined, 60_000);
    expect(vi.getTimerCount()).toBe(1);
    d.dispose();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(d.signal.aborted).toBe(false);
  });

  it("follows the caller's signal with its reason, and then it was not the timeout", () => {
    const caller = new AbortController();
    const d = deadline(caller.signal, 60_000);
    const why = new Error('interrupted');
    caller.abort(why);
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toBe(why);
    expect(d.timedOut()).toBe(false);
    d.dispose();
  });

  it('starts aborted when the caller already aborted', () => {
    const caller = new AbortController();
    caller.abort(new Error('gone'));
    const d = deadline(caller.signal, 60_000);
    expect(d.signal.aborted).toBe(true);
    d.dispose();
  });

  it("adds one listener to a caller's signal shared by many exchanges, and a disposed one is not aborted", () => {
    const caller = new AbortController();
    const all = Array.from({ length: 300 }, () => deadline(caller.signal, 60_000));
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    const [first, ...rest] = all;
    first?.dispose();
    caller.abort(new Error('stop'));
    expect(first?.signal.aborted).toBe(false);
    expect(rest.every((d) => d.signal.aborted)).toBe(true);
    for (const d of rest) d.dispose();
  });

  it('treats a timeout beyond what a timer can hold as none', () => {
    vi.useFakeTimers();
    const d = deadline(undefined, 2 ** 31);
    expect(vi.getTimerCount()).toBe(0);
    d.dispose();
  });
});
