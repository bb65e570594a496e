/** A shard's share of a closed loop, the plan's refusal of a split too small, and `--start-at`'s parsing. */
import { describe, expect, it } from 'vitest';
import { parseStartAt } from '../../../src/commands/load/flags.js';
import { UsageError } from '../../../src/core/errors.js';
import { resolvePlan, shareOf } from '../../../src/load/plan.js';

describe('shareOf: ⌊total/n⌋, one more for the first total mod n shards', () => {
  it('adds up to the total', () => {
    expect([1, 2, 3].map((k) => shareOf(10, { k, n: 3 }))).toEqual([4, 3, 3]);
    expect([1, 2, 3, 4].map((k) => shareOf(8, { k, n: 4 }))).toEqual([2, 2, 2, 2]);
    expect(shareOf(7, undefined)).toBe(7);
    for (const n of [1, 2, 5, 7, 64]) {
      for (const total of [n, n + 1, 3 * n - 1, 1000]) {
        const shares = Array.from({ length: n }, (_, i) => shareOf(total, { k: i + 1, n }));
        expect(shares.reduce((a, b) => a + b, 0)).toBe(total);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('a closed loop with fewer users or requests than shards is refused', () => {
    expect(() => resolvePlan({ model: 'm', concurrency: 2, shard: { k: 1, n: 3 } })).toThrow(
      '--concurrency: 2 users cannot be split into 3 shards (each needs one)',
    );
    expect(() => resolvePlan({ model: 'm', concurrency: 4, requests: 2, shard: { k: 1, n: 3 } })).toThrow(
      '--requests: 2 requests cannot be split into 3 shards',
    );
    // The open loop splits arrivals, not users: any rate works.
    expect(resolvePlan({ model: 'm', rate: 1, shard: { k: 3, n: 3 } }).shard).toEqual({ k: 3, n: 3 });
  });
});

describe('--start-at', () => {
  const now = Date.parse('2026-03-01T10:00:00Z');
  it('takes RFC 3339 (Z or an offset, fractions) and Unix milliseconds', () => {
    expect(parseStartAt('2026-03-01T10:00:05Z', now)).toBe(now + 5000);
    expect(parseStartAt('2026-03-01T11:00:05.250+01:00', now)).toBe(now + 5250);
    expect(parseStartAt(String(now + 1), now)).toBe(now + 1);
  });
  it('refuses seconds, other formats and a day ahead, naming the flag', () => {
    for (const t of [
      String(now / 1000),
      '2026-03-01',
      '2026-03-01T10:00:05',
      'soon',
      String(now + 86_400_001),
    ]) {
      expect(() => parseStartAt(t, now)).toThrow(UsageError);
      expect(() => parseStartAt(t, now)).toThrow(/^--start-at: /);
    }
  });
});
