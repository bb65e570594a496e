import { describe, expect, it } from 'vitest';
import { GwError, UsageError } from '../../../src/core/errors.js';
import { fsError, isFsError } from '../../../src/core/fs-errors.js';
import { runGw } from '../../helpers/gw.js';

const sys = (code: string, path = '/x/y'): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: something, open '${path}'`), { code, path });

describe('fsError: one mapping from file-system failures to coded errors', () => {
  it('names the path, a code and a hint for each ordinary condition', () => {
    const cases: Array<[string, string]> = [
      ['ENOENT', 'not_found'],
      ['EISDIR', 'is_a_directory'],
      ['ENOSPC', 'disk_full'],
      ['EEXIST', 'already_exists'],
      ['EACCES', 'permission_denied'],
      ['EROFS', 'read_only'],
      ['ENOTDIR', 'not_a_directory'],
    ];
    for (const [errno, code] of cases) {
      const e = fsError(sys(errno), { action: 'write' });
      expect(e).toBeInstanceOf(GwError);
      expect(e.code).toBe(code);
      expect(e.exitCode).toBe(1);
      expect(e.message).toMatch(new RegExp(`^cannot write /x/y: .+ \\(${errno}\\)$`));
      expect(e.hint).toBeDefined();
    }
    const u = fsError(sys('ENOENT'), { action: 'save into', usage: true, field: 'output', path: '/d' });
    expect(u).toBeInstanceOf(UsageError);
    expect(u.exitCode).toBe(2);
    expect(u.message).toContain('/d');
    expect(isFsError(sys('ENOSPC'))).toBe(true);
    expect(isFsError(new Error('x'))).toBe(false);
  });

  it('a corrupt config or an unreadable state never surfaces as internal', async () => {
    const r = await runGw(['history'], { env: { GW_STATE_DIR: '/proc/self/nonexistent/x' } });
    expect(r.stderr).not.toMatch(/internal/);
  });
});
