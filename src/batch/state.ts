/**
 * The state of a batch directory: `state.jsonl`, an append-only log that is the source of truth. A record is
 * made durable (written and fsynced) before the create it announces is sent, and after each answer. Writes are
 * grouped: every record queued while one fsync runs goes out in the next write and shares the next fsync (group
 * commit), so thousands of requests in flight do not mean thousands of fsyncs in a row.
 *
 * results.jsonl and errors.jsonl are appended through the same commit, and made durable before the state record
 * that says the item is finished: a crash between the two leaves a result line whose state still says
 * "sending", which the next run finds in the output files (never resending it).
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, stat, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Currency } from '../contract/estimate.js';

/** File names inside a batch directory. */
export const STATE_FILE = 'state.jsonl';
export const RESULTS_FILE = 'results.jsonl';
export const ERRORS_FILE = 'errors.jsonl';
export const FILES_DIR = 'files';

/** An amount in a currency. */
export interface Money {
  c: Currency;
  a: number;
}

/** Options a run records for `retry`. */
export interface RunRecordOptions {
  concurrency: number;
  budgets: string[];
  allowUnpriced: boolean;
  maxAttempts: number;
  shard?: string | undefined;
  download: boolean;
}

/** One line of the state log. `at` is milliseconds since the epoch. */
export type StateRecord =
  | {
      e: 'run';
      at: number;
      input: string;
      argv: string[];
      shard?: string | undefined;
      /** The options of the run, so `gw batch retry` runs the same way. */
      opts?: RunRecordOptions | undefined;
    }
  | { e: 'send'; id: string; at: number; url: string; model: string; est?: Money | undefined }
  | { e: 'unsent'; id: string; at: number; code: string }
  | { e: 'created'; id: string; at: number; task: string; kind: string; rid?: string | undefined }
  | { e: 'task'; id: string; at: number; state: string }
  | { e: 'done'; id: string; at: number; status: number; implied?: Money | undefined }
  | { e: 'failed'; id: string; at: number; status?: number | undefined; code: string }
  | { e: 'doubt'; id: string; at: number; reason: string }
  | { e: 'reset'; id: string; at: number }
  | {
      e: 'end';
      at: number;
      exit: number;
      reason: string;
      /** The input as it was (size, mtime) and the totals: a re-run of an unchanged, complete batch is a no-op. */
      input?: { path: string; size: number; mtimeMs: number; shard?: string | undefined } | undefined;
      totals?: { total: number; done: number; failed: number; doubt: number } | undefined;
    };

/** Where an item stands. */
export type ItemStatus = 'sending' | 'created' | 'done' | 'failed' | 'doubt';

/** What a created (async) item needs to be followed again. */
export interface CreatedItem {
  task: string;
  kind: string;
  url: string;
  /** The model of its create (its lane of the limits); '' when an older log did not say. */
  model: string;
}

/** Totals and per-item status rebuilt from the log (also kept up to date by a running batch). */
export class BatchState {
  readonly status = new Map<string, ItemStatus>();
  readonly created = new Map<string, CreatedItem>();
  /** Estimates of items whose create may have been billed (sending, created, done, in doubt). */
  readonly estimate = new Map<string, Money>();
  readonly implied = new Map<string, Money>();
  readonly failureCode = new Map<string, string>();
  readonly urlOf = new Map<string, string>();
  readonly modelOf = new Map<string, string>();
  runs: Extract<StateRecord, { e: 'run' }>[] = [];
  /**
   * False while a batch runs: an item finished in this run is never looked up again (custom_ids are unique), so it
   * is dropped from the maps and memory stays flat however long the file is.
   */
  keepFinished = true;

  /** Drops a finished item (see keepFinished). */
  forget(id: string): void {
    if (this.keepFinished) return;
    this.status.delete(id);
    this.urlOf.delete(id);
    this.modelOf.delete(id);
    this.failureCode.delete(id);
  }

  /** Applies one record. */
  apply(r: StateRecord): void {
    switch (r.e) {
      case 'run':
        this.runs.push(r);
        return;
      case 'end':
        return;
      case 'send':
        this.status.set(r.id, 'sending');
        this.failureCode.delete(r.id);
        if (r.est !== undefined) this.estimate.set(r.id, r.est);
        else this.estimate.delete(r.id);
        if (r.url.startsWith('/v1/videos') || r.url.startsWith('/alpha') || r.url.startsWith('/beta')) {
          this.urlOf.set(r.id, r.url);
          this.modelOf.set(r.id, r.model);
        }
        return;
      case 'unsent':
      case 'reset':
        this.status.delete(r.id);
        this.created.delete(r.id);
        this.estimate.delete(r.id);
        this.implied.delete(r.id);
        this.failureCode.delete(r.id);
        return;
      case 'created':
        this.status.set(r.id, 'created');
        this.created.set(r.id, {
          task: r.task,
          kind: r.kind,
          url: this.urlOf.get(r.id) ?? '',
          model: this.modelOf.get(r.id) ?? '',
        });
        return;
      case 'task':
        return;
      case 'done':
        this.status.set(r.id, 'done');
        this.created.delete(r.id);
        if (r.implied !== undefined) this.implied.set(r.id, r.implied);
        return;
      case 'failed':
        this.status.set(r.id, 'failed');
        this.created.delete(r.id);
        this.failureCode.set(r.id, r.code);
        // An error answer to the create billed nothing; a task that failed after creation keeps its estimate.
        if (r.status !== undefined && r.status >= 400) this.estimate.delete(r.id);
        return;
      case 'doubt':
        this.status.set(r.id, 'doubt');
        return;
    }
  }

  /** Counts per status. */
  counts(): Record<ItemStatus, number> {
    const c: Record<ItemStatus, number> = { sending: 0, created: 0, done: 0, failed: 0, doubt: 0 };
    for (const s of this.status.values()) c[s]++;
    return c;
  }

  /** Sum of a money map per currency. */
  static total(m: ReadonlyMap<string, Money>): Partial<Record<Currency, number>> {
    const out: Partial<Record<Currency, number>> = {};
    for (const v of m.values()) out[v.c] = Math.round(((out[v.c] ?? 0) + v.a) * 100) / 100;
    return out;
  }
}

/** Reads a batch directory's state log (a torn last line from a crash is ignored). */
export async function loadState(
  dir: string,
  onRecord?: (r: StateRecord) => void,
): Promise<BatchState | undefined> {
  const path = join(dir, STATE_FILE);
  try {
    await stat(path);
  } catch {
    return undefined;
  }
  const state = new BatchState();
  const rl = createInterface({
    input: createReadStream(path, { highWaterMark: 256 * 1024 }),
    crlfDelay: Infinity,
  });
  for await (const line of rl) {
    if (line.length === 0) continue;
    let r: StateRecord;
    try {
      r = JSON.parse(line) as StateRecord;
    } catch {
      continue;
    }
    state.apply(r);
    onRecord?.(r);
  }
  return state;
}

/** The last record of a state log (read from its tail only), or undefined. */
export async function readLastRecord(dir: string): Promise<StateRecord | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(join(dir, STATE_FILE), 'r');
  } catch {
    return undefined;
  }
  try {
    const size = (await fh.stat()).size;
    const span = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(span);
    await fh.read(buf, 0, span, size - span);
    const text = buf.toString('utf8').trimEnd();
    const last = text.slice(text.lastIndexOf('\n') + 1);
    return JSON.parse(last) as StateRecord;
  } catch {
    return undefined;
  } finally {
    await fh.close();
  }
}

/** Cuts a torn last line (a crash in the middle of a write) so appends start on a fresh line. */
async function repairTail(path: string): Promise<void> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    return;
  }
  if (size === 0) return;
  const fh = await open(path, 'r');
  try {
    const span = Math.min(size, 1 << 20);
    const buf = Buffer.alloc(span);
    await fh.read(buf, 0, span, size - span);
    if (buf[span - 1] === 0x0a) return;
    const nl = buf.lastIndexOf(0x0a);
    const keep = nl >= 0 ? size - span + nl + 1 : 0;
    await fh.close();
    await truncate(path, keep);
    return;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

type Waiter = { resolve: () => void; reject: (e: unknown) => void };

/** The append side: state, results and errors files with group commit. */
export class BatchWriter {
  #pending: { state: string[]; results: string[]; errors: string[]; waiters: Waiter[] } = {
    state: [],
    results: [],
    errors: [],
    waiters: [],
  };
  #flushing: Promise<void> | undefined;
  #failed: Error | undefined;

  private constructor(
    private readonly state: FileHandle,
    private readonly results: FileHandle,
    private readonly errors: FileHandle,
  ) {}

  /** Opens (creating) the files of `dir` for appending. */
  static async open(dir: string): Promise<BatchWriter> {
    await mkdir(dir, { recursive: true });
    const paths = [STATE_FILE, RESULTS_FILE, ERRORS_FILE].map((f) => join(dir, f));
    for (const p of paths) await repairTail(p);
    const [s, r, e] = await Promise.all(paths.map((p) => open(p, 'a', 0o600)));
    return new BatchWriter(s as FileHandle, r as FileHandle, e as FileHandle);
  }

  /** Appends a state record (and an output line), resolving once both are on disk. */
  append(rec: StateRecord, out?: { file: 'results' | 'errors'; line: string }): Promise<void> {
    if (this.#failed !== undefined) {
      return Promise.reject(this.#failed);
    }
    const p = this.#pending;
    p.state.push(JSON.stringify(rec));
    if (out !== undefined) p[out.file].push(out.line);
    return new Promise<void>((resolve, reject) => {
      p.waiters.push({ resolve, reject });
      this.#kick();
    });
  }

  #kick(): void {
    if (this.#flushing !== undefined) return;
    this.#flushing = (async () => {
      while (this.#pending.waiters.length > 0) {
        const batch = this.#pending;
        this.#pending = { state: [], results: [], errors: [], waiters: [] };
        try {
          if (batch.results.length > 0) {
            await this.results.write(`${batch.results.join('\n')}\n`);
            await this.results.datasync();
          }
          if (batch.errors.length > 0) {
            await this.errors.write(`${batch.errors.join('\n')}\n`);
            await this.errors.datasync();
          }
          await this.state.write(`${batch.state.join('\n')}\n`);
          await this.state.datasync();
          for (const w of batch.waiters) w.resolve();
        } catch (e) {
          this.#failed = e instanceof Error ? e : new Error('could not write the batch state');
          for (const w of batch.waiters) w.reject(e);
          for (const w of this.#pending.waiters) w.reject(e);
          this.#pending.waiters = [];
        }
      }
      this.#flushing = undefined;
    })();
  }

  /** Waits for pending writes and closes the files. */
  async close(): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing;
    await Promise.all([this.state.close(), this.results.close(), this.errors.close()]);
  }
}
