import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter } from '../../../src/client/backoff.js';

describe('backoffDelay', () => {
  it('grows exponentially, is capped, and jitters within [50%, 100%]', () => {
    const o = { initialMs: 2000, maxMs: 30_000 };
    expect(backoffDelay(0, { ...o, random: () => 0.999999 })).toBe(2000);
    expect(backoffDelay(1, { ...o, random: () => 0.999999 })).toBe(4000);
    expect(backoffDelay(3, { ...o, random: () => 0.999999 })).toBe(16_000);
    expect(backoffDelay(10, { ...o, random: () => 0.999999 })).toBe(30_000);
    expect(backoffDelay(0, { ...o, random: () => 0 })).toBe(1000);
    expect(backoffDelay(10, { ...o, random: () => 0 })).toBe(15_000);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds, an HTTP date and retry-after-ms', () => {
    expect(parseRetryAfter({ 'retry-after': '3' })).toBe(3000);
    expect(parseRetryAfter({ 'retry-after-ms': '250' })).toBe(250);
    const now = Date.parse('2026-11-22T00:00:00Z');
    expect(parseRetryAfter({ 'retry-after': 'Sun, 22 Nov 2026 00:00:05 GMT' }, () => now)).toBe(5000);
    expect(parseRetryAfter({})).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeUndefined();
  });
});
