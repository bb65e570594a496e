import { createHash, type Hash } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  createReadStream,
  fdatasync,
  fsyncSync,
  openSync,
  statSync,
  writeSync,
} from 'node:fs';
import { rename, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Transform, addAbortSignal, finished, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from '../client/errors.js';
import { toGwError } from './error-map.js';
import {
  lockPart,
  lockPath,
  readMeta,
  removeMeta,
  resumeValidator,
  writeMeta,
  type PartIdentity,
} from './download-part.js';
import { GwError, InterruptedError, TimeLimitError, UsageError, isAbortError } from './errors.js';
import { errnoOf, fsError } from './fs-errors.js';

/** An open binary answer: `GatewayClient.raw()`'s DownloadAnswer fits, as does any status + headers + Readable. */
export interface DownloadAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** How to fetch the bytes and where to put them. Works for any binary answer (video content, beta result URLs). */
export interface DownloadOptions {
  /**
   * Opens the answer, sending `headers` with the request. `rangeStart` asks for the bytes from that offset: the
   * headers then hold `Range: bytes=N-` and `If-Range` with the validator the first answer gave, and the server
   * answers 206 (resumed) or 200 (the whole file again, which restarts the download cleanly).
   */
  open: (
    rangeStart: number | undefined,
    signal: AbortSignal | undefined,
    headers: Record<string, string>,
  ) => Promise<DownloadAnswer>;
  /** What the bytes are (id and URL): a kept `.part` is resumed only by the same download. */
  identity?: PartIdentity | undefined;
  /** Final path, or `-` for standard output. */
  file: string;
  /** Replace an existing final file (otherwise a UsageError, exit 2). */
  force?: boolean | undefined;
  /** Resume an existing `<file>.part` (default true). */
  resume?: boolean | undefined;
  signal?: AbortSignal | undefined;
  /** Called as bytes arrive: bytes so far (including a resumed part) and the total when known. */
  onProgress?: ((bytes: number, total: number | undefined) => void) | undefined;
  /** Where `-` writes (default process.stdout); never ended by the download. */
  stdout?: Writable | undefined;
  /**
   * Also compute the SHA-256 of the file while it streams (`--sha256`). Off by default: the gateway publishes no
   * checksum to verify against (the byte count against Content-Length is the completeness check), and hashing
   * costs ~0.5 s of CPU per GiB, which halves loopback throughput (issue 9).
   */
  sha256?: boolean | undefined;
}

/** What was written. `path` is absolute, or `-` for standard output. */
export interface DownloadResult {
  path: string;
  bytes: number;
  /** Hex SHA-256 of the whole file, when asked for (`sha256: true`). */
  sha256?: string;
  /** True when an existing `.part` was continued with a Range request. */
  resumed: boolean;
}

function header(h: DownloadAnswer['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Parses `Content-Range: bytes start-end/total`; total undefined for `*`. */
export function parseContentRange(
  value: string | undefined,
): { start: number; end: number; total: number | undefined } | undefined {
  const m = value !== undefined ? /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(value.trim()) : null;
  if (!m) return undefined;
  return { start: Number(m[1]), end: Number(m[2]), total: m[3] === '*' ? undefined : Number(m[3]) };
}

/** The path of the partial file kept for resuming. */
export function partPath(file: string): string {
  return `${resolve(file)}.part`;
}

/** The longest file name in bytes most file systems take (NAME_MAX of ext4, XFS, Btrfs, tmpfs, APFS). */
export const NAME_MAX_BYTES = 255;

/** The longest name a download of `name` writes beside it: its part's lock (as long as the part's sidecar). */
export function longestDownloadName(name: string): string {
  return lockPath(`${name}.part`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The file an output flag names: `-` (standard output) as is; a directory (an existing one, or any path ending
 * in `/`) holds `name` (the id-based default) when given. An empty path, a missing directory or one that cannot
 * be written is a UsageError (exit 2) naming the path, so nothing is sent (or billed) for a file that cannot be
 * saved. Without `name`, a directory is accepted as it is (the name is known later, e.g. after a create).
 */
export function outputPath(file: string, name?: string, field = 'output'): string {
  if (file === '-') return file;
  if (file.trim() === '') {
    throw new UsageError(
      `${field}: the path is empty; give a file name, a directory, or - for standard output`,
      {
        field,
      },
    );
  }
  const dirLike = /[\\/]$/.test(file) || isDirectory(file);
  if (dirLike) {
    const dir = resolve(file);
    checkDirectory(dir, field);
    return name !== undefined ? join(dir, name) : dir;
  }
  checkDirectory(dirname(resolve(file)), field);
  return file;
}

/**
 * Checks, before anything is sent, that files can be saved into `dir` (created later when missing): it is a
 * writable directory, or its nearest existing ancestor is one. A UsageError (exit 2) naming the path otherwise.
 */
export function checkSaveDir(dir: string, field: string): void {
  if (dir.trim() === '') throw new UsageError(`${field}: the path is empty; give a directory`, { field });
  let at = resolve(dir);
  for (;;) {
    try {
      statSync(at);
      break;
    } catch (e) {
      const parent = dirname(at);
      if (errnoOf(e) !== 'ENOENT' || parent === at) break;
      at = parent;
    }
  }
  checkDirectory(at, field);
}

function checkDirectory(dir: string, field: string): void {
  let st;
  try {
    st = statSync(dir);
  } catch (e) {
    throw fsError(e, {
      path: dir,
      action: 'save into',
      usage: true,
      field,
      hint: errnoOf(e) === 'ENOENT' ? `create the directory first (mkdir -p ${dir})` : undefined,
    });
  }
  if (!st.isDirectory()) {
    throw new UsageError(`${field}: ${dir} is not a directory`, { field, code: 'not_a_directory' });
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw fsError(e, { path: dir, action: 'write in', usage: true, field });
  }
}

/**
 * Refuses to overwrite an existing final file without `force` (exit 2, before anything is sent), and an output
 * path that cannot be written (see outputPath). Commands call it early so a doomed download sends no request at
 * all; `download()` calls it again.
 */
export async function checkTarget(
  file: string,
  force: boolean | undefined,
  o: { allowDirectory?: boolean } = {},
): Promise<void> {
  if (file === '-') return;
  const path = outputPath(file);
  if (isDirectory(path)) {
    if (o.allowDirectory === true) return; // saved into it under a name known later (the id)
    throw new UsageError(`output: ${file} is a directory; give a file name`, {
      field: 'output',
      code: 'is_a_directory',
    });
  }
  if (force === true) return;
  if (await exists(resolve(path))) {
    throw new UsageError(`output: ${file} already exists; pass --force to overwrite it`, {
      field: 'output',
    });
  }
}

/** Counts (and hashes, when asked) bytes on their way through, reporting progress. */
function meter(hash: Hash | undefined, start: number, onChunk: (n: number) => void): Transform {
  let n = start;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash?.update(chunk);
      n += chunk.length;
      onChunk(n);
      cb(null, chunk);
    },
  });
}

function digest(hash: Hash | undefined): { sha256?: string } {
  return hash !== undefined ? { sha256: hash.digest('hex') } : {};
}

async function hashFile(path: string, hash: Hash): Promise<number> {
  let n = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    n += (chunk as Buffer).length;
  }
  return n;
}

function incomplete(message: string, part: string | undefined, cause?: unknown): GwError {
  return new GwError(message, {
    code: 'download_incomplete',
    cause,
    hint:
      part !== undefined
        ? `nothing was written to the final path; the partial file ${part} is kept: run the same command again to resume`
        : undefined,
  });
}

function mapStreamError(thrown: unknown, signal: AbortSignal | undefined, part: string | undefined): unknown {
  const e = toGwError(thrown) ?? thrown;
  if (e instanceof GwError) {
    if (e instanceof InterruptedError && part !== undefined && e.hint === undefined) {
      return new InterruptedError('interrupted during download', {
        hint: `the partial file ${part} is kept: run the same command again to resume`,
      });
    }
    return e;
  }
  if (signal?.aborted === true || isAbortError(e)) {
    return new InterruptedError('interrupted during download', {
      hint:
        part !== undefined
          ? `the partial file ${part} is kept: run the same command again to resume`
          : undefined,
    });
  }
  const msg = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown }).code;
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    // The origin stopped sending: a request past its limit (exit 4), the part kept for a later resume.
    return new TimeLimitError('the download stalled: no data within the request timeout (--timeout)', {
      cause: e,
      hint:
        part !== undefined
          ? `nothing was written to the final path; the partial file ${part} is kept: run the same command again to resume`
          : 'raise --timeout or check the result URL origin',
    });
  }
  return incomplete(
    `the connection dropped during the download: ${msg}${typeof code === 'string' ? ` (${code})` : ''}`,
    part,
    e,
  );
}

function signalOption(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal !== undefined ? { signal } : {};
}

/** Expected total size of the file from the answer, when the server states it. */
function expectedTotal(res: DownloadAnswer, offset: number): number | undefined {
  if (res.status === 206) return parseContentRange(header(res.headers, 'content-range'))?.total;
  const len = header(res.headers, 'content-length');
  return len !== undefined && /^\d+$/.test(len) ? Number(len) + offset : undefined;
}

/** A local write of the part failed (disk full, permissions, an I/O error on write-back). */
function writeFailed(e: unknown, path: string): GwError {
  return fsError(e, {
    path,
    action: 'write the download to',
    hint: 'free some space or fix the permissions, then run the same command again to resume from the .part',
  });
}

/** Bytes written to a part between two write-backs started while it downloads. */
const FLUSH_BYTES = 32 * 1024 * 1024;

/**
 * Starts writing the part back to disk while it downloads: every FLUSH_BYTES, one fdatasync on the thread pool
 * (never two at once). Left to the page cache, the whole file is written back by the fsync before the rename,
 * after the last byte arrived (0.56 s a GiB on this machine's disk, seconds on a slower one). A failed flush fails
 * the download: Linux reports a write-back error to one fsync only.
 */
class PartFlusher {
  #unflushed = 0;
  #running: Promise<void> | undefined;
  #error: unknown;

  constructor(private readonly fd: number) {}

  wrote(n: number): void {
    this.#unflushed += n;
    if (this.#unflushed < FLUSH_BYTES || this.#running !== undefined) return;
    this.#unflushed = 0;
    this.#running = new Promise((done) => {
      fdatasync(this.fd, (e) => {
        if (e !== null) this.#error ??= e;
        this.#running = undefined;
        done();
      });
    });
  }

  /** Waits for the flush in flight (the descriptor stays open until it ends); the first flush error, if any. */
  async settle(): Promise<unknown> {
    await this.#running;
    return this.#error;
  }
}

/**
 * Copies `body` into the part file (descriptor `fd`) in constant memory. Each chunk is written synchronously as it
 * is emitted: a download has nothing else to do meanwhile, the kernel keeps receiving into the socket buffer, and
 * the bytes go to the page cache while still in the CPU cache (asynchronous writes on the thread pool measured ~10%
 * slower per GiB on loopback, issue 9). The body flows ('data' events) rather than being iterated: an async
 * iterator calls `read()`, which joins every chunk buffered meanwhile into a fresh buffer (up to the answer's
 * highWaterMark) — a second copy of the bytes for the garbage collector, at every read that falls behind. Unlike
 * pipeline(), a failing source leaves every byte received in the part file for a later resume. Returns the error
 * that stopped the copy, if any.
 */
function drainInto(
  body: Readable,
  fd: number,
  path: string,
  onChunk: (chunk: Buffer) => void,
  signal: AbortSignal | undefined,
  flusher: PartFlusher,
): Promise<unknown> {
  if (signal !== undefined) addAbortSignal(signal, body);
  return new Promise((resolveDrain) => {
    let settled = false;
    const settle = (e: unknown): void => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      if (e !== undefined) body.destroy();
      resolveDrain(e);
    };
    const onData = (chunk: Buffer): void => {
      onChunk(chunk);
      try {
        for (let at = 0; at < chunk.length;) at += writeSync(fd, chunk, at);
        flusher.wrote(chunk.length);
      } catch (e) {
        settle(writeFailed(e, path));
      }
    };
    // finished() reports the end, an error, or a close before the end (a dropped connection) exactly once.
    finished(body, (e) => settle(e ?? undefined));
    body.on('data', onData);
  });
}

async function toStdout(o: DownloadOptions): Promise<DownloadResult> {
  const res = await o.open(undefined, o.signal, {});
  if (res.status !== 200) throw unexpectedStatus(res);
  const total = expectedTotal(res, 0);
  const hash = o.sha256 === true ? createHash('sha256') : undefined;
  let bytes = 0;
  try {
    await pipeline(
      res.body,
      meter(hash, 0, (n) => {
        bytes = n;
        o.onProgress?.(n, total);
      }),
      o.stdout ?? process.stdout,
      { end: false, ...signalOption(o.signal) },
    );
  } catch (e) {
    if ((e as { code?: unknown }).code === 'EPIPE') {
      // `gw … -o - | head -c 100`: the reader went away; not a network failure.
      throw new GwError(`standard output was closed after ${bytes} bytes`, {
        code: 'output_closed',
        cause: e,
      });
    }
    throw mapStreamError(e, o.signal, undefined);
  }
  if (total !== undefined && bytes !== total) {
    throw incomplete(`incomplete download: received ${bytes} of ${total} bytes`, undefined);
  }
  return { path: '-', bytes, ...digest(hash), resumed: false };
}

/** Drops an answer we will not read (an error on its body afterwards must not become an unhandled event). */
function discard(res: DownloadAnswer): void {
  res.body.on('error', () => undefined);
  res.body.destroy();
}

/** A 206 is accepted only when it continues exactly at `offset` up to the end of a stated total. */
function rangeMatches(res: DownloadAnswer, offset: number): boolean {
  const range = parseContentRange(header(res.headers, 'content-range'));
  if (range?.total === undefined) return false;
  if (range.start !== offset || range.end !== range.total - 1) return false;
  const len = header(res.headers, 'content-length');
  return len === undefined || Number(len) === range.end - range.start + 1;
}

function unexpectedStatus(res: DownloadAnswer): GwError {
  discard(res);
  return new GwError(`the download answered HTTP ${res.status}, not the file (expected 200 or 206)`, {
    code: 'download_status',
    hint: 'nothing was written; run the command again later, or check the result URL',
  });
}

/**
 * Downloads atomically and resumably: streams to `<file>.part` in constant memory, continues an existing part
 * with `Range: bytes=N-` and `If-Range` (the validator recorded with the part) when the server answers a 206
 * whose Content-Range is exactly the rest of the file (restarting cleanly on 200), hashes while streaming, and
 * renames to the final path only when the byte count matches the size the server stated. A part recorded for
 * another id or URL, or without a validator, is never continued. A failure never leaves anything at the final
 * path; the `.part` stays so the same call resumes it. Two processes never write the same part (a lock file).
 * `-` writes to stdout.
 */
export async function download(o: DownloadOptions): Promise<DownloadResult> {
  if (o.file === '-') return toStdout(o);
  await checkTarget(o.file, o.force);
  const part = partPath(o.file);
  const unlock = lockPart(part, o.file);
  try {
    return await downloadLocked(o, part);
  } finally {
    unlock();
  }
}

/** The answer a download writes from: a 206 that continues the part exactly, or a 200 of the whole file. */
interface Opened {
  res: DownloadAnswer;
  offset: number;
  resumed: boolean;
}

/**
 * Opens the answer: with `Range` and `If-Range` when the part may continue (its sidecar names the same download
 * and holds a validator), accepting a 206 only when it is exactly the rest of the file; else the whole file.
 */
async function openAnswer(o: DownloadOptions, part: string, identity: PartIdentity): Promise<Opened> {
  let offset = 0;
  const validator = o.resume !== false ? resumeValidator(readMeta(part), identity) : undefined;
  if (validator !== undefined) {
    try {
      offset = (await stat(part)).size;
    } catch {
      offset = 0;
    }
  }
  let res: DownloadAnswer;
  try {
    const headers: Record<string, string> =
      offset > 0 && validator !== undefined ? { range: `bytes=${offset}-`, 'if-range': validator } : {};
    res = await o.open(offset > 0 ? offset : undefined, o.signal, headers);
  } catch (e) {
    // 416: the part is not a prefix the server can continue (e.g. already complete or from another file).
    if (!(offset > 0 && e instanceof GatewayError && e.status === 416)) throw e;
    offset = 0;
    res = await o.open(undefined, o.signal, {});
  }
  if (offset > 0 && res.status === 206) {
    if (rangeMatches(res, offset)) return { res, offset, resumed: true };
    // The server continued somewhere else: the part cannot be trusted, start again from zero.
    discard(res);
    res = await o.open(undefined, o.signal, {});
  }
  if (res.status !== 200) throw unexpectedStatus(res);
  // A 200 answer is the whole file: start the part again, and record what it belongs to.
  try {
    writeMeta(part, {
      ...identity,
      etag: header(res.headers, 'etag'),
      lastModified: header(res.headers, 'last-modified'),
    });
  } catch (e) {
    discard(res);
    throw e;
  }
  return { res, offset: 0, resumed: false };
}

async function downloadLocked(o: DownloadOptions, part: string): Promise<DownloadResult> {
  const final = resolve(o.file);
  const { res, offset, resumed } = await openAnswer(o, part, o.identity ?? {});
  const total = expectedTotal(res, offset);
  const hash = o.sha256 === true ? createHash('sha256') : undefined;
  if (resumed && hash !== undefined) {
    const hashed = await hashFile(part, hash);
    if (hashed !== offset) {
      discard(res);
      throw incomplete(`the partial file ${part} changed while resuming`, part);
    }
  }
  let bytes = offset;
  let fd: number;
  try {
    fd = openSync(part, resumed ? 'a' : 'w', 0o644);
  } catch (e) {
    discard(res);
    throw fsError(e, {
      path: part,
      action: 'write',
      hint: 'check that the directory exists and is writable',
    });
  }
  const flusher = new PartFlusher(fd);
  try {
    const failure = await drainInto(
      res.body,
      fd,
      part,
      (chunk) => {
        hash?.update(chunk);
        bytes += chunk.length;
        o.onProgress?.(bytes, total);
      },
      o.signal,
      flusher,
    );
    if (failure !== undefined) throw mapStreamError(failure, o.signal, part);
    if (total !== undefined && bytes !== total) {
      throw incomplete(`incomplete download: received ${bytes} of ${total} bytes`, part);
    }
    const flushFailure = await flusher.settle();
    if (flushFailure !== undefined) throw writeFailed(flushFailure, part);
    // Flush to disk before the rename so a crash cannot leave a short file under the final name.
    fsyncSync(fd);
  } finally {
    await flusher.settle();
    closeSync(fd);
  }
  try {
    await rename(part, final);
  } catch (e) {
    throw fsError(e, { path: final, action: 'save', hint: `the complete file is kept as ${part}` });
  }
  removeMeta(part);
  return { path: final, bytes, ...digest(hash), resumed };
}
