/**
 * What every "create, wait, download" chain shares, so each step has one shape whatever the command: the outcome
 * of a wait, the `download` object of `--json` documents, the check of a `--download` target before anything is
 * billed, and the shell-quoted resume command.
 */
import type { Context } from '../../cli/context.js';
import { type DownloadResult, checkTarget } from '../../core/download.js';
import { UsageError } from '../../core/errors.js';

/**
 * The outcome of one id of a wait, the same for every family (gw video wait, gw beta task wait, gw beta asset
 * wait): a `<id> <final state>` line on stderr (on a terminal the spinner or live table ends on it instead).
 * Nothing goes to stdout; with --json each command prints the final record(s) as one document there.
 */
export function printWaitOutcome(ctx: Context, id: string, state: string): void {
  if (!ctx.progress.enabled) ctx.out.note(`${id} ${state}`);
}

/** The `download` object of every `--json` document: path, bytes, resumed, and sha256 when it was asked for. */
export interface DownloadJson {
  path: string;
  bytes: number;
  resumed: boolean;
  sha256?: string;
}

/** The `download` object of a saved file. */
export function downloadJson(r: DownloadResult): DownloadJson {
  return {
    path: r.path,
    bytes: r.bytes,
    resumed: r.resumed,
    ...(r.sha256 !== undefined ? { sha256: r.sha256 } : {}),
  };
}

/** Quotes a word for a POSIX shell when it needs it (resume commands are meant to be pasted). */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Checks a `create --download <file>` target before the create is sent. `create` has no `--force`, so an
 * existing file is refused with advice that fits this command (not the download verb's `--force`).
 */
export async function checkCreateDownloadTarget(file: string, downloadVerb: string): Promise<void> {
  if (file === '-') {
    throw new UsageError('download: standard output carries the id; give a file name', {
      field: 'download',
    });
  }
  try {
    await checkTarget(file, false, { allowDirectory: true });
  } catch (e) {
    if (e instanceof UsageError && /already exists/.test(e.message)) {
      throw new UsageError(
        `download: ${file} already exists; choose another file name or remove it (to overwrite later, use \`${downloadVerb} <id> -o ${shellWord(file)} --force\`)`,
        { field: 'download' },
      );
    }
    throw e;
  }
}
