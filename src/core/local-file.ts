/**
 * Local input files (`--image`, `--body`, masks, `--file`, standard input) are read with a size limit: a regular
 * file is stat'ed first and refused when larger than the limit, before a byte is read; anything else (a device
 * such as /dev/zero, a pipe) is read in chunks and refused as soon as it passes the limit. Reading is
 * asynchronous and stops at once on Ctrl-C, even on a pipe that never sends anything.
 */
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import { InterruptedError, UsageError } from './errors.js';
import { fsError } from './fs-errors.js';

/** Size limits of local inputs, in bytes. */
export const LOCAL_LIMITS = {
  /** An image or mask sent as Base64 (the upstream accepts at most 10 MB: more is refused there anyway). */
  image: 32 * 1024 * 1024,
  /** A whole request body (JSON, possibly with Base64 images inside). */
  body: 64 * 1024 * 1024,
  /** A text input: a prompt, a list of texts, a token. */
  text: 16 * 1024 * 1024,
} as const;

/** `32 MiB` style sizes for limit messages. */
export function mib(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round((n / 1024 / 1024) * 10) / 10} MiB` : `${n} bytes`;
}

function tooLarge(flag: string, field: string, path: string, limit: number, size?: number): UsageError {
  return new UsageError(
    `${flag}: "${path}" is ${size !== undefined ? mib(size) : 'larger than the limit'}; the limit is ${mib(limit)}`,
    { field, code: 'file_too_large' },
  );
}

function unreadable(e: unknown, path: string, o: { flag: string; field: string }): UsageError {
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

/** Reads a stream (standard input) as UTF-8 text of at most `limit` bytes; past it, a UsageError. */
export async function readStreamText(
  stream: Readable,
  o: { what: string; field: string; limit: number },
): Promise<string> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    total += b.length;
    if (total > o.limit) {
      stream.destroy();
      throw new UsageError(`${o.what} is larger than the limit of ${mib(o.limit)}`, {
        field: o.field,
        code: 'input_too_large',
      });
    }
    parts.push(b);
  }
  return Buffer.concat(parts, total).toString('utf8');
}
