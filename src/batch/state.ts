/**
 * The state of a batch directory: `state.jsonl`, an append-only log that is the source of truth. A record is
 * made durable (written and fsynced) before the create it announces is sent, and after each answer. Writes are
 * grouped: every record queued while one fsync runs goes out in the next write and shares the next fsync (group
 * commit), so thousands of requests in flight do not mean thousands of fsyncs in a row.
 *
 * results.jsonl and errors.jsonl are appended through the same commit, and made durable before the state record
 * that says the item is finished: a crash between the two leaves a result line whose state still says
 * "sending", which the next run finds in the output files (never resending it). The log is read back through its
 * schema (below, next to its writer): a damaged line is exit 2 naming the file and line.
 */
import { mkdir, open, stat, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import type { Currency } from '../contract/estimate.js';
import { pricesSchema } from '../contract/prices.js';
import { fsError } from '../core/fs-errors.js';
import { readRecords } from './lines.js';

/** File names inside a batch directory. */
export const STATE_FILE = 'state.jsonl';
export const RESULTS_FILE = 'results.jsonl';
export const ERRORS_FILE = 'errors.jsonl';
export const FILES_DIR = 'files';
/** The lock of the directory's one writer (core/lock.ts). */
export const LOCK_FILE = 'batch.lock';

/** Currencies in the one order every total is shown in (a run and its merge alike). */
export const CURRENCIES: readonly Currency[] = ['CNY', 'USD'];

const moneySchema = z.object({ c: z.enum(['CNY', 'USD']), a: z.number() });

/** An amount in a currency. */
export type Money = z.infer<typeof moneySchema>;

const runOptsSchema = z.object({
  concurrency: z.number().int().positive(),
  budgets: z.array(z.string()),
  allowUnpriced: z.boolean(),
  maxAttempts: z.number().int().positive(),
  shard: z.string().optional(),
  /** The scheduler's own index of the shard (`SLURM_ARRAY_TASK_ID=2`), when a scheduler gave it. */
  index: z.string().optional(),
  download: z.boolean(),
  /** --prices: the file as read (a retry or a resume prices the same way) and its path (for the resume command). */
  prices: z.object({ path: z.string().optional(), file: pricesSchema }).optional(),
});

/** Options a run records for `retry`. */
export type RunRecordOptions = z.infer<typeof runOptsSchema>;

const id = { id: z.string(), at: z.number() };
/** The request id of the answer the record is about, when the gateway sent one. */
const rid = z.string().optional();

/** One line of the state log. `at` is milliseconds since the epoch. */
export const stateRecordSchema = z.discriminatedUnion('e', [
  z.object({
    e: z.literal('run'),
    at: z.number(),
    input: z.string(),
    argv: z.array(z.string()),
    shard: z.string().optional(),
    /**
     * The run's identity: a hash of the input's bytes and the shard count (core/shard.ts runId). Shards of one run
     * share it; merge refuses directories of different runs. Absent from logs of versions before it.
     */
    run: z.string().optional(),
    /** The options of the run, so `gw batch retry` runs the same way. */
    opts: runOptsSchema.optional(),
  }),
  z.object({ e: z.literal('send'), ...id, url: z.string(), model: z.string(), est: moneySchema.optional() }),
  z.object({ e: z.literal('unsent'), ...id, code: z.string(), rid }),
  z.object({
    e: z.literal('created'),
    ...id,
    task: z.string(),
    kind: z.enum(['video', 'alpha', 'beta']),
    rid,
    status: z.number().optional(),
  }),
  z.object({ e: z.literal('task'), ...id, state: z.string() }),
  /** A created task that could not be followed to its end this time (a download cut): followed again next run. */
  z.object({ e: z.literal('unfinished'), ...id, code: z.string(), message: z.string() }),
  z.object({ e: z.literal('done'), ...id, status: z.number(), implied: moneySchema.optional(), rid }),
  z.object({ e: z.literal('failed'), ...id, status: z.number().optional(), code: z.string(), rid }),
  z.object({ e: z.literal('doubt'), ...id, reason: z.string(), rid }),
  z.object({ e: z.literal('reset'), ...id }),
  /** The end of a merged directory's log: the run merged, and its shards merged and missing (as k/n). */
  z.object({
    e: z.literal('merge'),
    at: z.number(),
    run: z.string().optional(),
    n: z.number().int().positive(),
    merged: z.array(z.string()),
    missing: z.array(z.string()),
  }),
  z.object({
    e: z.literal('end'),
    at: z.number(),
    exit: z.number(),
    reason: z.string(),
    /** The input as it was (size, mtime) and the totals: a re-run of an unchanged, complete batch is a no-op. */
    input: z
      .object({ path: z.string(), size: z.number(), mtimeMs: z.number(), shard: z.string().optional() })
      .optional(),
    totals: z
      .object({
        total: z.number(),
        done: z.number(),
        failed: z.number(),
        doubt: z.number(),
        unfinished: z.number().optional(),
      })
      .optional(),
  }),
]);

/** One line of the state log. */
export type StateRecord = z.infer<typeof stateRecordSchema>;

/** Where an item stands. */
export type ItemStatus = 'sending' | 'created' | 'done' | 'failed' | 'doubt';

/** The kinds of created (async) items. */
export type TaskKind = Extract<StateRecord, { e: 'created' }>['kind'];

/** What a created (async) item needs to be followed again. */
export interface CreatedItem {
  task: string;
  kind: TaskKind;
  url: string;
  /** The model of its create (its lane of the limits); '' when an older log did not say. */
  model: string;
  /** The create's answer: status and request id (a resumed run writes them to results.jsonl). */
  status?: number | undefined;
  rid?: string | undefined;
}

/**
 * Decimals of the totals a batch shows: cents for the documents' list prices; a millionth with --prices, whose
 * token rates make a request cost a fraction of a cent.
 */
export function moneyDigits(prices: unknown): 2 | 6 {
  return prices !== undefined ? 6 : 2;
}

/** An amount rounded to `digits` decimals. */
export function roundMoney(a: number, digits: 2 | 6 = 2): number {
  const f = 10 ** digits;
  return Math.round(a * f) / f;
}

/** Totals per currency, in the order of CURRENCIES, rounded to cents (or `digits`). */
export function byCurrency(amounts: Iterable<Money>, digits: 2 | 6 = 2): Partial<Record<Currency, number>> {
  const sums = new Map<Currency, number>();
  for (const m of amounts) sums.set(m.c, (sums.get(m.c) ?? 0) + m.a);
  const out: Partial<Record<Currency, number>> = {};
  for (const c of CURRENCIES) {
    const a = sums.get(c);
    if (a !== undefined) out[c] = roundMoney(a, digits);
  }
  return out;
}

/**
 * Totals and per-item status rebuilt from the log. A run reads it as the log stood when it started (after the
 * crash recovery of reconcile.ts) and never changes it: what the run does goes to the log only.
 */
export class BatchState {
  readonly status = new Map<string, ItemStatus>();
  readonly created = new Map<string, CreatedItem>();
  /** Estimates of items whose create may have been billed (sending, created, done, in doubt). */
  readonly estimate = new Map<string, Money>();
  readonly implied = new Map<string, Money>();
  readonly failureCode = new Map<string, string>();
  /** The URL and model of each item whose create is in flight (a `send` with no answer recorded yet). */
  readonly urlOf = new Map<string, string>();
  readonly modelOf = new Map<string, string>();
  /** When each item in flight was sent (its `send` record's `at`): the journal names a create by it. */
  readonly sentAt = new Map<string, number>();
  /** Created items whose last follow stopped short of their end (see the `unfinished` record). */
  readonly unfinished = new Set<string>();
  runs: Extract<StateRecord, { e: 'run' }>[] = [];

  #settle(id: string): void {
    this.created.delete(id);
    this.#answered(id);
    this.unfinished.delete(id);
  }

  /** The create of `id` is no longer in flight. */
  #answered(id: string): void {
    this.sentAt.delete(id);
    this.urlOf.delete(id);
    this.modelOf.delete(id);
  }

  /** Applies one record. */
  apply(r: StateRecord): void {
    switch (r.e) {
      case 'run':
        this.runs.push(r);
        return;
      case 'end':
      case 'task':
      case 'merge':
        return;
      case 'send':
        this.status.set(r.id, 'sending');
        this.sentAt.set(r.id, r.at);
        this.failureCode.delete(r.id);
        if (r.est !== undefined) this.estimate.set(r.id, r.est);
        else this.estimate.delete(r.id);
        // Kept while the create is in flight only: a crash's recovery prices the answer it finds by them, and a
        // task's follow keeps them in `created`.
        this.urlOf.set(r.id, r.url);
        this.modelOf.set(r.id, r.model);
        return;
      case 'unsent':
      case 'reset':
        this.status.delete(r.id);
        this.#settle(r.id);
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
          status: r.status,
          rid: r.rid,
        });
        this.#answered(r.id);
        return;
      case 'unfinished':
        this.unfinished.add(r.id);
        return;
      case 'done':
        this.status.set(r.id, 'done');
        this.#settle(r.id);
        if (r.implied !== undefined) this.implied.set(r.id, r.implied);
        return;
      case 'failed':
        this.status.set(r.id, 'failed');
        this.#settle(r.id);
        this.failureCode.set(r.id, r.code);
        // An error answer to the create billed nothing; a task that failed after creation keeps its estimate.
        if (r.status !== undefined && r.status >= 400) this.estimate.delete(r.id);
        return;
      case 'doubt':
        this.status.set(r.id, 'doubt');
        this.#answered(r.id);
        return;
    }
  }

  /** Counts per status. */
  counts(): Record<ItemStatus, number> {
    const c: Record<ItemStatus, number> = { sending: 0, created: 0, done: 0, failed: 0, doubt: 0 };
    for (const s of this.status.values()) c[s]++;
    return c;
  }
}

/** Reads a batch directory's state log (a torn last line from a crash is ignored; a damaged one is exit 2). */
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
  for await (const { value } of readRecords(path, stateRecordSchema, 'a state record')) {
    state.apply(value);
    onRecord?.(value);
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
    const r = stateRecordSchema.safeParse(JSON.parse(text.slice(text.lastIndexOf('\n') + 1)));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  } finally {
    await fh.close();
  }
}

/**
 * Where a file ends once a torn last line (a crash in the middle of a write) is cut: after its last newline,
 * looked for backwards a block at a time however long the torn line is; 0 when it holds no newline at all.
 */
async function completeLength(fh: FileHandle, size: number): Promise<number> {
  const block = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - block.length);
    const n = end - start;
    await fh.read(block, 0, n, start);
    const nl = block.subarray(0, n).lastIndexOf(0x0a);
    if (nl >= 0) return start + nl + 1;
    end = start;
  }
  return 0;
}

/** Cuts a torn last line so appends start on a fresh line; never a byte before the last complete line. */
export async function repairTail(path: string): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch {
    return;
  }
  let keep: number | undefined;
  try {
    const size = (await fh.stat()).size;
    const last = Buffer.alloc(1);
    if (size > 0) await fh.read(last, 0, 1, size - 1);
    if (size > 0 && last[0] !== 0x0a) keep = await completeLength(fh, size);
  } finally {
    await fh.close();
  }
  if (keep !== undefined) await truncate(path, keep);
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
    private readonly dir: string,
    private readonly state: FileHandle,
    private readonly results: FileHandle,
    private readonly errors: FileHandle,
  ) {}

  /** Opens (creating) the files of `dir` for appending. */
  static async open(dir: string): Promise<BatchWriter> {
    await mkdir(dir, { recursive: true });
    const paths = [STATE_FILE, RESULTS_FILE, ERRORS_FILE].map((f) => join(dir, f));
    try {
      for (const p of paths) await repairTail(p);
      const [s, r, e] = await Promise.all(paths.map((p) => open(p, 'a', 0o600)));
      return new BatchWriter(dir, s as FileHandle, r as FileHandle, e as FileHandle);
    } catch (e) {
      throw fsError(e, { path: dir, action: 'write the batch files in' });
    }
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
          this.#failed = fsError(e, { path: this.dir, action: 'write the batch files in' });
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
