/**
 * A batch run from its options to its document: the directory's lock (one writer: run, retry, merge and download
 * take it), the input (a stream is kept as `<dir>/input.jsonl` so the batch can be resumed), the state, the first
 * pass, the budget checks, the clients, the engine, and the end record. Nothing on disk changes before the run is
 * certain to start (the lock taken, the input found and checked, the token there).
 */
import { mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { sleep as realSleep } from '../client/backoff.js';
import type { GatewayClient } from '../client/gateway-client.js';
import type { Currency } from '../contract/estimate.js';
import type { PriceTable } from '../contract/prices.js';
import { parseBudgets } from '../core/budget.js';
import { ExitCode, GwError, UsageError } from '../core/errors.js';
import { fsError } from '../core/fs-errors.js';
import { copyStreamToFile, LOCAL_LIMITS } from '../core/local-file.js';
import { describeOwner, lock } from '../core/lock.js';
import { parseShard, runId, shardText, type IndexedShard } from '../core/shard.js';
import type {
  BatchClock,
  BatchRunDoc,
  ClientSource,
  RetryBatchOptions,
  RunBatchOptions,
  RunStats,
} from './options.js';
import { reconcile } from './reconcile.js';
import { dropErrorLines } from './retry.js';
import { Engine, type RunResult } from './run.js';
import { scan, type Scan } from './scan.js';
import { recordedPrices } from './spend.js';
import {
  BatchState,
  BatchWriter,
  LOCK_FILE,
  STATE_FILE,
  loadState,
  readLastRecord,
  type RunRecordOptions,
  type StateRecord,
} from './state.js';

const REAL_CLOCK: BatchClock = { now: () => Date.now(), sleep: realSleep };

/** The lock options a caller gives. */
type LockCaller = Pick<RunBatchOptions, 'waitLock' | 'signal' | 'onLockWait'>;

/**
 * Runs `f` holding the lock of batch directory `dir` (created first when `create`). A second writer of the same
 * directory is refused (exit 1, `batch_locked`, naming the process), or waits with `waitLock`.
 */
export async function withBatchLock<T>(
  dir: string,
  o: LockCaller,
  create: boolean,
  f: () => Promise<T>,
): Promise<T> {
  if (create) {
    try {
      await mkdir(dir, { recursive: true });
    } catch (e) {
      throw fsError(e, { path: dir, action: 'create the batch directory', usage: true, field: '--out' });
    }
  }
  const path = join(dir, LOCK_FILE);
  const release = await lock(path, {
    busy: (owner) =>
      new GwError(`${describeOwner(owner)} is working on the batch in ${dir}`, {
        code: 'batch_locked',
        hint: `wait for it to end (--wait-lock waits for it); if no gw is running there, remove ${path}`,
      }),
    wait: o.waitLock,
    signal: o.signal,
    onWait: (owner) => o.onLockWait?.(describeOwner(owner)),
  });
  try {
    return await f();
  } finally {
    release();
  }
}

/** The numbers a run works with, checked. */
interface RunSettings {
  validate: boolean;
  concurrency: number;
  budgets: Map<Currency, number>;
  allowUnpriced: boolean;
  prices?: PriceTable | undefined;
  pricesPath?: string | undefined;
  maxAttempts: number;
  shard?: IndexedShard | undefined;
  download: boolean;
  timeoutMs?: number | undefined;
  resendInDoubt: boolean;
}

function int(v: number | undefined, name: string, dflt: number, max: number): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < 1 || v > max) {
    throw new UsageError(`${name}: ${v} must be an integer from 1 to ${max}`, { field: name });
  }
  return v;
}

function settingsOf(o: RunBatchOptions): RunSettings {
  const budgets = new Map<Currency, number>();
  for (const [c, a] of Object.entries(o.budgets ?? {})) if (a !== undefined) budgets.set(c as Currency, a);
  return {
    validate: o.validate ?? true,
    concurrency: int(o.concurrency, 'concurrency', 8, 4096),
    budgets,
    allowUnpriced: o.allowUnpriced === true,
    prices: o.prices,
    pricesPath: o.pricesPath,
    maxAttempts: int(o.maxAttempts, 'maxAttempts', 8, 1000),
    shard: o.shard,
    download: o.download ?? true,
    timeoutMs: o.timeoutMs,
    resendInDoubt: o.resendInDoubt === true,
  };
}

function recordOf(s: RunSettings): RunRecordOptions {
  return {
    concurrency: s.concurrency,
    budgets: [...s.budgets].map(([c, a]) => `${a}${c}`),
    allowUnpriced: s.allowUnpriced,
    maxAttempts: s.maxAttempts,
    ...(s.shard !== undefined ? { shard: shardText(s.shard) } : {}),
    ...(s.shard?.index !== undefined ? { index: s.shard.index } : {}),
    download: s.download,
    ...(s.prices !== undefined
      ? { prices: { ...(s.pricesPath !== undefined ? { path: s.pricesPath } : {}), file: s.prices.file } }
      : {}),
  };
}

/** The prices a run works with: its own, else those its directory's last run recorded. */
function withPrices(s: RunSettings, state: BatchState | undefined): RunSettings {
  const r = s.prices === undefined ? recordedPrices(state) : undefined;
  return r !== undefined ? { ...s, prices: r.prices, pricesPath: r.path } : s;
}

/** The input file of a run: a path (checked), or a stream kept as `<dir>/input.jsonl`. */
async function inputFile(input: string | Readable, dir: string, signal: AbortSignal | undefined) {
  if (typeof input !== 'string') {
    const path = join(dir, 'input.jsonl');
    // Bounded like every local input: /dev/zero fills no disk; Ctrl-C ends the copy while nothing arrives.
    await copyStreamToFile(input, path, {
      what: 'standard input (gw batch run -)',
      field: 'input',
      limit: LOCAL_LIMITS.batch,
      maxLine: LOCAL_LIMITS.body,
      signal,
    });
    return path;
  }
  return checkedInput(input, 'input');
}

async function checkedInput(input: string, what: string): Promise<string> {
  try {
    if ((await stat(input)).isFile()) return resolve(input);
  } catch {
    // said below
  }
  throw new UsageError(`input: ${input}${what === 'input' ? '' : ` (${what})`} is not a readable file`, {
    field: 'input',
  });
}

/** The error of a file with bad lines: every problem of every line (a bounded number), nothing sent. */
export function linesError(s: Scan): UsageError {
  const n = s.badLines;
  const first = s.problems[0];
  return new UsageError(
    `${n} line${n === 1 ? '' : 's'} of the batch break${n === 1 ? 's' : ''} a rule; nothing was sent`,
    {
      field: first !== undefined ? `line ${first.lineNo}: ${first.field}` : undefined,
      hint: 'fix the lines listed (--no-validate sends bodies that break a rule of the contract as they are)',
      details: s.problems.map((p) => ({
        line: p.lineNo,
        ...(p.customId !== undefined ? { custom_id: p.customId } : {}),
        field: p.field,
        rule: p.message,
      })),
      detailsOmitted: s.moreProblems,
    },
  );
}

function checkBudgets(s: Scan, set: RunSettings): void {
  if (set.budgets.size === 0) return;
  if (s.unpriced > 0 && !set.allowUnpriced) {
    // With --prices the first line's reason says what would bound it (a max_tokens, seconds).
    const why = set.prices !== undefined && s.unpricedReason !== undefined ? ` (${s.unpricedReason})` : '';
    throw new UsageError(
      `--budget: ${s.unpriced} line${s.unpriced === 1 ? ' has' : 's have'} no price fixed in advance, so the budget cannot bound them${why}`,
      {
        field: 'budget',
        hint:
          set.prices !== undefined
            ? 'give those lines a max_tokens (or max_output_tokens) and their models a price in --prices, pass --allow-unpriced to run them outside the budget, or see --dry-run'
            : 'pass --allow-unpriced to run them outside the budget, --prices <prices.json> to price text, embeddings and images, or see --dry-run',
      },
    );
  }
  for (const c of s.currencies) {
    if (!set.budgets.has(c)) {
      throw new UsageError(`--budget: lines are priced in ${c} but no ${c} budget is given`, {
        field: 'budget',
        hint: `add --budget <amount>${c}`,
      });
    }
  }
}

async function clientsOf(src: ClientSource, validate: boolean) {
  if (typeof src !== 'function') return { client: src, sendClient: src };
  const client = await src({ validate });
  // Every line was checked already: the client of the creates does not check each body a second time.
  const sendClient: GatewayClient = validate ? await src({ validate: false }) : client;
  return { client, sendClient };
}

/** What a run needs besides its settings. */
type Caller = Omit<RunBatchOptions, 'input' | 'out' | keyof RunSettings>;

/** A retry's part: the state already read, and the items to send again. */
interface Retry {
  state: BatchState;
  chosen: string[];
}

/**
 * The shard a run of `dir` works on. A directory holds one shard: a run given another one is refused (exit 2,
 * nothing sent), as it would send the lines of shards that other directories hold. The exception is the index a
 * scheduler ran alone (a Slurm index resubmitted by itself is an array of one): when the directory's last run
 * recorded that same index, the run resumes the directory's shard.
 */
function dirShard(
  dir: string,
  state: BatchState | undefined,
  given: IndexedShard | undefined,
  o: Caller,
): IndexedShard | undefined {
  const last = state?.runs.at(-1);
  if (last === undefined) return given;
  const held = last.opts?.shard ?? last.shard ?? '1/1';
  const asked = given !== undefined ? shardText(given) : '1/1';
  if (held === asked) return given;
  if (given?.lone === true && given.index !== undefined && given.index === last.opts?.index) {
    o.onWarning?.(
      `${given.index} ran alone (an array of one): resuming shard ${held}, which ${dir} holds for that index`,
    );
    return { ...parseShard(held), index: given.index };
  }
  throw new UsageError(
    `--shard: ${dir} holds shard ${held} of its run, and this run is shard ${asked}: nothing was sent`,
    {
      field: '--shard',
      hint: `run shard ${held} there (--shard ${held} or GW_SHARD=${held}), or give this shard its own --out`,
    },
  );
}

/** Runs a batch of `input` in `dir`, the lock held. */
async function runLocked(dir: string, input: string, given: RunSettings, o: Caller, retry?: Retry) {
  const inputStat = await stat(input);
  if (retry === undefined && !given.resendInDoubt) {
    const rec0 = recordOf(given);
    const fast = await finishedBefore(dir, input, inputStat, rec0.shard, o.resume?.(input, rec0));
    if (fast !== undefined) return fast;
  }
  const state = retry?.state ?? (await loadState(dir));
  const set = withPrices({ ...given, shard: dirShard(dir, state, given.shard, o) }, state);
  const rec = recordOf(set);
  const resume = o.resume?.(input, rec);
  const previous = state?.runs.at(-1);
  if (retry === undefined && previous !== undefined && previous.input !== input) {
    o.onWarning?.(`${dir} holds a batch of ${previous.input}; items are matched by custom_id`);
  }
  const s = await scan(input, { validate: set.validate, shard: set.shard, state, prices: set.prices });
  if (s.badLines > 0) throw linesError(s);
  checkBudgets(s, set);
  const run = runId(s.digest, set.shard?.n ?? 1);
  if (previous?.run !== undefined && previous.run !== run) {
    o.onWarning?.(
      `the input is not the one ${dir}'s earlier runs read (run ${previous.run}, now ${run}): gw batch merge will refuse this directory`,
    );
  }
  const clients = await clientsOf(o.client, set.validate);
  // Certain to start now: the retried items' old lines leave errors.jsonl.
  if (retry !== undefined) await dropErrorLines(dir, new Set(retry.chosen));
  const clock = o.clock ?? REAL_CLOCK;
  const st = state ?? new BatchState();
  const writer = await BatchWriter.open(dir);
  let result: RunResult;
  try {
    const record: StateRecord = {
      e: 'run',
      at: clock.now(),
      input,
      argv: resume?.split(' ') ?? [],
      run,
      opts: rec,
    };
    st.apply(record);
    await writer.append(record);
    await reconcile(dir, st, writer, {
      resendInDoubt: set.resendInDoubt,
      journal: o.journal,
      now: clock.now,
      prices: set.prices,
    });
    for (const id of retry?.chosen.filter((x) => st.status.has(x)) ?? []) {
      const r = { e: 'reset' as const, id, at: clock.now() };
      st.apply(r);
      await writer.append(r);
    }
    const engine = new Engine(
      {
        ...clients,
        state: st,
        writer,
        clock,
        journal: o.journal,
        redact: o.redact ?? ((t) => t),
        sinks: o,
        signal: o.signal,
      },
      { input, dir, ...set, resume, graceMs: o.graceMs },
    );
    result = await engine.run();
    const t = result.stats;
    await writer.append({
      e: 'end',
      at: clock.now(),
      exit: exitOf(result),
      reason: result.reason,
      input: { path: input, size: inputStat.size, mtimeMs: inputStat.mtimeMs, shard: rec.shard },
      totals: { total: t.total, done: t.done, failed: t.failed, doubt: t.doubt, unfinished: t.unfinished },
    });
  } finally {
    await writer.close();
  }
  return runDoc(dir, result, resume);
}

/** Runs (or resumes) a batch: the document of the run (`gw batch run --json`). */
export async function runBatch(o: RunBatchOptions): Promise<BatchRunDoc> {
  const dir = resolve(o.out);
  const set = settingsOf(o);
  return withBatchLock(dir, o, true, async () => {
    const input = await inputFile(o.input, dir, o.signal);
    return runLocked(dir, input, set, o);
  });
}

/**
 * Runs a batch again with the input and options of its last run, after forgetting the chosen items (failed by
 * default; in doubt with `inDoubt`) so they are sent again. Nothing changes before the run is certain to start.
 */
export async function retryBatch(o: RetryBatchOptions): Promise<BatchRunDoc> {
  const dir = resolve(o.out);
  const notBatch = (): UsageError =>
    new UsageError(`${o.out} is not a batch directory (no ${STATE_FILE})`, { field: 'dir' });
  try {
    await stat(join(dir, STATE_FILE));
  } catch {
    throw notBatch();
  }
  return withBatchLock(dir, o, false, async () => {
    const state = await loadState(dir);
    const last = state?.runs.at(-1);
    if (state === undefined || last === undefined) throw notBatch();
    const input = await checkedInput(last.input, "the batch's last run read it");
    const r = last.opts;
    const failed = o.failed === true || o.inDoubt !== true;
    const chosen = [...state.status]
      .filter(([, s]) => (failed && s === 'failed') || (o.inDoubt === true && s === 'doubt'))
      .map(([id]) => id);
    const budgets: Partial<Record<Currency, number>> = Object.fromEntries(parseBudgets(r?.budgets ?? []));
    const set = settingsOf({
      ...o,
      input,
      concurrency: r?.concurrency,
      budgets,
      allowUnpriced: r?.allowUnpriced,
      maxAttempts: r?.maxAttempts,
      shard:
        r?.shard !== undefined
          ? { ...parseShard(r.shard), ...(r.index !== undefined ? { index: r.index } : {}) }
          : undefined,
      download: (o.download ?? true) && (r?.download ?? true),
      resendInDoubt: false,
    });
    return runLocked(dir, input, set, o, { state, chosen });
  });
}

/**
 * A batch whose last run went through the whole of this same, unchanged input, with nothing left to follow, has
 * nothing to do: the re-run reports it from the log's last record instead of reading everything again.
 */
async function finishedBefore(
  dir: string,
  input: string,
  st: { size: number; mtimeMs: number },
  shard: string | undefined,
  resume: string | undefined,
): Promise<BatchRunDoc | undefined> {
  const last = await readLastRecord(dir);
  if (
    last?.e !== 'end' ||
    last.reason !== 'complete' ||
    last.input === undefined ||
    last.totals === undefined
  ) {
    return undefined;
  }
  const li = last.input;
  const t = last.totals;
  if (li.path !== input || li.size !== st.size || li.mtimeMs !== st.mtimeMs || li.shard !== shard)
    return undefined;
  if ((t.unfinished ?? 0) > 0) return undefined;
  const stats: RunStats = {
    total: t.total,
    done: t.done,
    failed: t.failed,
    doubt: t.doubt,
    skipped: t.total,
    sending: 0,
    following: 0,
    notSubmitted: 0,
    unfinished: 0,
    started: Date.now(),
    finishedThisRun: 0,
  };
  return runDoc(dir, { stats, reason: 'complete' }, resume);
}

/** The exit code of a run (`gw batch run`'s contract). */
export function exitOf(r: RunResult): number {
  if (r.reason === 'interrupted') return ExitCode.interrupted;
  if (r.reason === 'timeout') return ExitCode.timeout;
  const s = r.stats;
  return s.failed > 0 || s.doubt > 0 || s.notSubmitted > 0 || s.unfinished > 0
    ? ExitCode.failure
    : ExitCode.ok;
}

function runDoc(dir: string, r: RunResult, resume: string | undefined): BatchRunDoc {
  const s = r.stats;
  const code = exitOf(r);
  return {
    dir,
    total: s.total,
    succeeded: s.done,
    failed: s.failed,
    in_doubt: s.doubt,
    not_submitted: s.notSubmitted,
    unfinished: s.unfinished,
    skipped: s.skipped,
    reason: r.reason,
    exit_code: code,
    resume: code === ExitCode.ok ? null : (resume ?? null),
    ...(r.budgetNote !== undefined ? { budget_note: r.budgetNote } : {}),
  };
}
