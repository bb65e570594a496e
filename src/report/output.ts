/**
 * Where a report goes: the path is checked before the command does any work (a missing directory is a usage
 * error, exit 2, with nothing sent), and the file is written atomically (a temporary file in the same
 * directory, renamed over the target), so a reader never sees half a report.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { fsError } from '../core/fs-errors.js';

/** Checks that `file` can be written: its directory exists, and it is not itself a directory. */
export function checkReportPath(file: string, flag = 'html'): string {
  if (file.trim() === '') throw new UsageError(`--${flag} needs a file name`, { field: `--${flag}` });
  const full = resolve(file);
  const dir = dirname(full);
  let dirStat;
  try {
    dirStat = statSync(dir);
  } catch {
    throw new UsageError(`--${flag} ${file}: the directory ${dir} does not exist`, {
      field: `--${flag}`,
      hint: 'create the directory first, or choose a path in an existing one',
    });
  }
  if (!dirStat.isDirectory()) {
    throw new UsageError(`--${flag} ${file}: ${dir} is not a directory`, { field: `--${flag}` });
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    // Read-only file system, no permission: said now, not after the command's work.
    throw fsError(e, { path: dir, action: `write --${flag} into`, usage: true, field: `--${flag}` });
  }
  try {
    if (statSync(full).isDirectory()) {
      throw new UsageError(`--${flag} ${file}: is a directory; give a file name`, { field: `--${flag}` });
    }
  } catch (e) {
    if (e instanceof UsageError) throw e;
    // Does not exist yet: fine.
  }
  return full;
}

/**
 * `checkReportPath` for a report whose missing directories are created (`gw probe --junit reports/probe.xml`, as
 * CI test reporters do): created now, before the command does any work, so a path that cannot be made (under a
 * file, no permission) is exit 2 with nothing sent.
 */
export function prepareReportPath(file: string, flag: string): string {
  // An empty name resolves to the working directory, which exists: checkReportPath below refuses the name.
  const dir = dirname(resolve(file));
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A file where a directory should be: checkReportPath names it.
    if (code !== 'EEXIST' && code !== 'ENOTDIR') {
      throw new UsageError(`--${flag} ${file}: cannot create the directory ${dir} (${code ?? String(e)})`, {
        field: `--${flag}`,
      });
    }
  }
  return checkReportPath(file, flag);
}

/** Writes `text` to `file` atomically (temporary file in the same directory, then rename); `what` names it in errors. */
export async function writeReportFile(file: string, text: string, what = 'the HTML report'): Promise<void> {
  const full = resolve(file);
  const tmp = join(dirname(full), `.${basename(full)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, text, { encoding: 'utf8', mode: 0o644 });
    await rename(tmp, full);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => {});
    throw fsError(e, { path: file, action: `write ${what}` });
  }
}
