import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GwError, UsageError } from '../../../src/core/errors.js';
import { checkReportPath, prepareReportPath, writeReportFile } from '../../../src/report/output.js';
import { tempDir } from '../../helpers/tmp.js';

const dir = tempDir('gw-report-output-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('report files (--html, --junit)', () => {
  it('a write that fails at the end names the report and the errno, not gw’s temporary file', async () => {
    const gone = join(dir, 'removed');
    mkdirSync(gone);
    checkReportPath(join(gone, 'r.html'));
    rmSync(gone, { recursive: true });
    const e = await writeReportFile(join(gone, 'r.html'), '<html>', 'the JUnit report').catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(GwError);
    expect((e as Error).message).toBe(
      `cannot write the JUnit report ${join(gone, 'r.html')}: no such file or directory (ENOENT)`,
    );
    expect((e as Error).message).not.toContain('.tmp');
  });

  it('writes whole files and leaves no temporary file', async () => {
    await writeReportFile(join(dir, 'a.html'), 'one');
    await writeReportFile(join(dir, 'a.html'), 'two');
    expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('prepareReportPath creates missing directories; a file in the way is a usage error naming the flag', () => {
    const deep = join(dir, 'x', 'y', 'z.xml');
    expect(prepareReportPath(deep, 'junit')).toBe(deep);
    expect(readdirSync(join(dir, 'x'))).toEqual(['y']);
    const file = join(dir, 'f');
    writeFileSync(file, '');
    const e = (() => {
      try {
        prepareReportPath(join(file, 'z.xml'), 'junit');
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(UsageError);
    expect((e as UsageError).message).toBe(`--junit ${join(file, 'z.xml')}: ${file} is not a directory`);
  });
});
