/**
 * The batch engine: streams the input a second time (after scan.ts checked every line), skips what the state log
 * says is finished, follows what was created, and sends what was never sent — under the global ceiling and the
 * adaptive per-model limits, within the budgets, recording every step in the state log before it matters.
 */
import { setMaxListeners } from 'node:events';
import type { ApiResult, GatewayClient } from '../client/gateway-client.js';
import { ConnectionError, type ConnectionFailure } from '../client/errors.js';
import type { Currency } from '../contract/estimate.js';
import { amountText } from '../contract/money.js';
import type { PriceTable } from '../contract/prices.js';
import { BudgetLedger, isRefusal, type Amount, type Hold } from '../core/budget.js';
import { GwError, InterruptedError, TimeLimitError } from '../core/errors.js';
import { classify, type SendOutcome } from './errors.js';
import { follow, PriorityGate, type FollowContext, type FollowEnd } from './follow.js';
import { inputLines, parseLine, isProblem, type BatchLine, type InputLine } from './input.js';
import { Limits, type Ticket } from './limits.js';
import type { BatchClock, BatchJournal, BatchSinks, JournaledKind, RunReason, RunStats } from './options.js';
import { outputLine, serializeLine, type OutputLine } from './output.js';
import { Scheduler, type Admission, type Resend } from './schedule.js';
import { impliedBy } from './spend.js';
import { shardOf, type Shard } from './shard.js';
import type { BatchState, BatchWriter, CreatedItem, Money, StateRecord, TaskKind } from './state.js';

/** Options of one run. */
export interface EngineOptions {
  input: string;
  dir: string;
  concurrency: number;
  budgets: ReadonlyMap<Currency, number>;
  maxAttempts: number;
  shard?: Shard | undefined;
  download: boolean;
  /** Overall limit of the run (it ends with reason `timeout`). */
  timeoutMs?: number | undefined;
  /** The command that resumes this batch (said when nothing reached the gateway). */
  resume?: string | undefined;
  /** Time in-flight creates get to finish after Ctrl-C or the timeout, before they are cut (and in doubt). */
  graceMs?: number | undefined;
  /** --prices: lines of the models it prices are bounded by it, and their answers priced. */
  prices?: PriceTable | undefined;
}

/** What an engine works with. */
export interface EngineDeps {
  client: GatewayClient;
  /** The client creates go through, except beta tasks (whose check also prepares the body). */
  sendClient: GatewayClient;
  /**
   * The state as the log stood before this run, read only: which lines are settled or created. The run's own
   * records go to the log alone. Applied here too, an item of an earlier run followed to its end would lose its
   * `created` status before the input reaches its line, and be sent again; and every line would add and remove
   * map entries, whose tables outlive young-generation collections.
   */
  state: BatchState;
  writer: BatchWriter;
  clock: BatchClock;
  journal: BatchJournal | undefined;
  redact: (text: string) => string;
  sinks: BatchSinks;
  signal: AbortSignal | undefined;
}

/** How a run ended. */
export interface RunResult {
  stats: RunStats;
  reason: RunReason;
  budgetNote?: string | undefined;
}

const JOURNAL_KIND: Record<TaskKind, JournaledKind> = { video: 'video', alpha: 'alpha', beta: 'beta-task' };

/** A state log's amount as the ledger takes it. */
function money(m: Money | undefined): Amount | undefined {
  return m !== undefined ? { currency: m.c, amount: m.a } : undefined;
}

/** Warnings of unfinished follows said one by one; past it only their count, at the end. */
const WARN_UNFINISHED = 10;

function taskIdOf(kind: string, data: unknown): string | undefined {
  const d = data as Record<string, unknown> | null;
  if (d === null || typeof d !== 'object') return undefined;
  if (kind === 'alpha') {
    const inner = d.data as Record<string, unknown> | undefined;
    return typeof inner?.task_id === 'string' ? inner.task_id : undefined;
  }
  const id = d.id ?? d.video_id;
  return typeof id === 'string' ? id : undefined;
}

/** Runs a batch. The caller opened the writer and appended the `run` record. */
export class Engine {
  readonly stats: RunStats;
  readonly #limits: Limits;
  readonly #downloads = new PriorityGate(4);
  #scheduler: Scheduler<BatchLine> | undefined;
  readonly #stop = new AbortController();
  readonly #cut = new AbortController();
  readonly #ledger: BudgetLedger;
  /** The budget's hold of each item in flight (sent or followed) that has an estimate. */
  readonly #holds = new Map<string, Hold>();
  #source: AsyncIterator<InputLine> | undefined;
  #reason: RunReason = 'complete';
  #budgetNote: string | undefined;
  #fatal: Error | undefined;
  #followers = new Set<Promise<void>>();
  /** Some request of this run got an answer from the gateway (any status). */
  #reached = false;
  /** The last create that never reached the gateway (a connection that never opened). */
  #lastUnreached: unknown;
  readonly #followCap: number;

  constructor(
    private readonly d: EngineDeps,
    private readonly o: EngineOptions,
  ) {
    this.#limits = new Limits(o.concurrency, d.clock.now);
    this.#followCap = Math.max(64, o.concurrency * 4);
    // Every create, poll and download in flight listens to these two signals (a few listeners each): their
    // count is bounded by the concurrency and the follows in flight, so it is no leak.
    setMaxListeners((this.#followCap + o.concurrency) * 4 + 16, this.#stop.signal, this.#cut.signal);
    this.stats = {
      total: 0,
      done: 0,
      failed: 0,
      doubt: 0,
      skipped: 0,
      sending: 0,
      following: 0,
      notSubmitted: 0,
      unfinished: 0,
      started: d.clock.now(),
      finishedThisRun: 0,
    };
    this.#ledger = new BudgetLedger(o.budgets);
    this.#carry();
  }

  /**
   * What earlier runs of the directory count against the budget: a finished item its real spend where its answer
   * reported one (else its estimate), an item still created its estimate, held until its follow ends.
   */
  #carry(): void {
    const st = this.d.state;
    for (const [id, est] of st.estimate) {
      const hold = this.#ledger.carry(est.c, est.a);
      if (st.status.get(id) === 'created') this.#holds.set(id, hold);
      else this.#ledger.settle(hold, money(st.implied.get(id)));
    }
  }

  /** Spend of submitted items per currency: the real spend of those answered, the estimate of the others. */
  get spent(): ReadonlyMap<Currency, number> {
    return this.#ledger.totals;
  }

  #progress(): void {
    this.d.sinks.onProgress?.(this.stats, this.#ledger.totals);
  }

  /**
   * Ends an item's hold: released when nothing was billed, else settled with the spend its answer implies (its
   * estimate stays counted when that is not known). The scheduler looks again: a line waiting may fit now.
   */
  #settle(id: string, end: { billed: false } | { billed: true; implied?: Money | undefined }): void {
    const hold = this.#holds.get(id);
    if (hold === undefined) return;
    this.#holds.delete(id);
    if (end.billed) this.#ledger.settle(hold, money(end.implied));
    else this.#ledger.release(hold);
    this.#scheduler?.wake();
  }

  /**
   * Queues a record (with its output line) for the next group commit. Only a `send` record is
   * awaited (durable before its request leaves); the others are not, so an answer and its item's objects are not
   * kept alive across an fsync (at thousands of answers a second they would outlive young-generation collections
   * and fill the old one). A write that fails stops the run.
   */
  #record(
    r: StateRecord,
    out?: { file: 'results' | 'errors'; line: OutputLine; raw?: string },
  ): Promise<void> {
    const text = out !== undefined ? this.d.redact(serializeLine(out.line, out.raw)) : undefined;
    if (out !== undefined) this.d.sinks.onResult?.(out.line, out.file);
    const p = this.d.writer.append(
      r,
      out !== undefined && text !== undefined ? { file: out.file, line: text } : undefined,
    );
    p.catch((e: unknown) => this.#setFatal(e));
    return p;
  }

  #finish(
    id: string,
    ok: boolean,
    rec: {
      status?: number | undefined;
      code?: string;
      implied?: Money | undefined;
      rid?: string | undefined;
    },
    line: OutputLine,
    raw?: string,
  ): void {
    const at = this.d.clock.now();
    const rid = rec.rid !== undefined ? { rid: rec.rid } : {};
    const r: StateRecord = ok
      ? {
          e: 'done',
          id,
          at,
          status: rec.status ?? 200,
          ...(rec.implied ? { implied: rec.implied } : {}),
          ...rid,
        }
      : { e: 'failed', id, at, status: rec.status, code: rec.code ?? 'error', ...rid };
    void this.#record(r, { file: ok ? 'results' : 'errors', line, ...(raw !== undefined ? { raw } : {}) });
    // As the state log counts it: an error answer to the create billed nothing; a task that failed after its
    // creation keeps its estimate.
    const refused = !ok && rec.status !== undefined && rec.status >= 400;
    this.#settle(id, refused ? { billed: false } : { billed: true, implied: rec.implied });
    if (ok) this.stats.done++;
    else this.stats.failed++;
    this.stats.finishedThisRun++;
    this.#progress();
  }

  #doubt(id: string, out: { code: string; message: string; requestId?: string | undefined }): void {
    const rid = out.requestId !== undefined ? { rid: out.requestId } : {};
    const r: StateRecord = {
      e: 'doubt',
      id,
      at: this.d.clock.now(),
      reason: `${out.code}: ${out.message}`,
      ...rid,
    };
    const line = outputLine(id, null, {
      code: 'in_doubt',
      message: `${out.message} — the create may have reached the gateway; not resent (gw batch retry --in-doubt resends it)`,
    });
    if (out.requestId !== undefined)
      line.response = { status_code: 0, request_id: out.requestId, body: null };
    void this.#record(r, { file: 'errors', line });
    this.#settle(id, { billed: true });
    this.stats.doubt++;
    this.#progress();
  }

  /** Runs to the end (or to Ctrl-C, the timeout, or the budget). */
  async run(): Promise<RunResult> {
    const timer =
      this.o.timeoutMs !== undefined ? setTimeout(() => this.#abort('timeout'), this.o.timeoutMs) : undefined;
    const onAbort = (): void => this.#abort('interrupted');
    const signal = this.d.signal;
    if (signal?.aborted === true) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // What was created before (a crash, Ctrl-C, a download cut) is followed again first.
      for (const [id, c] of [...this.d.state.created]) {
        this.stats.total++;
        this.#follow(id, c, undefined, undefined);
      }
      this.#progress();
      await this.#sendAll();
      while (this.#followers.size > 0) await Promise.race(this.#followers);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    if (this.#fatal !== undefined) throw this.#fatal;
    return { stats: this.stats, reason: this.#reason, budgetNote: this.#budgetNote };
  }

  #abort(reason: 'timeout' | 'interrupted'): void {
    if (this.#stop.signal.aborted) return;
    this.#reason = reason;
    this.#stop.abort(
      reason === 'timeout' ? new TimeLimitError('batch --timeout reached') : new InterruptedError(),
    );
    // In-flight creates get a grace period to land their answers (so they are not left in doubt).
    setTimeout(() => this.#cut.abort(new InterruptedError()), this.o.graceMs ?? 5000).unref();
    this.#scheduler?.wake();
  }

  /** The next line to send: skips other shards and what the state log says is settled or created. */
  async #next(): Promise<BatchLine | undefined> {
    const source = this.#source;
    if (source === undefined) return undefined;
    for (;;) {
      const it = await source.next();
      if (it.done === true) return undefined;
      if (!('text' in it.value)) continue;
      const parsed = parseLine(it.value.lineNo, it.value.text, this.o.prices);
      if (isProblem(parsed)) continue; // scan refused the file already unless it was fixed meanwhile
      if (this.o.shard !== undefined && shardOf(parsed.customId, this.o.shard.n) !== this.o.shard.k) continue;
      const status = this.d.state.status.get(parsed.customId);
      if (status !== undefined) {
        if (status !== 'created') {
          this.stats.total++;
          this.stats.skipped++;
          if (status === 'done') this.stats.done++;
          else if (status === 'failed') this.stats.failed++;
          else this.stats.doubt++;
        }
        continue;
      }
      this.stats.total++;
      return parsed;
    }
  }

  /**
   * Budget: a line is submitted when its estimate fits beside the spend of submitted items (real where answered).
   * One that does not waits while items in flight could free the room (their real spend replaces their
   * estimate); when none could, submission stops.
   */
  #admit(line: BatchLine): Admission {
    const est = line.est;
    if (est === undefined) return 'send'; // unpriced: outside the budget (--allow-unpriced)
    // No cap in its currency (no --budget): counted all the same, for the spend the progress line shows.
    const r = this.o.budgets.has(est.c)
      ? this.#ledger.reserve(est.c, est.a)
      : this.#ledger.carry(est.c, est.a);
    if (!isRefusal(r)) {
      this.#holds.set(line.customId, r);
      return 'send';
    }
    if (r.later) return 'wait';
    this.#reason = 'budget';
    this.#budgetNote = `budget ${r.cap} ${est.c} reached (${amountText(r.spent)} submitted; ${line.customId} would add ${amountText(est.a)})`;
    return 'stop';
  }

  async #send(line: BatchLine, ticket: Ticket): Promise<Resend | undefined> {
    this.stats.sending++;
    try {
      const again = await this.#sendOne(line, line.est, ticket);
      // Nothing was created: its hold is released (every other outcome may have billed it).
      if (again !== undefined) this.#settle(line.customId, { billed: false });
      return again;
    } finally {
      this.stats.sending--;
    }
  }

  /**
   * The first line out of attempts while nothing ever answered: a wrong URL or a gateway that is down. Every other
   * line would spend as long failing the same way; stop, with nothing created and the line still unsent.
   */
  #giveUp(line: BatchLine, attempts: number, last: Resend): Promise<void> {
    if (!this.#reached && this.#lastUnreached !== undefined) {
      this.#setFatal(this.#unreachable(attempts), { grace: true });
      return Promise.resolve();
    }
    this.#finish(
      line.customId,
      false,
      { code: last.code },
      outputLine(line.customId, null, {
        code: last.code,
        message: `not sent after ${attempts} attempts: ${last.message}`,
      }),
    );
    return Promise.resolve();
  }

  async #sendAll(): Promise<void> {
    this.#source = inputLines(this.o.input)[Symbol.asyncIterator]();
    this.#scheduler = new Scheduler<BatchLine>(
      this.#limits,
      this.o.maxAttempts,
      {
        model: (line) => line.model,
        next: () => this.#next(),
        admit: (line) => this.#admit(line),
        send: (line, ticket) => this.#send(line, ticket),
        giveUp: (line, attempts, last) => this.#giveUp(line, attempts, last),
        stopped: () => this.#stop.signal.aborted || this.#fatal !== undefined,
        room: () => this.#followers.size < this.#followCap,
        fatal: (e) => this.#setFatal(e),
      },
      16,
      this.d.clock.now,
    );
    const { unsent, refused } = await this.#scheduler.run();
    // Lines not reached are simply not sent; the same command (with a larger budget) sends them.
    this.stats.notSubmitted += unsent;
    if (refused) {
      while ((await this.#next()) !== undefined) this.stats.notSubmitted++;
    }
    await this.#source.return?.(undefined);
  }

  /** The error that ends a run whose creates never reached the gateway: the connection's own, said so. */
  #unreachable(attempts: number): Error {
    const e = this.#lastUnreached;
    const resume = this.o.resume !== undefined ? `: ${this.o.resume}` : '';
    const what = `no create reached the gateway in ${attempts} attempts, so nothing was created; once it answers, the same command sends everything${resume}`;
    if (e instanceof ConnectionError) {
      return new ConnectionError(`${e.message} (${what})`, {
        code: e.code as ConnectionFailure,
        host: e.host,
        tls: e.tls,
        requestId: e.requestId,
        cause: e,
      });
    }
    return new GwError(`${e instanceof Error ? e.message : String(e)} (${what})`);
  }

  /**
   * Ends the run with `e`. `grace`: the creates in flight get the grace period to land their answers (as on Ctrl-C),
   * instead of being cut at once and left in doubt.
   */
  #setFatal(e: unknown, o: { grace?: boolean } = {}): void {
    this.#fatal ??= e instanceof Error ? e : new GwError(String(e));
    this.#stop.abort(this.#fatal);
    // A create cut off is in doubt (it may have reached the gateway): the cut is an interruption, never the fatal
    // error itself, whose status (a 401) would pass the create off as refused, and so as safe to send again.
    const cut = (): void => this.#cut.abort(new InterruptedError());
    if (o.grace === true) setTimeout(cut, this.o.graceMs ?? 5000).unref();
    else cut();
    this.#scheduler?.wake();
  }

  /**
   * Sends one create. Returns undefined when the item is settled (answered, failed, in doubt), or what to do when
   * nothing was created and it may be resent (429, a connection that never opened).
   */
  async #sendOne(line: BatchLine, est: Money | undefined, ticket: Ticket): Promise<Resend | undefined> {
    const id = line.customId;
    const at = this.d.clock.now();
    const send: StateRecord = {
      e: 'send',
      id,
      at,
      url: line.url,
      model: line.model,
      ...(est ? { est } : {}),
    };
    await this.#record(send); // durable before a byte of the request leaves
    let res: ApiResult<unknown>;
    try {
      const via = line.endpoint.kind === 'beta' ? this.d.client : this.d.sendClient;
      res = await line.endpoint.send(via, line.body, this.#cut.signal);
    } catch (e) {
      return this.#sendFailed(id, ticket, classify(e), e);
    }
    this.#limits.release(ticket, 'ok');
    this.#reached = true;
    this.#answered(line, at, res);
    return undefined;
  }

  /** A create that got no success: resent (429, never connected), or settled (failed, in doubt, refused token). */
  #sendFailed(id: string, ticket: Ticket, out: SendOutcome, e: unknown): Resend | undefined {
    const at = this.d.clock.now();
    if (out.kind === 'rate-limited') {
      this.#reached = true;
      this.#limits.release(ticket, 'rate-limited', out.retryAfterMs);
      void this.#record({ e: 'unsent', id, at, code: out.code });
      // The lane's pause (Retry-After, for every sender of the model) decides when it goes again.
      return { rateLimited: true, waitMs: 0, code: out.code, message: out.message };
    }
    this.#limits.release(ticket, 'other');
    if (out.kind !== 'not-sent' && out.kind !== 'doubt') this.#reached = true;
    switch (out.kind) {
      case 'not-sent':
        this.#lastUnreached = e;
        void this.#record({ e: 'unsent', id, at, code: out.code });
        return { rateLimited: false, waitMs: 1000, code: out.code, message: out.message };
      case 'auth':
        // Stopped first, so no other create starts while this is written; the creates in flight get their grace
        // to land (they are answered, refused too, or left in doubt).
        this.#setFatal(out.error, { grace: true });
        void this.#record({ e: 'unsent', id, at, code: 'auth' });
        this.#settle(id, { billed: false });
        return undefined;
      case 'failed': {
        const response =
          out.status !== undefined
            ? { status_code: out.status, request_id: out.requestId ?? null, body: out.body }
            : null;
        const err = { code: out.code, message: out.message };
        const rec = { status: out.status, code: out.code, rid: out.requestId };
        this.#finish(id, false, rec, outputLine(id, response, err));
        return undefined;
      }
      case 'doubt':
        this.#doubt(id, out);
        return undefined;
    }
  }

  /** A create answered with success: a sync item is done; a task is journaled, recorded and followed. */
  #answered(line: BatchLine, sendAt: number, res: ApiResult<unknown>): void {
    const id = line.customId;
    const rid = res.requestId;
    const response = { status_code: res.status, request_id: rid ?? null, body: res.data };
    const kind = line.endpoint.kind;
    if (kind === 'sync') {
      const implied = impliedBy(line.url, line.model, line.body, res.data, this.o.prices);
      this.#finish(id, true, { status: res.status, rid, implied }, outputLine(id, response, null), res.text);
      return;
    }
    const task = taskIdOf(kind, res.data);
    if (task === undefined) {
      this.#doubt(id, {
        code: 'response_shape',
        message: 'the create answer carries no task id',
        requestId: rid,
      });
      return;
    }
    // Journaled (durably) like `gw video create` does, so a run killed now finds the task there and follows it.
    this.d.journal?.created({
      kind: JOURNAL_KIND[kind],
      id: task,
      model: line.model,
      requestId: rid,
      state: kind === 'alpha' ? 'submitted' : 'queued',
      batch: this.o.dir,
      customId: id,
      sendAt,
    });
    void this.#record({ e: 'created', id, at: this.d.clock.now(), task, kind, rid, status: res.status });
    if (kind === 'alpha') {
      // The document offers no query endpoint for alpha tasks: the item ends with its created task.
      const alphaTask = (res.data as { data?: unknown }).data;
      this.#finish(
        id,
        true,
        { status: res.status, rid },
        outputLine(id, response, null, { task: alphaTask }),
      );
      return;
    }
    const created = { task, kind, url: line.url, model: line.model };
    this.#follow(id, created, line.body, response);
  }

  #followContext(id: string, task: string): FollowContext {
    let last: string | undefined;
    return {
      client: this.d.client,
      limits: this.#limits,
      signal: this.#stop.signal,
      dir: this.o.dir,
      prices: this.o.prices,
      download: this.o.download,
      downloads: this.#downloads,
      clock: this.d.clock,
      onState: (jkind, state) => {
        if (state === last) return;
        last = state;
        this.d.writer.append({ e: 'task', id, at: this.d.clock.now(), state }).catch(() => undefined);
        this.d.journal?.update(jkind, task, state);
      },
    };
  }

  #follow(
    id: string,
    c: Pick<CreatedItem, 'task' | 'kind' | 'url' | 'model' | 'status' | 'rid'>,
    body: Record<string, unknown> | undefined,
    response: OutputLine['response'] | undefined,
  ): void {
    this.stats.following++;
    const resp = response ?? {
      status_code: c.status ?? 200,
      request_id: c.rid ?? null,
      body: { id: c.task },
    };
    const done: Promise<FollowEnd> =
      c.kind === 'alpha'
        ? // A resumed alpha item: its create was its end (no query endpoint).
          Promise.resolve({
            ok: true,
            implied: undefined,
            line: outputLine(id, resp, null, { task: { task_id: c.task } }),
          })
        : follow(this.#followContext(id, c.task), { id, ...c, body, response: resp });
    const p = done
      .then((end) => this.#followed(id, end, resp))
      .catch((e: unknown) => {
        if (this.#stop.signal.aborted) return; // left as created: the next run follows it again
        this.#setFatal(e);
      })
      .finally(() => {
        this.stats.following--;
        this.#followers.delete(p);
        this.#scheduler?.wake();
        this.#progress();
      });
    this.#followers.add(p);
  }

  #followed(id: string, end: FollowEnd, resp: NonNullable<OutputLine['response']>): void {
    if ('unfinished' in end) {
      const { code, message } = end.unfinished;
      void this.#record({ e: 'unfinished', id, at: this.d.clock.now(), code, message });
      this.#settle(id, { billed: true }); // its estimate stays counted: the next run follows it again
      this.stats.unfinished++;
      if (this.stats.unfinished <= WARN_UNFINISHED) {
        this.d.sinks.onWarning?.(
          `${id}: its task finished but could not be followed to its end (${code}: ${message}); it stays created, and the next run resumes it without creating it again`,
        );
      }
      return;
    }
    const rid = resp.request_id ?? undefined;
    if (end.ok) this.#finish(id, true, { status: resp.status_code, implied: end.implied, rid }, end.line);
    else this.#finish(id, false, { code: end.code, rid }, end.line);
  }
}
