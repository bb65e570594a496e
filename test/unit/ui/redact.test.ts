import { describe, expect, it } from 'vitest';
import { Redactor, redactToken } from '../../../src/ui/redact.js';

describe('redaction', () => {
  it('shows a token only as prefix…last4', () => {
    expect(redactToken('sk-abcdefghijklmnop1234')).toBe('sk-…1234');
    expect(redactToken('abcdefghijklmnop1234')).toBe('…1234');
    expect(redactToken('short')).toBe('…');
  });

  it('masks every occurrence of a registered secret', () => {
    const r = new Redactor();
    r.add('sk-secret-value-9876');
    const out = r.redact('a sk-secret-value-9876 b "sk-secret-value-9876"');
    expect(out).not.toContain('sk-secret-value-9876');
    expect(out).toBe('a sk-…9876 b "sk-…9876"');
  });
});
