import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Redactor, redactToken } from '../../src/ui/redact.js';

const RUNS = { seed: 42, numRuns: 300 } as const;

const tokenChar = fc.constantFrom(...'abcdefABCDEF0123456789-_'.split(''));

/**
 * Tokens as gateways issue them (an optional `sk-`-style prefix and URL-safe characters), and self-similar ones
 * that begin with their own last four characters: the redacted form `…last4` followed by the rest of the text
 * can then spell the token again.
 */
const token = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('', 'sk-', 'sk-proj-', 'gw_', 'ak-'),
      fc.string({ unit: tokenChar, minLength: 6, maxLength: 40 }),
    )
    .map(([p, body]) => p + body),
  fc
    .tuple(
      fc.string({ unit: tokenChar, minLength: 4, maxLength: 4 }),
      fc.string({ unit: tokenChar, maxLength: 8 }),
    )
    .map(([edge, middle]) => `${edge}${middle}${edge}`),
);

/**
 * Text around the token: arbitrary code points, and pieces of the token itself (prefixes, suffixes, its last
 * four characters), which is where a single replacement pass could rebuild the token it just masked.
 */
function textAround(secret: string): fc.Arbitrary<string> {
  const piece = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.nat({ max: secret.length }).map((n) => secret.slice(0, n)),
    fc.nat({ max: secret.length }).map((n) => secret.slice(n)),
    fc.constant(secret.slice(-4)),
    fc.constant(secret),
    fc.constantFrom('Bearer ', '"authorization":"', '\n', '…', ' '),
  );
  return fc.array(piece, { maxLength: 8 }).map((a) => a.join(''));
}

describe('fuzz: Redactor', () => {
  it('masks a token embedded anywhere in any text; the output never contains it', () => {
    fc.assert(
      fc.property(
        token.chain((secret) => fc.tuple(fc.constant(secret), textAround(secret), textAround(secret))),
        ([secret, before, after]) => {
          const r = new Redactor();
          r.add(secret);
          const out = r.redact(before + secret + after);
          expect(out).not.toContain(secret);
          expect(out).toContain(redactToken(secret));
        },
      ),
      RUNS,
    );
  });

  it('masks every one of several tokens, whatever their order and overlap', () => {
    fc.assert(
      fc.property(
        fc.array(token, { minLength: 1, maxLength: 4 }),
        fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 6 }), fc.nat()), { maxLength: 10 }),
        (secrets, layout) => {
          const r = new Redactor();
          for (const s of secrets) r.add(s);
          // Interleave the tokens (by index) with arbitrary text.
          const text = layout
            .map((x) => (typeof x === 'number' ? (secrets[x % secrets.length] as string) : x))
            .join('');
          const out = r.redact(text + secrets.join(''));
          for (const s of secrets) expect(out).not.toContain(s);
        },
      ),
      RUNS,
    );
  });

  it('leaves text without a secret unchanged, and never shows more than the last four characters', () => {
    fc.assert(
      fc.property(token, fc.string({ unit: 'binary', maxLength: 30 }), (secret, text) => {
        const r = new Redactor();
        r.add(secret);
        if (!text.includes(secret)) expect(r.redact(text)).toBe(text);
        const shown = redactToken(secret).replace(/^[^…]*…/, '');
        expect(shown.length).toBeLessThanOrEqual(4);
      }),
      RUNS,
    );
  });
});
