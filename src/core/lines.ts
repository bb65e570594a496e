/**
 * The lines of a JSONL input (a batch, a replay trace, the state log, results) read as a stream: memory holds one
 * line at a time, and a line longer than the limit is reported and skipped, never held. Each line is checked to be
 * UTF-8 (a decoder would silently replace bad bytes, changing a custom_id or a prompt), a UTF-8 BOM at the start of
 * the file is dropped, and a last line without its newline is marked (a crash may have torn it).
 */
import { isUtf8 } from 'node:buffer';
import { createReadStream, type ReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { InterruptedError, UsageError } from './errors.js';
import { LOCAL_LIMITS, mib, unreadable } from './local-file.js';

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

  /** The lines completed by `chunk`, added to `out`. */
  push(chunk: Buffer, out: Array<Line | BadLine>): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      out.push(this.#take(chunk.subarray(start, nl), true));
      start = nl + 1;
    }
    if (start < chunk.length) this.#keep(chunk.subarray(start));
  }

  /** The last line, when the input did not end with a newline. */
  end(out: Array<Line | BadLine>): void {
    if (this.#size > 0 || this.#tooLong) out.push(this.#take(Buffer.alloc(0), false));
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
    const lineNo = ++this.#lineNo;
    // A line within one chunk is decoded from the chunk itself (now, before the stream reads on): no copy.
    let buf = tail;
    if (this.#parts.length > 0 || this.#tooLong) {
      this.#keep(tail);
      buf = this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts, this.#size);
    } else if (tail.length > this.max) this.#tooLong = true;
    const tooLong = this.#tooLong;
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

/**
 * Every line of a file (or a stream), in order, blank ones included, as the lines each read completed: a reader
 * of a million lines pays for one turn of the event loop a read, not one a line.
 */
export async function* readLineChunks(
  source: string | Readable,
  o: { maxBytes?: number; onChunk?: ((bytes: Buffer) => void) | undefined } = {},
): AsyncGenerator<Array<Line | BadLine>> {
  const input = typeof source === 'string' ? createReadStream(source, { highWaterMark: 256 * 1024 }) : source;
  const split = new Splitter(o.maxBytes ?? MAX_LINE_BYTES);
  try {
    for await (const chunk of input) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      // The raw bytes, before they are split (a hash of the file in the same pass).
      o.onChunk?.(bytes);
      const lines: Array<Line | BadLine> = [];
      split.push(bytes, lines);
      if (lines.length > 0) yield lines;
    }
    const last: Array<Line | BadLine> = [];
    split.end(last);
    if (last.length > 0) yield last;
  } finally {
    if (typeof source === 'string') input.destroy();
  }
}

/** Every line of a file (or a stream), in order, blank ones included. */
export async function* readLines(
  source: string | Readable,
  o: { maxBytes?: number; onChunk?: ((bytes: Buffer) => void) | undefined } = {},
): AsyncGenerator<Line | BadLine> {
  for await (const lines of readLineChunks(source, o)) yield* lines;
}

/** True for a line that could not be read as text. */
export function isBad(l: Line | BadLine): l is BadLine {
  return 'bad' in l;
}

/**
 * A regular file named by a flag (`gw load --replay`, `gw load import`), opened as a stream read ahead by its
 * buffer only. A missing or unreadable file, a directory or anything but a regular file (`regular` says why one
 * is needed) is a UsageError naming the flag; Ctrl-C (`signal`) destroys the stream with an InterruptedError.
 * The caller destroys it when done (`release`).
 */
export async function openLocalStream(
  path: string,
  o: { flag: string; field: string; regular: string; signal?: AbortSignal | undefined },
): Promise<{ stream: ReadStream; release: () => void }> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    throw unreadable(e, path, o);
  }
  if (st.isDirectory())
    throw new UsageError(`${o.flag}: cannot read file "${path}": it is a directory`, { field: o.field });
  if (!st.isFile())
    throw new UsageError(`${o.flag}: "${path}" is not a regular file (${o.regular})`, { field: o.field });
  const stream = createReadStream(path, { highWaterMark: 256 * 1024 });
  const stop = (): void => void stream.destroy(new InterruptedError());
  if (o.signal?.aborted === true) stop();
  else o.signal?.addEventListener('abort', stop, { once: true });
  const release = (): void => {
    o.signal?.removeEventListener('abort', stop);
    stream.destroy();
  };
  return { stream, release };
}

/** The lines of a regular file named by a flag (openLocalStream), streamed: one line in memory at a time. */
export async function* readLocalLines(
  path: string,
  o: { flag: string; field: string; regular: string; signal?: AbortSignal | undefined },
): AsyncGenerator<Line | BadLine> {
  const { stream, release } = await openLocalStream(path, o);
  try {
    yield* readLines(stream);
  } catch (e) {
    if (e instanceof InterruptedError) throw e;
    throw unreadable(e, path, o);
  } finally {
    release();
  }
}
