import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_DURATION_MS, formatDuration, parseDuration } from '../../src/core/duration.js';
import { UsageError } from '../../src/core/errors.js';

const RUNS = { seed: 42, numRuns: 200 } as const;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** A valid duration as CLI.md writes it: bare seconds, or a sum of `<n><unit>` parts (`1h2m30s`). */
const validDuration = fc.oneof(
  fc.nat({ max: 1_000_000 }).map((n) => ({ text: String(n), ms: n * 1000 })),
  fc
    .array(fc.tuple(fc.nat({ max: 10_000 }), fc.constantFrom('ms', 's', 'm', 'h')), {
      minLength: 1,
      maxLength: 4,
    })
    .map((parts) => ({
      text: parts.map(([n, u]) => `${n}${u}`).join(''),
      ms: parts.reduce((sum, [n, u]) => sum + n * UNIT_MS[u], 0),
    }))
    .filter((d) => d.ms <= MAX_DURATION_MS),
);

/** Strings near the grammar (digits, units, dots, signs, spaces) as well as anything at all. */
const noisyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc
    .array(fc.constantFrom('1', '0', '9', '.', 'ms', 's', 'm', 'h', 'd', ' ', '-', '+', 'e', '\t', '٣'), {
      maxLength: 12,
    })
    .map((a) => a.join('')),
  fc.stringMatching(/^\d{10,40}[smh]?$/),
);

describe('fuzz: parseDuration', () => {
  it('round-trips generated valid durations (with surrounding blanks)', () => {
    fc.assert(
      fc.property(validDuration, fc.constantFrom('', ' ', '\t'), ({ text, ms }, pad) => {
        expect(parseDuration(`${pad}${text}${pad}`)).toBe(ms);
      }),
      RUNS,
    );
  });

  it('rejects what a timer cannot wait for', () => {
    expect(parseDuration('596h')).toBe(596 * 3_600_000);
    expect(() => parseDuration('597h', 'timeout')).toThrow(/^timeout: "597h" is too long \(at most 596h\)/);
    expect(() => parseDuration('9'.repeat(400))).toThrow(UsageError);
  });

  it('gives a usable number of milliseconds or a UsageError naming the field, nothing else', () => {
    fc.assert(
      fc.property(noisyText, (text) => {
        let ms: number;
        try {
          ms = parseDuration(text, 'timeout');
        } catch (e) {
          expect(e).toBeInstanceOf(UsageError);
          expect((e as UsageError).message.startsWith('timeout: ')).toBe(true);
          return;
        }
        // A value must be usable as a timer delay: finite, whole, not negative, within setTimeout's range.
        expect(Number.isSafeInteger(ms)).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(MAX_DURATION_MS);
        expect(typeof formatDuration(ms)).toBe('string');
      }),
      RUNS,
    );
  });
});
