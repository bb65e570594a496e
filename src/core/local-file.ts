/**
 * The one bounded reader of local input: files named by flags (`--image`, `--body`, masks, `--file`,
 * `--prompts`, `--ca-file`, `gw sim --config`, load reports) and standard input. Each kind has a size limit: a
 * regular file is stat'ed first and refused when larger than the limit, before a byte is read; anything else (a
 * device such as /dev/zero, a pipe) is read in chunks and refused as soon as it passes the limit. Reading is
 * asynchronous and stops at once on Ctrl-C, even on a pipe that never sends anything. Every refusal is a
 * UsageError (exit 2) naming the flag as typed and the limit.
 */
import { constants, createWriteStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { InterruptedError, UsageError } from './errors.js';
import { fsError } from './fs-errors.js';

/** Size limits of local inputs, in bytes. */
export const LOCAL_LIMITS = {
  /** An image or mask sent as Base64 (the upstream accepts at most 10 MB: more is refused there anyway). */
  image: 32 * 1024 * 1024,
  /** A whole request body (JSON, possibly with Base64 images inside). */
  body: 64 * 1024 * 1024,
  /** A text input: a prompt, a list of texts or prompts (`--prompts`), a token. */
  text: 16 * 1024 * 1024,
  /** A document read whole: `gw sim --config`, a `gw load` report, a `--ca-file` bundle. */
  document: 32 * 1024 * 1024,
  /** A batch read from standard input (`gw batch run -`), kept in the batch directory: on disk, not in memory. */
  batch: 1024 * 1024 * 1024,
} as const;

/** `32 MiB` style sizes for limit messages. */
export function mib(n: number): string {
  if (n >= 1024 * 1024 * 1024) return `${Math.round((n / 1024 / 1024 / 1024) * 10) / 10} GiB`;
  return n >= 1024 * 1024 ? `${Math.round((n / 1024 / 1024) * 10) / 10} MiB` : `${n} bytes`;
}

function tooLarge(flag: string, field: string, path: string, limit: number, size?: number): UsageError {
  return new UsageError(
    `${flag}: "${path}" is ${size !== undefined ? mib(size) : 'larger than the limit'}; the limit is ${mib(limit)}`,
    { field, code: 'file_too_large' },
  );
}

/** A local file that cannot be read: a UsageError naming the flag, the path and why (missing, no permission). */
export function unreadable(e: unknown, path: string, o: { flag: string; field: string }): UsageError {
  const err = fsError(e, { path, action: 'read' });
  return new UsageError(`${o.flag}: ${err.message}`, { field: o.field, code: err.code, hint: err.hint });
}

function aborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (signal === undefined) return;
    const fail = (): void => reject(new InterruptedError());
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/**
 * Reads a local file of at most `limit` bytes. Failures are UsageErrors (exit 2) naming the flag, the path and
 * the rule: missing, a directory, no permission, larger than the limit.
 */
export async function readLocalFile(
  path: string,
  o: { flag: string; field: string; limit: number; signal?: AbortSignal | undefined },
): Promise<Buffer> {
  const stop = aborted(o.signal);
  stop.catch(() => undefined);
  let fh;
  let special: boolean;
  try {
    // A pipe or a device is opened non-blocking: a blocked open or read would hold a thread-pool thread, and
    // the process could then never exit after Ctrl-C.
    special = !(await stat(path)).isFile();
    fh = await Promise.race([open(path, special ? constants.O_RDONLY | constants.O_NONBLOCK : 'r'), stop]);
  } catch (e) {
    if (e instanceof InterruptedError) throw e;
    throw unreadable(e, path, o);
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) {
      throw new UsageError(`${o.flag}: cannot read file "${path}": it is a directory`, { field: o.field });
    }
    if (st.isFile() && st.size > o.limit) throw tooLarge(o.flag, o.field, path, o.limit, st.size);
    const parts: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, o.limit + 1 - total));
      let n: number;
      try {
        ({ bytesRead: n } = await Promise.race([fh.read(buf, 0, buf.length, null), stop]));
      } catch (e) {
        if (e instanceof InterruptedError) throw e;
        if (special && (e as { code?: unknown }).code === 'EAGAIN') {
          // A pipe whose writer has not written yet: look again shortly (Ctrl-C still ends the wait).
          await Promise.race([delay(20), stop]);
          continue;
        }
        throw unreadable(e, path, o);
      }
      if (n === 0) break;
      total += n;
      if (total > o.limit) throw tooLarge(o.flag, o.field, path, o.limit);
      parts.push(buf.subarray(0, n));
    }
    return Buffer.concat(parts, total);
  } finally {
    // A read still pending on a silent pipe is abandoned; closing the handle ends it.
    void fh.close().catch(() => undefined);
  }
}

/** Reads a local file as UTF-8 text (readLocalFile). */
export async function readLocalText(
  path: string,
  o: { flag: string; field: string; limit: number; signal?: AbortSignal | undefined },
): Promise<string> {
  return (await readLocalFile(path, o)).toString('utf8');
}

/**
 * The JSON value of a local file's text (`--body`, `--config`); text that is not JSON is a UsageError naming the
 * flag and the file. With `object`, anything but a JSON object is refused too, saying what the file must hold.
 */
export function parseLocalJson(text: string, o: { flag: string; path: string; object?: string }): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${o.flag}: "${o.path}" is not valid JSON (${(e as Error).message})`, {
      field: o.flag,
    });
  }
  if (o.object !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new UsageError(`${o.flag}: "${o.path}" must hold a JSON object (${o.object})`, { field: o.flag });
  }
  return value;
}

/** What a stream read names in its errors: `what` (e.g. "standard input") and the flag or argument it fills. */
interface StreamRead {
  what: string;
  field: string;
  limit: number;
  /** The longest line allowed (a JSONL input): /dev/zero is refused at this length, not at `limit`. */
  maxLine?: number;
  signal?: AbortSignal | undefined;
}

function streamTooLarge(o: StreamRead): UsageError {
  return new UsageError(`${o.what} is larger than the limit of ${mib(o.limit)}`, {
    field: o.field,
    code: 'input_too_large',
  });
}

/**
 * A pass-through that counts bytes: past `limit` it fails with the limit's UsageError, and Ctrl-C (`signal`)
 * ends it with an InterruptedError, even while its source sends nothing.
 */
function limited(o: StreamRead): Transform {
  let total = 0;
  let lineStart = 0;
  let lines = 1;
  const lineTooLong = (): UsageError =>
    new UsageError(`${o.what}: line ${lines} is longer than the limit of ${mib(o.maxLine ?? 0)}`, {
      field: o.field,
      code: 'input_too_large',
    });
  const t = new Transform({
    transform(chunk: Buffer | string, _enc, done) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (o.maxLine !== undefined) {
        for (let at = b.indexOf(10); at !== -1; at = b.indexOf(10, at + 1)) {
          if (total + at - lineStart > o.maxLine) return done(lineTooLong());
          lineStart = total + at + 1;
          lines++;
        }
        if (total + b.length - lineStart > o.maxLine) return done(lineTooLong());
      }
      total += b.length;
      done(total > o.limit ? streamTooLarge(o) : null, b);
    },
  });
  const stop = (): void => void t.destroy(new InterruptedError());
  if (o.signal?.aborted === true) stop();
  else o.signal?.addEventListener('abort', stop, { once: true });
  t.once('close', () => o.signal?.removeEventListener('abort', stop));
  return t;
}

/** Reads a stream (standard input) of at most `limit` bytes, as it is; past it, a UsageError. */
export async function readStream(stream: Readable, o: StreamRead): Promise<Buffer> {
  const parts: Buffer[] = [];
  const sink = new Transform({
    transform(chunk: Buffer, _enc, done) {
      parts.push(chunk);
      done();
    },
  });
  await pipeline(stream, limited(o), sink);
  return Buffer.concat(parts);
}

/** Reads a stream (standard input) as UTF-8 text (readStream). */
export async function readStreamText(stream: Readable, o: StreamRead): Promise<string> {
  return (await readStream(stream, o)).toString('utf8');
}

/**
 * Copies a stream (standard input) into the file `path`, at most `limit` bytes. Past the limit, or on Ctrl-C,
 * the partial file is removed and the limit's UsageError (or an InterruptedError) is thrown.
 */
export async function copyStreamToFile(
  stream: Readable,
  path: string,
  o: StreamRead & { mode?: number },
): Promise<void> {
  try {
    await pipeline(stream, limited(o), createWriteStream(path, { mode: o.mode ?? 0o600 }));
  } catch (e) {
    await rm(path, { force: true });
    if (e instanceof UsageError || e instanceof InterruptedError) throw e;
    throw fsError(e, { path, action: 'write' });
  }
}
