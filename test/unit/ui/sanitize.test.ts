import { isAbsolute } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDir, stateDir } from '../../../src/core/paths.js';
import { Redactor } from '../../../src/ui/redact.js';
import { hasControlChars, neutralize } from '../../../src/ui/sanitize.js';

describe('neutralize (gateway text on the terminal)', () => {
  it('shows ESC, CR, BEL, DEL and C1 as \\xNN; keeps newline, tab and Unicode', () => {
    expect(neutralize('\x1b[2J\x1b]0;pwned\x07ok')).toBe('\\x1b[2J\\x1b]0;pwned\\x07ok');
    expect(neutralize('a\rb\x7fc\x9bd')).toBe('a\\x0db\\x7fc\\x9bd');
    expect(neutralize('line\n\tnext 世界 🦊')).toBe('line\n\tnext 世界 🦊');
    expect(neutralize('plain')).toBe('plain');
  });

  it('hasControlChars catches CR/LF/TAB and controls, not printable text', () => {
    for (const t of ['tok\r', 'tok\n', 'a\tb', '\x00', '\x1b'])
      expect(hasControlChars(t), JSON.stringify(t)).toBe(true);
    expect(hasControlChars('sk-abc_DEF.123~')).toBe(false);
  });
});

describe('redaction of escaped forms', () => {
  it('masks a token with " and \\ inside JSON (once and twice escaped) and URL-encoded, keeping JSON valid', () => {
    const token = 'sk-ab"cd\\ef/gh+ij';
    const r = new Redactor();
    r.add(token);
    const echoed = JSON.stringify({ error: { message: `bad token ${token}` } });
    const twice = JSON.stringify({ raw: echoed });
    for (const text of [echoed, twice, `url?t=${encodeURIComponent(token)}`, `plain ${token}`]) {
      const out = r.redact(text);
      expect(out).not.toContain(token);
      expect(out).not.toContain(JSON.stringify(token).slice(1, -1));
      expect(out).not.toContain(encodeURIComponent(token));
      expect(out).toMatch(/…|%E2%80%A6/);
    }
    expect(() => JSON.parse(r.redact(echoed)) as unknown).not.toThrow();
    expect(() => JSON.parse(r.redact(twice)) as unknown).not.toThrow();
  });
});

describe('paths without a usable HOME', () => {
  it('never resolves config or journal relative to the current directory', () => {
    for (const env of [
      { HOME: '' },
      { HOME: 'relative/home' },
      { HOME: '', XDG_CONFIG_HOME: 'rel', XDG_STATE_HOME: 'rel' },
    ]) {
      expect(isAbsolute(configDir(env)), JSON.stringify(env)).toBe(true);
      expect(isAbsolute(stateDir(env)), JSON.stringify(env)).toBe(true);
    }
    expect(configDir({ XDG_CONFIG_HOME: '/x/cfg' })).toBe('/x/cfg/gw');
    expect(stateDir({ GW_STATE_DIR: '/x/state' })).toBe('/x/state');
  });
});
