/**
 * What the batch engine takes and gives back as a library (`runBatch` of the package's entry): an options object
 * with the client (or a factory), the clock, the signal, sinks for progress, results and warnings, and the batch
 * directory; and the documents it returns. Nothing here prints or exits: `gw batch` renders these.
 */
import type { GatewayClient } from '../client/gateway-client.js';
import type { Currency } from '../contract/estimate.js';
import type { PriceTable } from '../contract/prices.js';
import type { Readable } from 'node:stream';
import type { OutputLine } from './output.js';
import type { Shard } from './shard.js';
import type { RunRecordOptions } from './state.js';

/** The command that resumes a batch of `input` run with `o` (for messages; gw prints it on Ctrl-C). */
export type ResumeCommand = (input: string, o: RunRecordOptions) => string;

/** The clock of a batch: its waits (polls, Retry-After pauses) and the times it records. */
export interface BatchClock {
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * The client, or a factory asked for one when the run is certain to start (after the lock and the checks of
 * every line): `validate: false` for the client creates go through, as every line was checked already.
 */
export type ClientSource = GatewayClient | ((o: { validate: boolean }) => Promise<GatewayClient>);

/** The kinds of created things a journal records. */
export type JournaledKind = 'video' | 'alpha' | 'beta-task';

/** A create of a batch, as the journal records it. */
export interface JournaledCreate {
  kind: JournaledKind;
  /** The task id. */
  id: string;
  model: string;
  requestId?: string | undefined;
  state: string;
  /** The batch directory (absolute), the item's custom_id, and its send record's time: they name the create. */
  batch: string;
  customId: string;
  sendAt: number;
}

/**
 * Where created tasks are recorded besides the state log (gw's journal, `gw history`). `created` is called, and
 * must be durable, before the state log's own record: a run killed in between finds the task there (`find`), and
 * follows it instead of leaving it in doubt.
 */
export interface BatchJournal {
  created(c: JournaledCreate): void;
  update(kind: JournaledKind, id: string, state: string): void;
  /** The tasks journaled for these items of `batch` (custom_id → its send's time), by custom_id. */
  find(
    batch: string,
    sends: ReadonlyMap<string, number>,
  ): Promise<Map<string, { id: string; kind: JournaledKind; requestId?: string | undefined }>>;
}

/** Live counters of a run (progress line, summary). */
export interface RunStats {
  total: number;
  done: number;
  failed: number;
  doubt: number;
  skipped: number;
  sending: number;
  following: number;
  notSubmitted: number;
  /** Created tasks whose follow stopped short this run (a download cut): the next run follows them again. */
  unfinished: number;
  started: number;
  finishedThisRun: number;
}

/** Sinks a caller gives to watch a run. */
export interface BatchSinks {
  /** Called as counters change; `stats` is live (read it, do not keep copies of it per call). */
  onProgress?: ((stats: Readonly<RunStats>, spent: ReadonlyMap<Currency, number>) => void) | undefined;
  /** Every line written to results.jsonl or errors.jsonl, as it is written. */
  onResult?: ((line: OutputLine, file: 'results' | 'errors') => void) | undefined;
  /** Something the user should know that does not stop the run. */
  onWarning?: ((text: string) => void) | undefined;
  /** Another process holds the directory and `waitLock` was given: the wait begins. */
  onLockWait?: ((holder: string) => void) | undefined;
}

/** Options of runBatch. */
export interface RunBatchOptions extends BatchSinks {
  /** The input: a JSONL file, or a stream kept as `<out>/input.jsonl` (so the batch can be resumed). */
  input: string | Readable;
  /** The batch directory. */
  out: string;
  client: ClientSource;
  /** Check every line against the contract before anything is sent (default true). */
  validate?: boolean | undefined;
  /** Requests in flight at most (default 8). */
  concurrency?: number | undefined;
  /** Stop submitting before the estimated spend of submitted items would pass these. */
  budgets?: Partial<Record<Currency, number>> | undefined;
  allowUnpriced?: boolean | undefined;
  /**
   * Your prices per model (--prices): lines of the models it prices are estimated at their upper bound and their
   * answers priced from the usage, images or seconds they report. Recorded with the run: a retry, or a resume
   * without it, prices the same way.
   */
  prices?: PriceTable | undefined;
  /** Where `prices` was read from (recorded for the resume command). */
  pricesPath?: string | undefined;
  /** Sends of one item that created nothing (default 8). */
  maxAttempts?: number | undefined;
  shard?: Shard | undefined;
  /** Download the results of video and beta tasks into `<out>/files/` (default true). */
  download?: boolean | undefined;
  /** Limit of the whole run (it ends with reason `timeout`). */
  timeoutMs?: number | undefined;
  /** Also resend the items in doubt (may bill twice). */
  resendInDoubt?: boolean | undefined;
  /** Wait for another process's run of the same directory to end, instead of failing. */
  waitLock?: boolean | undefined;
  signal?: AbortSignal | undefined;
  clock?: BatchClock | undefined;
  /** Time in-flight creates get to finish after a stop, before they are cut (and in doubt); default 5 s. */
  graceMs?: number | undefined;
  /** The command that resumes the batch, for messages (and recorded in the state log). */
  resume?: ResumeCommand | undefined;
  journal?: BatchJournal | undefined;
  /** Masks secrets in what is written to results.jsonl and errors.jsonl (the token, in any of its forms). */
  redact?: ((text: string) => string) | undefined;
}

/** Options of retryBatch: the input and run options come from the batch's last run. */
export interface RetryBatchOptions extends BatchSinks {
  out: string;
  client: ClientSource;
  /** Resend the failed items (the default when neither is given). */
  failed?: boolean | undefined;
  /** Resend the items in doubt (may bill twice). */
  inDoubt?: boolean | undefined;
  download?: boolean | undefined;
  validate?: boolean | undefined;
  timeoutMs?: number | undefined;
  waitLock?: boolean | undefined;
  signal?: AbortSignal | undefined;
  clock?: BatchClock | undefined;
  graceMs?: number | undefined;
  journal?: BatchJournal | undefined;
  redact?: ((text: string) => string) | undefined;
  resume?: ResumeCommand | undefined;
}

/** How a run ended. */
export type RunReason = 'complete' | 'budget' | 'interrupted' | 'timeout';

/** What runBatch and retryBatch return (`gw batch run --json` prints it). */
export interface BatchRunDoc {
  dir: string;
  total: number;
  succeeded: number;
  failed: number;
  in_doubt: number;
  not_submitted: number;
  /** Created tasks not finished this run (a download cut): the same command, or retry, finishes them. */
  unfinished: number;
  /** Items finished by earlier runs. */
  skipped: number;
  reason: RunReason;
  /** 0 all succeeded; 1 failed, in doubt, not submitted or unfinished; 4 timeout; 130 interrupted. */
  exit_code: number;
  /** The command that resumes the batch (null when nothing is left). */
  resume: string | null;
  /** Why submission stopped at the budget. */
  budget_note?: string | undefined;
}
