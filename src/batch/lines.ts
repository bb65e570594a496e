/**
 * The JSONL files of a batch (its input, the state log, results.jsonl, errors.jsonl): records checked against
 * their writers' schemas, and files rewritten whole. Lines are read by core/lines.ts.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import type * as z from 'zod';
import { formatPath } from '../contract/validate.js';
import { GwError, UsageError } from '../core/errors.js';
import { fsError } from '../core/fs-errors.js';
import { badLineRule, isBad, readLineChunks, type BadLine, type Line } from '../core/lines.js';

export { badLineRule, isBad, MAX_LINE_BYTES, readLines, type BadLine, type Line } from '../core/lines.js';

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

/** A record of a JSONL file gw wrote: its line, its value, its text. */
export interface CheckedRecord<T> {
  lineNo: number;
  value: T;
  text: string;
}

/**
 * The records of a JSONL file gw wrote, each checked against its writer's schema. A torn last line (no newline:
 * a crash in the middle of a write) is skipped; any other line that is not a record is a DamagedFileError.
 * `wanted` skips lines before they are parsed (a cheap look at the text; reconciliation reads a few ids of many).
 * The records come in the groups each read of the file completed (readLineChunks).
 */
export async function* readRecordChunks<T>(
  path: string,
  schema: z.ZodType<T>,
  what: string,
  wanted?: (text: string) => boolean,
): AsyncGenerator<Array<CheckedRecord<T>>> {
  for await (const lines of readLineChunks(path)) {
    const records: Array<CheckedRecord<T>> = [];
    let damaged: unknown;
    try {
      for (const l of lines) {
        const r = checkedRecord(path, l, schema, what, wanted);
        if (r !== undefined) records.push(r);
      }
    } catch (e) {
      damaged = e;
    }
    // The records before a damaged line still come first, as when they came one at a time.
    if (records.length > 0) yield records;
    if (damaged !== undefined) throw damaged;
  }
}

/** readRecordChunks one record at a time. */
export async function* readRecords<T>(
  path: string,
  schema: z.ZodType<T>,
  what: string,
  wanted?: (text: string) => boolean,
): AsyncGenerator<CheckedRecord<T>> {
  for await (const records of readRecordChunks(path, schema, what, wanted)) yield* records;
}

/** One line read as a record (undefined: a line skipped), or a DamagedFileError. */
function checkedRecord<T>(
  path: string,
  l: Line | BadLine,
  schema: z.ZodType<T>,
  what: string,
  wanted: ((text: string) => boolean) | undefined,
): CheckedRecord<T> | undefined {
  if (isBad(l)) {
    if (!l.terminated) return undefined;
    throw new DamagedFileError(path, l.lineNo, badLineRule(l));
  }
  if (l.text.trim() === '' || (wanted !== undefined && !wanted(l.text))) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(l.text);
  } catch {
    if (!l.terminated) return undefined;
    throw new DamagedFileError(path, l.lineNo, `is not JSON (not ${what})`);
  }
  const r = schema.safeParse(v);
  if (!r.success) {
    if (!l.terminated) return undefined;
    const issue = r.error.issues[0];
    throw new DamagedFileError(
      path,
      l.lineNo,
      `is not ${what} (${issue !== undefined && issue.path.length > 0 ? `${formatPath(issue.path)}: ` : ''}${issue?.message ?? 'wrong shape'})`,
    );
  }
  return { lineNo: l.lineNo, value: r.data, text: l.text };
}

/**
 * The texts of the records readRecords yielded from `path` in an earlier pass that ended at line `last`, without
 * parsing them again (a merge copies a million lines it has checked), in the groups each read completed: the
 * caller holds the file's lock, so the lines are those it checked. Blank lines and the torn tail readRecords
 * skipped are skipped here too.
 */
export async function* checkedTextChunks(
  path: string,
  last: number,
): AsyncGenerator<Array<{ lineNo: number; text: string }>> {
  if (last === 0) return;
  for await (const lines of readLineChunks(path)) {
    const texts: Array<{ lineNo: number; text: string }> = [];
    for (const l of lines) {
      if (l.lineNo > last) break;
      if (!isBad(l) && l.text.trim() !== '') texts.push({ lineNo: l.lineNo, text: l.text });
    }
    if (texts.length > 0) yield texts;
    const end = lines[lines.length - 1];
    if (end !== undefined && end.lineNo >= last) return;
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
