/**
 * The batch engine: streams the input a second time (after scan.ts checked every line), skips what the state log
 * says is finished, follows what was created, and sends what was never sent — under the global ceiling and the
 * adaptive per-model limits, within the budgets, recording every step in the state log before it matters.
 */
import { join } from 'node:path';
import { ConnectionError, type ConnectionFailure } from '../client/errors.js';
import type { GatewayClient } from '../client/gateway-client.js';
import type { DownloadAnswer } from '../core/download.js';
import { estimateRequest, impliedSpend, type Currency } from '../contract/estimate.js';
import { GwError, InterruptedError, TimeoutError } from '../core/errors.js';
import type { Context } from '../cli/context.js';
import { classify } from './errors.js';
import { isProblem, parseLine, readLines, type BatchLine } from './input.js';
import { laneHooks, throughLane, type LaneHooks } from './lane.js';
import { Limits, type Ticket } from './limits.js';
import { Scheduler, type Resend } from './schedule.js';
import { extensionOf, outputLine, serializeLine, type OutputLine, type SavedFile } from './output.js';
import { shardOf, type Shard } from './shard.js';
import {
  ERRORS_FILE,
  FILES_DIR,
  RESULTS_FILE,
  type BatchState,
  type BatchWriter,
  type Money,
} from './state.js';

/** Options of one run. */
export interface EngineOptions {
  input: string;
  dir: string;
  concurrency: number;
  budgets: Map<Currency, number>;
  maxAttempts: number;
  shard?: Shard | undefined;
  download: boolean;
  /** Overall limit of the run (exit 4 past it). */
  timeoutMs?: number | undefined;
  /** The command that resumes this batch (printed on Ctrl-C and timeout). */
  resume: string;
  /** Time in-flight creates get to finish after Ctrl-C or the timeout, before they are cut (and in doubt). */
  graceMs?: number | undefined;
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
  started: number;
  finishedThisRun: number;
}

/** How a run ended. */
export interface RunResult {
  stats: RunStats;
  reason: 'complete' | 'budget' | 'interrupted' | 'timeout';
  budgetNote?: string | undefined;
}

const JOURNAL_KIND: Record<string, 'video' | 'alpha' | 'beta-task'> = {
  video: 'video',
  alpha: 'alpha',
  beta: 'beta-task',
};

/** A gate whose waiters are served in order of a priority (downloads: soonest `expires_at` first). */
class PriorityGate {
  #free: number;
  #queue: Array<{ prio: number; go: () => void }> = [];
  constructor(size: number) {
    this.#free = size;
  }
  async acquire(prio: number): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((go) => {
      this.#queue.push({ prio, go });
      this.#queue.sort((a, b) => a.prio - b.prio);
    });
  }
  release(): void {
    const next = this.#queue.shift();
    if (next !== undefined) next.go();
    else this.#free++;
  }
}

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
  readonly #spent = new Map<Currency, number>();
  #reason: RunResult['reason'] = 'complete';
  #budgetNote: string | undefined;
  #fatal: Error | undefined;
  #followers = new Set<Promise<void>>();
  /** Some request of this run got an answer from the gateway (any status). */
  #reached = false;
  /** The last create that never reached the gateway (a connection that never opened). */
  #lastUnreached: unknown;

  constructor(
    private readonly ctx: Context,
    private readonly client: GatewayClient,
    /** The client creates go through, except beta tasks (whose check also prepares the body). */
    private readonly sendClient: GatewayClient,
    private readonly state: BatchState,
    private readonly writer: BatchWriter,
    private readonly o: EngineOptions,
  ) {
    this.#limits = new Limits(o.concurrency);
    this.stats = {
      total: 0,
      done: 0,
      failed: 0,
      doubt: 0,
      skipped: 0,
      sending: 0,
      following: 0,
      notSubmitted: 0,
      started: Date.now(),
      finishedThisRun: 0,
    };
    for (const m of state.estimate.values()) this.#spent.set(m.c, (this.#spent.get(m.c) ?? 0) + m.a);
  }

  /** Estimated spend of submitted items, per currency. */
  get spent(): ReadonlyMap<Currency, number> {
    return this.#spent;
  }

  #line(l: OutputLine, raw?: string): string {
    return this.ctx.redactor.redact(serializeLine(l, raw));
  }

  async #finish(
    id: string,
    ok: boolean,
    rec: { status?: number | undefined; code?: string; implied?: Money | undefined },
    line: OutputLine,
    raw?: string,
  ): Promise<void> {
    const at = Date.now();
    const r = ok
      ? {
          e: 'done' as const,
          id,
          at,
          status: rec.status ?? 200,
          ...(rec.implied ? { implied: rec.implied } : {}),
        }
      : { e: 'failed' as const, id, at, status: rec.status, code: rec.code ?? 'error' };
    this.state.apply(r);
    await this.writer.append(r, { file: ok ? 'results' : 'errors', line: this.#line(line, raw) });
    if (ok) this.stats.done++;
    else this.stats.failed++;
    this.stats.finishedThisRun++;
    this.state.forget(id);
  }

  async #doubt(id: string, code: string, message: string, requestId?: string): Promise<void> {
    const r = { e: 'doubt' as const, id, at: Date.now(), reason: `${code}: ${message}` };
    this.state.apply(r);
    const line = outputLine(id, null, {
      code: 'in_doubt',
      message: `${message} — the create may have reached the gateway; not resent (gw batch retry --in-doubt resends it)`,
    });
    if (requestId !== undefined) line.response = { status_code: 0, request_id: requestId, body: null };
    await this.writer.append(r, { file: 'errors', line: this.#line(line) });
    this.stats.doubt++;
  }

  /** Runs to the end (or to Ctrl-C, the timeout, or the budget). */
  async run(): Promise<RunResult> {
    const timer =
      this.o.timeoutMs !== undefined ? setTimeout(() => this.#abort('timeout'), this.o.timeoutMs) : undefined;
    const onAbort = (): void => this.#abort('interrupted');
    if (this.ctx.signal.aborted) onAbort();
    this.ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      // What was created before (a crash, Ctrl-C) is followed again first.
      for (const [id, c] of [...this.state.created]) {
        this.stats.total++;
        this.#follow(id, c.kind, c.task, c.url, c.model, undefined, undefined);
      }
      await this.#sendAll();
      while (this.#followers.size > 0) await Promise.race(this.#followers);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      this.ctx.signal.removeEventListener('abort', onAbort);
    }
    if (this.#fatal !== undefined) throw this.#fatal;
    return { stats: this.stats, reason: this.#reason, budgetNote: this.#budgetNote };
  }

  #abort(reason: 'timeout' | 'interrupted'): void {
    if (this.#stop.signal.aborted) return;
    this.#reason = reason;
    this.#stop.abort(
      reason === 'timeout' ? new TimeoutError('batch --timeout reached') : new InterruptedError(),
    );
    // In-flight creates get a grace period to land their answers (so they are not left in doubt).
    setTimeout(() => this.#cut.abort(new InterruptedError()), this.o.graceMs ?? 5000).unref();
    this.#scheduler?.wake();
  }

  async #sendAll(): Promise<void> {
    const source = readLines(this.o.input)[Symbol.asyncIterator]();
    const followCap = Math.max(64, this.o.concurrency * 4);
    const spend = (m: Money | undefined, sign: 1 | -1): void => {
      if (m !== undefined) this.#spent.set(m.c, (this.#spent.get(m.c) ?? 0) + sign * m.a);
    };
    const estimates = new WeakMap<BatchLine, Money | null>();
    const estimate = (line: BatchLine): Money | undefined => {
      let m = estimates.get(line);
      if (m === undefined) {
        const est = estimateRequest(line.url, line.body);
        m = est.priced ? { c: est.currency, a: est.amount } : null;
        estimates.set(line, m);
      }
      return m ?? undefined;
    };
    /** The next line to send: skips other shards and what the state log says is settled or created. */
    const next = async (): Promise<BatchLine | undefined> => {
      for (;;) {
        const it = await source.next();
        if (it.done === true) return undefined;
        const parsed = parseLine(it.value.lineNo, it.value.text);
        if (isProblem(parsed)) continue; // scan refused the file already unless it was fixed meanwhile
        if (this.o.shard !== undefined && shardOf(parsed.customId, this.o.shard.n) !== this.o.shard.k)
          continue;
        const status = this.state.status.get(parsed.customId);
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
    };
    this.#scheduler = new Scheduler<BatchLine>(this.#limits, this.o.maxAttempts, {
      model: (line) => line.model,
      next,
      // Budget: stop submitting before the estimated spend of submitted items would pass it.
      admit: (line) => {
        const est = estimate(line);
        if (est !== undefined && this.o.budgets.has(est.c)) {
          const cap = this.o.budgets.get(est.c) as number;
          const spent = this.#spent.get(est.c) ?? 0;
          if (spent + est.a > cap + 1e-9) {
            this.#reason = 'budget';
            this.#budgetNote = `budget ${cap} ${est.c} reached (${spent.toFixed(2)} submitted; ${line.customId} would add ${est.a.toFixed(2)})`;
            return false;
          }
        }
        spend(est, 1);
        return true;
      },
      send: async (line, ticket) => {
        this.stats.sending++;
        const est = estimate(line);
        try {
          const again = await this.#sendOne(line, est, ticket);
          if (again !== undefined) spend(est, -1);
          return again;
        } finally {
          this.stats.sending--;
        }
      },
      giveUp: (line, attempts, last) => {
        // The first line out of attempts while nothing ever answered: a wrong URL or a gateway that is down. Every
        // other line would spend as long failing the same way; stop, with nothing created and the line still unsent.
        if (!this.#reached && this.#lastUnreached !== undefined) {
          this.#setFatal(this.#unreachable(attempts), { grace: true });
          return Promise.resolve();
        }
        return this.#finish(
          line.customId,
          false,
          { code: last.code },
          outputLine(line.customId, null, {
            code: last.code,
            message: `not sent after ${attempts} attempts: ${last.message}`,
          }),
        );
      },
      stopped: () => this.#stop.signal.aborted || this.#fatal !== undefined,
      room: () => this.#followers.size < followCap,
      fatal: (e) => this.#setFatal(e),
    });
    const { unsent, refused } = await this.#scheduler.run();
    // Lines not reached are simply not sent; the same command (with a larger budget) sends them.
    this.stats.notSubmitted += unsent;
    if (refused) {
      for (;;) {
        const line = await next();
        if (line === undefined) break;
        this.stats.notSubmitted++;
      }
    }
    await source.return?.(undefined);
  }

  /** The error that ends a run whose creates never reached the gateway: the connection's own, said so. */
  #unreachable(attempts: number): Error {
    const e = this.#lastUnreached;
    const what = `no create reached the gateway in ${attempts} attempts, so nothing was created; once it answers, the same command sends everything: ${this.o.resume}`;
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
    const send = {
      e: 'send' as const,
      id,
      at: Date.now(),
      url: line.url,
      model: line.model,
      ...(est ? { est } : {}),
    };
    this.state.apply(send);
    await this.writer.append(send); // durable before a byte of the request leaves
    let res;
    try {
      const via = line.endpoint.kind === 'beta' ? this.client : this.sendClient;
      res = await line.endpoint.send(via, line.body, this.#cut.signal);
    } catch (e) {
      const out = classify(e);
      if (out.kind === 'rate-limited') {
        this.#reached = true;
        this.#limits.release(ticket, 'rate-limited', out.retryAfterMs);
        const r = { e: 'unsent' as const, id, at: Date.now(), code: out.code };
        this.state.apply(r);
        await this.writer.append(r);
        // The lane's pause (Retry-After, for every sender of the model) decides when it goes again.
        return { rateLimited: true, waitMs: 0, code: out.code, message: out.message };
      }
      this.#limits.release(ticket, 'other');
      if (out.kind !== 'not-sent' && out.kind !== 'doubt') this.#reached = true;
      if (out.kind === 'not-sent') {
        this.#lastUnreached = e;
        const r = { e: 'unsent' as const, id, at: Date.now(), code: out.code };
        this.state.apply(r);
        await this.writer.append(r);
        return { rateLimited: false, waitMs: 1000, code: out.code, message: out.message };
      }
      if (out.kind === 'auth') {
        // Stopped first, so no other create starts while this is written; the creates in flight get their grace
        // to land (they are answered, refused too, or left in doubt).
        this.#setFatal(out.error, { grace: true });
        const r = { e: 'unsent' as const, id, at: Date.now(), code: 'auth' };
        this.state.apply(r);
        await this.writer.append(r);
        return undefined;
      }
      if (out.kind === 'failed') {
        await this.#finish(
          id,
          false,
          { status: out.status, code: out.code },
          outputLine(
            id,
            out.status !== undefined
              ? { status_code: out.status, request_id: out.requestId ?? null, body: out.body }
              : null,
            { code: out.code, message: out.message },
          ),
        );
        return undefined;
      }
      await this.#doubt(id, out.code, out.message, out.requestId);
      return undefined;
    }
    this.#limits.release(ticket, 'ok');
    this.#reached = true;
    const response = { status_code: res.status, request_id: res.requestId ?? null, body: res.data };
    const kind = line.endpoint.kind;
    if (kind === 'sync') {
      await this.#finish(id, true, { status: res.status }, outputLine(id, response, null), res.text);
      return undefined;
    }
    const task = taskIdOf(kind, res.data);
    if (task === undefined) {
      await this.#doubt(id, 'response_shape', 'the create answer carries no task id', res.requestId);
      return undefined;
    }
    // Journaled (fsynced) like `gw video create` does, so `gw history` lists it even if this process dies now.
    this.ctx.recordCreated(this.client, {
      kind: JOURNAL_KIND[kind] ?? 'video',
      id: task,
      model: line.model,
      requestId: res.requestId,
      state: kind === 'alpha' ? 'submitted' : 'queued',
      extra: { batch: this.o.dir, custom_id: id },
    });
    const created = { e: 'created' as const, id, at: Date.now(), task, kind, rid: res.requestId };
    this.state.apply(created);
    await this.writer.append(created);
    if (kind === 'alpha') {
      // The document offers no query endpoint for alpha tasks: the item ends with its created task.
      await this.#finish(
        id,
        true,
        { status: res.status },
        outputLine(id, response, null, { task: (res.data as { data?: unknown }).data }),
      );
      return undefined;
    }
    this.#follow(id, kind, task, line.url, line.model, line.body, response);
    return undefined;
  }

  #follow(
    id: string,
    kind: string,
    task: string,
    url: string,
    model: string,
    body: Record<string, unknown> | undefined,
    response: OutputLine['response'] | undefined,
  ): void {
    this.stats.following++;
    const p = this.#followOne(id, kind, task, url, model, body, response)
      .catch((e: unknown) => {
        if (this.#stop.signal.aborted) return; // left as created: the next run follows it again
        this.#setFatal(e);
      })
      .finally(() => {
        this.stats.following--;
        this.#followers.delete(p);
        this.#scheduler?.wake();
      });
    this.#followers.add(p);
  }

  async #followOne(
    id: string,
    kind: string,
    task: string,
    url: string,
    model: string,
    body: Record<string, unknown> | undefined,
    response: OutputLine['response'] | undefined,
  ): Promise<void> {
    const signal = this.#stop.signal;
    const requestTimeoutMs = this.ctx.settings().timeoutMs;
    let last: string | undefined;
    const onState = (state: string): void => {
      if (state === last) return;
      last = state;
      const r = { e: 'task' as const, id, at: Date.now(), state };
      void this.writer.append(r).catch(() => undefined);
      this.ctx.journal().update(JOURNAL_KIND[kind] ?? 'video', task, state);
    };
    const resp = response ?? { status_code: 200, request_id: null, body: { id: task } };
    // Polls follow the model's lane: they wait out its pause, and a poll's 429 pauses it for every sender.
    const lane = laneHooks(this.#limits, model);
    try {
      if (kind === 'video') {
        const videos = await import('../client/resources/videos.js');
        const res = await throughLane(lane, signal, () =>
          videos.wait(this.client, task, {
            signal,
            requestTimeoutMs,
            onUpdate: (r) => onState(String(r.status)),
            sleep: lane.sleep,
            onTransient: lane.onTransient,
          }),
        );
        const failure = videos.failureOf(task, res);
        if (failure !== undefined) {
          await this.#finish(
            id,
            false,
            { code: failure.code },
            outputLine(id, resp, { code: failure.code, message: failure.message }, { task: res.data }),
          );
          return;
        }
        const files: SavedFile[] = [];
        if (this.o.download) {
          const expires = Number((res.data as { expires_at?: unknown }).expires_at);
          await this.#downloads.acquire(Number.isFinite(expires) ? expires : Infinity);
          try {
            files.push(
              await this.#save(
                lane,
                id,
                extensionOf(typeof res.data.url === 'string' ? res.data.url : 'x.mp4'),
                (start, sig) =>
                  videos.content(this.client, task, {
                    headers: start !== undefined ? { range: `bytes=${start}-` } : {},
                    signal: sig,
                  }),
              ),
            );
          } finally {
            this.#downloads.release();
          }
        }
        const implied = impliedSpend(url, body, res.data);
        await this.#finish(
          id,
          true,
          {
            status: resp.status_code,
            implied: implied ? { c: implied.currency, a: implied.amount } : undefined,
          },
          outputLine(id, resp, null, { task: res.data, ...(this.o.download ? { files } : {}) }),
        );
        return;
      }
      const tasks = await import('../client/resources/beta-tasks.js');
      const rec = await throughLane(lane, signal, () =>
        tasks.wait(this.client, task, {
          signal,
          onUpdate: (t) => onState(t.status),
          sleep: lane.sleep,
          onTransient: lane.onTransient,
        }),
      );
      if (rec.status !== 'succeeded') {
        const code = rec.error?.code ?? `task_${rec.status}`;
        await this.#finish(
          id,
          false,
          { code },
          outputLine(
            id,
            resp,
            { code, message: rec.error?.message ?? `task ${task} ended ${rec.status}` },
            { task: rec },
          ),
        );
        return;
      }
      const files: SavedFile[] = [];
      const video = rec.content?.video_url;
      if (this.o.download && video !== undefined) {
        await this.#downloads.acquire(Number(rec.updated_at ?? Infinity) * 1000 + 24 * 3600 * 1000);
        try {
          files.push(
            await this.#save(lane, id, extensionOf(video), (start, sig) => this.#raw(video, start, sig)),
          );
          const frame = rec.content?.last_frame_url;
          if (frame !== undefined) {
            files.push(
              await this.#save(lane, `${id}.last_frame`, extensionOf(frame), (start, sig) =>
                this.#raw(frame, start, sig),
              ),
            );
          }
        } finally {
          this.#downloads.release();
        }
      }
      const implied = impliedSpend(url, body, rec);
      await this.#finish(
        id,
        true,
        {
          status: resp.status_code,
          implied: implied ? { c: implied.currency, a: implied.amount } : undefined,
        },
        outputLine(id, resp, null, { task: rec, ...(this.o.download ? { files } : {}) }),
      );
    } catch (e) {
      if (signal.aborted) throw e;
      // The task exists; it could not be followed (its record or file is unreachable): a failed item, with its id.
      const code = (e as { code?: unknown }).code;
      const err = {
        code: typeof code === 'string' ? code : 'error',
        message: e instanceof Error ? e.message : String(e),
      };
      await this.#finish(id, false, { code: err.code }, outputLine(id, resp, err, { task: { id: task } }));
    }
  }

  #raw(url: string, start: number | undefined, signal: AbortSignal | undefined) {
    return this.client.raw({
      path: url,
      headers: start !== undefined ? { range: `bytes=${start}-` } : {},
      signal,
    });
  }

  async #save(
    lane: LaneHooks,
    name: string,
    ext: string,
    open: (start: number | undefined, signal: AbortSignal | undefined) => Promise<DownloadAnswer>,
  ): Promise<SavedFile> {
    const { download } = await import('../core/download.js');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(this.o.dir, FILES_DIR), { recursive: true });
    const file = join(this.o.dir, FILES_DIR, `${name}.${ext}`);
    const signal = this.#stop.signal;
    // Each opening of the file goes through the lane too (a 429 pauses the model and opens it again after).
    const r = await download({
      file,
      force: true,
      signal,
      open: (start, sig) => throughLane(lane, signal, () => open(start, sig)),
    });
    return { path: r.path, bytes: r.bytes };
  }
}

export { ERRORS_FILE, RESULTS_FILE };
