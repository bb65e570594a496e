/**
 * The lines of a JSONL file (a batch input, the state log, results.jsonl, errors.jsonl), read as a stream: memory
 * holds one line at a time, and a line longer than the limit is reported and skipped, never held. Each line is
 * checked to be UTF-8 (a decoder would silently replace bad bytes, changing a custom_id or a prompt), a UTF-8 BOM
 * at the start of the file is dropped, and a last line without its newline is marked (a crash may have torn it).
 */
import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type * as z from 'zod';
import { formatPath } from '../contract/validate.js';
import { GwError, UsageError } from '../core/errors.js';
import { fsError } from '../core/fs-errors.js';
import { LOCAL_LIMITS, mib } from '../core/local-file.js';

/** One line: its 1-based number, its text (without the line break), whether a newline ended it. */
export interface Line {
  lineNo: number;
  text: string;
  terminated: boolean;
}

/** A line that cannot be read as text. */
export interface BadLine {
  lineNo: number;
  bad: 'utf8' | 'too_long';
  terminated: boolean;
}

/** The longest line read (a request body may carry Base64 images; the single commands allow 64 MiB). */
export const MAX_LINE_BYTES = LOCAL_LIMITS.body;

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** What is wrong with a bad line, for messages. */
export function badLineRule(b: BadLine): string {
  return b.bad === 'utf8' ? 'is not valid UTF-8' : `is longer than ${mib(MAX_LINE_BYTES)}`;
}

class Splitter {
  #parts: Buffer[] = [];
  #size = 0;
  #tooLong = false;
  #lineNo = 0;
  constructor(private readonly max: number) {}

  /** The lines completed by `chunk`. */
  *push(chunk: Buffer): Generator<Line | BadLine> {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      yield this.#take(chunk.subarray(start, nl), true);
      start = nl + 1;
    }
    if (start < chunk.length) this.#keep(chunk.subarray(start));
  }

  /** The last line, when the input did not end with a newline. */
  *end(): Generator<Line | BadLine> {
    if (this.#size > 0 || this.#tooLong) yield this.#take(Buffer.alloc(0), false);
  }

  #keep(piece: Buffer): void {
    if (this.#tooLong) return;
    if (this.#size + piece.length > this.max) {
      this.#tooLong = true;
      this.#parts = [];
      this.#size = 0;
      return;
    }
    // A copy: the stream may reuse its chunk's memory once the next one arrives.
    this.#parts.push(Buffer.from(piece));
    this.#size += piece.length;
  }

  #take(tail: Buffer, terminated: boolean): Line | BadLine {
    this.#keep(tail);
    const lineNo = ++this.#lineNo;
    const tooLong = this.#tooLong;
    let buf = this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts, this.#size);
    this.#parts = [];
    this.#size = 0;
    this.#tooLong = false;
    if (tooLong) return { lineNo, bad: 'too_long', terminated };
    if (lineNo === 1 && buf.subarray(0, 3).equals(BOM)) buf = buf.subarray(3);
    if (buf.length > 0 && buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1);
    if (!isUtf8(buf)) return { lineNo, bad: 'utf8', terminated };
    return { lineNo, text: buf.toString('utf8'), terminated };
  }
}

/** Every line of a file (or a stream), in order, blank ones included. */
export async function* readLines(
  source: string | Readable,
  o: { maxBytes?: number; onChunk?: ((bytes: Buffer) => void) | undefined } = {},
): AsyncGenerator<Line | BadLine> {
  const input = typeof source === 'string' ? createReadStream(source, { highWaterMark: 256 * 1024 }) : source;
  const split = new Splitter(o.maxBytes ?? MAX_LINE_BYTES);
  try {
    for await (const chunk of input) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      // The raw bytes, before they are split (a hash of the file in the same pass).
      o.onChunk?.(bytes);
      yield* split.push(bytes);
    }
    yield* split.end();
  } finally {
    if (typeof source === 'string') input.destroy();
  }
}

/** True for a line that could not be read as text. */
export function isBad(l: Line | BadLine): l is BadLine {
  return 'bad' in l;
}

/**
 * A file gw wrote and reads back (state log, results) holds a line that is not what its writer writes: exit 2
 * naming the file and the line, never `internal`.
 */
export class DamagedFileError extends UsageError {
  constructor(path: string, lineNo: number, what: string) {
    super(`${path} line ${lineNo}: ${what}`, {
      code: 'damaged_file',
      field: path,
      hint: 'the file was changed by something other than gw; restore it, or remove the line (a line removed from state.jsonl may make gw send that item again)',
    });
  }
}

/**
 * The records of a JSONL file gw wrote, each checked against its writer's schema. A torn last line (no newline:
 * a crash in the middle of a write) is skipped; any other line that is not a record is a DamagedFileError.
 * `wanted` skips lines before they are parsed (a cheap look at the text; reconciliation reads a few ids of many).
 */
export async function* readRecords<T>(
  path: string,
  schema: z.ZodType<T>,
  what: string,
  wanted?: (text: string) => boolean,
): AsyncGenerator<{ lineNo: number; value: T; text: string }> {
  for await (const l of readLines(path)) {
    if (isBad(l)) {
      if (!l.terminated) continue;
      throw new DamagedFileError(path, l.lineNo, badLineRule(l));
    }
    if (l.text.trim() === '' || (wanted !== undefined && !wanted(l.text))) continue;
    let v: unknown;
    try {
      v = JSON.parse(l.text);
    } catch {
      if (!l.terminated) continue;
      throw new DamagedFileError(path, l.lineNo, `is not JSON (not ${what})`);
    }
    const r = schema.safeParse(v);
    if (!r.success) {
      if (!l.terminated) continue;
      const issue = r.error.issues[0];
      throw new DamagedFileError(
        path,
        l.lineNo,
        `is not ${what} (${issue !== undefined && issue.path.length > 0 ? `${formatPath(issue.path)}: ` : ''}${issue?.message ?? 'wrong shape'})`,
      );
    }
    yield { lineNo: l.lineNo, value: r.data, text: l.text };
  }
}

/**
 * The text of the records readRecords yielded from `path` in an earlier pass that ended at line `last`, without
 * parsing them again (a merge copies a million lines it has checked): the caller holds the file's lock, so the
 * lines are those it checked. Blank lines and the torn tail readRecords skipped are skipped here too.
 */
export async function* checkedTexts(
  path: string,
  last: number,
): AsyncGenerator<{ lineNo: number; text: string }> {
  if (last === 0) return;
  for await (const l of readLines(path)) {
    if (l.lineNo > last) return;
    if (isBad(l) || l.text.trim() === '') continue;
    yield { lineNo: l.lineNo, text: l.text };
  }
}

/** Characters StagedFile gathers before it writes. */
const STAGED_CHUNK = 256 * 1024;

/**
 * A file rewritten whole (errors.jsonl after a retry, a merge's files, results.jsonl after a download): written
 * beside its final name and renamed into place once complete, so a crash leaves the old file or the new one.
 */
export class StagedFile {
  readonly #ws: WriteStream;
  readonly #tmp: string;
  readonly #closed: Promise<void>;
  /** Lines gathered into one write: a write per line costs a merge of a million lines seconds of syscalls. */
  #pending = '';
  constructor(readonly path: string) {
    this.#tmp = `${path}.tmp`;
    this.#ws = createWriteStream(this.#tmp, { mode: 0o600 });
    this.#closed = new Promise<void>((res, rej) => this.#ws.once('close', res).once('error', rej));
    this.#closed.catch(() => undefined);
  }
  async write(text: string): Promise<void> {
    this.#pending += text;
    if (this.#pending.length < STAGED_CHUNK) return;
    const chunk = this.#pending;
    this.#pending = '';
    if (!this.#ws.write(chunk)) await once(this.#ws, 'drain');
  }
  async commit(): Promise<void> {
    this.#ws.end(this.#pending);
    this.#pending = '';
    await this.#closed;
    await rename(this.#tmp, this.path);
  }
  /** Drops what was written (the final file stays as it was). */
  async abandon(): Promise<void> {
    this.#ws.destroy();
    await unlink(this.#tmp).catch(() => undefined);
  }
}

/** Writes a staged file with `fill`; on any failure nothing replaces the final file. */
export async function rewrite(path: string, fill: (f: StagedFile) => Promise<void>): Promise<void> {
  const f = new StagedFile(path);
  try {
    await fill(f);
    await f.commit();
  } catch (e) {
    await f.abandon();
    throw e instanceof GwError ? e : fsError(e, { path, action: 'rewrite' });
  }
}
