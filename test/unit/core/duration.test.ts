import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../src/core/duration.js';
import { UsageError } from '../../../src/core/errors.js';

describe('parseDuration', () => {
  it.each([
    ['90', 90_000],
    ['90s', 90_000],
    ['15m', 900_000],
    ['1h', 3_600_000],
    ['500ms', 500],
    ['1m30s', 90_000],
    ['1.5s', 1500],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'abc', '10x', '-5s', '1m 30s', 's'])('rejects %j naming the field', (text) => {
    expect(() => parseDuration(text, 'timeout')).toThrow(UsageError);
    expect(() => parseDuration(text, 'timeout')).toThrow(/^timeout: /);
  });
});

describe('formatDuration', () => {
  it('formats for people', () => {
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(12_300)).toBe('12.3s');
    expect(formatDuration(245_000)).toBe('4m05s');
    expect(formatDuration(3_720_000)).toBe('1h02m');
  });
});
