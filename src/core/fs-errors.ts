/**
 * One mapping from a local file-system failure (ENOENT, EACCES, EISDIR, ENOSPC, EEXIST, …) to a coded gw error
 * that names the path and says what to do. Every place that reads or writes a local file goes through it, so a
 * full disk or a missing directory is never reported as `internal` or as a stack trace.
 */
import { GwError, UsageError } from './errors.js';

interface Known {
  code: string;
  what: string;
  hint: string;
}

const KNOWN: Record<string, Known> = {
  ENOENT: {
    code: 'not_found',
    what: 'no such file or directory',
    hint: 'check the path; create the directory first',
  },
  ENOTDIR: {
    code: 'not_a_directory',
    what: 'a part of the path is a file, not a directory',
    hint: 'check the path',
  },
  EISDIR: {
    code: 'is_a_directory',
    what: 'is a directory',
    hint: 'give a file name inside the directory',
  },
  EACCES: {
    code: 'permission_denied',
    what: 'permission denied',
    hint: 'fix the permissions or choose another path',
  },
  EPERM: {
    code: 'permission_denied',
    what: 'operation not permitted',
    hint: 'fix the permissions or choose another path',
  },
  EROFS: { code: 'read_only', what: 'read-only file system', hint: 'choose a writable place' },
  ENOSPC: {
    code: 'disk_full',
    what: 'no space left on the device',
    hint: 'free some space, then run the command again',
  },
  EDQUOT: {
    code: 'disk_full',
    what: 'disk quota exceeded',
    hint: 'free some space, then run the command again',
  },
  EEXIST: { code: 'already_exists', what: 'already exists', hint: 'remove it or choose another path' },
  EMFILE: {
    code: 'too_many_files',
    what: 'too many open files',
    hint: 'raise the open-file limit (ulimit -n)',
  },
  ENAMETOOLONG: { code: 'name_too_long', what: 'the file name is too long', hint: 'choose a shorter path' },
  ELOOP: { code: 'symlink_loop', what: 'too many levels of symbolic links', hint: 'check the path' },
  EIO: { code: 'io_error', what: 'input/output error', hint: 'check the disk' },
};

/** The errno code of `e` (`ENOENT`…), when it is a Node system error. */
export function errnoOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/** True when `e` is a local file-system error this module knows how to explain. */
export function isFsError(e: unknown): boolean {
  const code = errnoOf(e);
  return code !== undefined && code in KNOWN;
}

/**
 * A gw error for a failed file operation: `cannot <action> <path>: <what> (<ERRNO>)`, with a code and a hint.
 * `usage: true` makes it a UsageError (exit 2): for paths checked before anything is sent.
 */
export function fsError(
  e: unknown,
  o: {
    path?: string | undefined;
    action: string;
    hint?: string | undefined;
    usage?: boolean;
    field?: string;
  },
): GwError {
  const errno = errnoOf(e) ?? 'EIO';
  const known = KNOWN[errno];
  const path = o.path ?? ((e as { path?: unknown }).path as string | undefined);
  const what = known?.what ?? (e instanceof Error ? e.message : String(e));
  const message = `cannot ${o.action}${path !== undefined ? ` ${path}` : ''}: ${what} (${errno})`;
  const options = {
    code: known?.code ?? 'io_error',
    hint: o.hint ?? known?.hint,
    cause: e,
  };
  return o.usage === true
    ? new UsageError(message, { ...options, field: o.field })
    : new GwError(message, options);
}
