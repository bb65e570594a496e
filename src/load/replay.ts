/**
 * `gw load --replay` as a library (`runReplay`): a recorded trace sent on its own clock. Each line of the trace
 * (trace.ts) is sent at its `t_ms` divided by `speed`, measured from the replay's start (or `startAt`), whatever
 * the answers do: an open loop whose schedule is the file. Latency counts from the scheduled time, and how late
 * each request left (its schedule lag) is recorded as the open loop records it, so a client that fell behind says
 * so with the same warning.
 *
 * The file is read twice, both times as a stream: first every line is checked (the trace's schema, time order,
 * the contract's rules for each body, the budget of its videos) so that a bad line is exit 2 before anything is
 * sent; then it is sent, read ahead by a bounded window (MAX_WINDOW lines or MAX_WINDOW_BYTES of bodies): memory
 * does not grow with the trace's length.
 *
 * A `session` is a conversation: its turns go in order, each waiting for the previous one's answer; a turn due
 * while the previous one is in flight is parked and sent when the answer ends, its lag and latency counted from
 * that moment (max of its schedule and the previous answer). Video lines are created, followed and downloaded as
 * `--api video` does (video.ts), within the budget.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { GatewayClient, PreparedRequest } from '../client/gateway-client.js';
import type { Currency } from '../contract/estimate.js';
import type { PriceTable } from '../contract/prices.js';
import type { VideoCreateInput } from '../contract/video.js';
import { BudgetLedger, isRefusal, type Hold } from '../core/budget.js';
import { UsageError } from '../core/errors.js';
import { runId, type Shard } from '../core/shard.js';
import { badLineRule, isBad, readLocalLines, type Line } from '../core/lines.js';
import { exchange, Flight, type Clock, type Outcome, type Sendable, type Target } from './exchange.js';
import { parseExpr, perRequestTerms, type Expr } from './expr.js';
import { ApiModelGroups } from './groups.js';
import { DEFAULTS } from './plan.js';
import { Recorder } from './recorder.js';
import { stepReport, videoFigures } from './report.js';
import type { LoadOptions } from './run.js';
import {
  authError,
  behindWarning,
  GW_VERSION,
  lateStartWarning,
  preflight,
  progress,
  spans,
  untilInstant,
} from './run.js';
import { SCHEMA, type RunReport } from './schema.js';
import { pricesDigest, runSpend, spendWarnings } from './spend.js';
import {
  lineError,
  readTraceLine,
  traceShard,
  videoPrice,
  type TraceApi,
  type TraceDefaults,
  type TraceItem,
} from './trace.js';
import { settleVideo, VIDEO_DEFAULTS, VideoTasks, type CreatedVideo } from './video.js';
import { API_PATH } from './workload.js';

/** Lines read ahead of the schedule, at most. */
export const MAX_WINDOW = 4096;
/** Bytes of bodies read ahead, at most (a line may carry a large body). */
export const MAX_WINDOW_BYTES = 64 * 1024 * 1024;
/** Lines read ahead per turn of the event loop. */
const READ_SLICE = 16;

/** A replay as given. */
export interface ReplayPlan {
  /** The trace file (JSONL). */
  path: string;
  /** 2 = twice as fast (default 1). */
  speed?: number | undefined;
  /** Stream synthesised chat/responses/messages answers (default true). */
  stream?: boolean | undefined;
  /** max_tokens of synthesised bodies whose line gives none (default 64). */
  maxTokens?: number | undefined;
  /** Most requests in flight (a connection each, default 4096); a due line waits for one, its wait counted. */
  connections?: number | undefined;
  /** The cap on the list price of the trace's videos, per currency (required when it has video lines). */
  budgets?: ReadonlyMap<Currency, number> | undefined;
  pollMs?: number | undefined;
  videoTimeoutMs?: number | undefined;
  /** This machine's part: every turn of a session on one shard, other lines by index. */
  shard?: Shard | undefined;
  /**
   * Unix time (ms) at which t_ms = 0 falls (default: when the run starts): shards given one instant replay one
   * clock. The report records how late this machine started.
   */
  startAt?: number | undefined;
  slo?: Expr | string | undefined;
  /** `--prices`: each request priced from what its answer reported (the report's spend, per api and model too). */
  prices?: PriceTable | undefined;
}

/** What the check of a trace found. */
export interface TraceSummary {
  /** Requests in the trace, and in this shard. */
  lines: number;
  mine: number;
  apis: Partial<Record<TraceApi, number>>;
  /** sha256 of the file's bytes as read (the run's identity). */
  digest: string;
  /** t_ms of the last line. */
  lastMs: number;
  /**
   * Videos: how many on this shard, the first line of one, their list price per currency (this shard's), and the
   * models of the whole trace's (every shard's report names the same).
   */
  videos: { count: number; firstLine: number | undefined; spend: Map<string, number>; models: string[] };
  /** True when the whole trace has a video line (every shard's report then has video figures). */
  hasVideo: boolean;
}

/** A finished request of the replay, with its line. */
export interface ReplayOutcome extends Outcome {
  lineNo: number;
  session: string | undefined;
}

/**
 * The options of `runReplay`: those of `runLoad` (the client or a factory asked for `connections`, the signal, the
 * clock, the live figures, each request's span for --otlp), the replay's plan and its own sinks.
 */
export interface ReplayOptions extends Pick<
  LoadOptions,
  'client' | 'signal' | 'clock' | 'onProgress' | 'onSpan'
> {
  plan: ReplayPlan;
  /** The trace was checked: nothing has been sent yet. */
  onChecked?: ((s: TraceSummary) => void) | undefined;
  onRequest?: ((o: ReplayOutcome) => void) | undefined;
  onCreated?: ((v: CreatedVideo) => void) | undefined;
  onFinished?: ((id: string, state: string) => void) | undefined;
}

const REGULAR = 'a trace is read twice: every line checked, then sent';

/** The lines of the trace, each with its 0-based index among the requests; blank lines skipped. */
async function* traceLines(
  path: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<Line & { index: number }> {
  let index = 0;
  for await (const l of readLocalLines(path, {
    flag: '--replay',
    field: '--replay',
    regular: REGULAR,
    signal,
  })) {
    if (isBad(l)) throw lineError(path, l.lineNo, '(the line)', badLineRule(l));
    if (l.text.trim() === '') continue;
    yield { ...l, index: index++ };
  }
}

function defaultsOf(plan: ReplayPlan, validate: boolean): TraceDefaults {
  return { stream: plan.stream ?? true, maxTokens: plan.maxTokens ?? DEFAULTS.maxTokens, validate };
}

/**
 * Reads the whole trace once and checks every line: its schema, the contract's rules for its body (when
 * `validate`), time order (a line earlier than the one before is refused: a trace is in time order), and the
 * budget of this shard's videos. Throws a UsageError naming the line and field, or --budget; sends nothing.
 */
export async function checkTrace(
  plan: ReplayPlan,
  o: { validate: boolean; signal?: AbortSignal | undefined },
): Promise<TraceSummary> {
  const d = defaultsOf(plan, o.validate);
  const hash = createHash('sha256');
  const s: TraceSummary = {
    lines: 0,
    mine: 0,
    apis: {},
    digest: '',
    lastMs: 0,
    videos: { count: 0, firstLine: undefined, spend: new Map(), models: [] },
    hasVideo: false,
  };
  const models = new Set<string>();
  let prev: { t: number; lineNo: number } | undefined;
  for await (const l of traceLines(plan.path, o.signal)) {
    hash.update(l.text).update('\n');
    const item = readTraceLine(l.text, l.lineNo, plan.path, d);
    if (prev !== undefined && item.tMs < prev.t) {
      throw lineError(
        plan.path,
        l.lineNo,
        't_ms',
        `${item.tMs} is earlier than line ${prev.lineNo}'s ${prev.t} (a trace is in time order: sort it by t_ms)`,
      );
    }
    prev = { t: item.tMs, lineNo: l.lineNo };
    s.lines++;
    s.apis[item.api] = (s.apis[item.api] ?? 0) + 1;
    if (item.api === 'video') {
      models.add(item.model);
      s.videos.firstLine ??= item.lineNo;
    }
    if (plan.shard !== undefined && traceShard(item.session, l.index, plan.shard.n) !== plan.shard.k)
      continue;
    s.mine++;
    if (item.api === 'video') addVideo(s, item, plan.path);
  }
  if (s.lines === 0) throw new UsageError(`--replay: ${plan.path} holds no request`, { field: '--replay' });
  s.lastMs = prev?.t ?? 0;
  s.digest = hash.digest('hex');
  s.videos.models = [...models].sort();
  s.hasVideo = models.size > 0;
  checkBudget(s, plan.budgets);
  return s;
}

function addVideo(s: TraceSummary, item: TraceItem, path: string): void {
  const price = videoPrice(item);
  if (!price.ok)
    throw lineError(
      path,
      item.lineNo,
      'body',
      `cannot be priced, so --budget cannot be kept (${price.reason})`,
    );
  s.videos.count++;
  s.videos.spend.set(price.currency, (s.videos.spend.get(price.currency) ?? 0) + price.amount);
}

/** A trace with videos needs a budget in their currency. */
function checkBudget(s: TraceSummary, budgets: ReadonlyMap<Currency, number> | undefined): void {
  if (!s.hasVideo) return;
  const refuse = (rule: string): never => {
    throw new UsageError(`--budget: ${rule}`, { field: '--budget' });
  };
  if (budgets === undefined) {
    return refuse(
      `the trace has ${s.apis.video ?? 0} video lines (the first on line ${s.videos.firstLine}): they create paid tasks, so --replay needs --budget (e.g. --budget 50CNY)`,
    );
  }
  for (const currency of s.videos.spend.keys()) {
    if (!budgets.has(currency as Currency))
      refuse(`the trace's videos are priced in ${currency}: give a budget in ${currency}`);
  }
}

/** The prepared request of each path and stream mode (URL, headers, timeouts): a few, made once. */
function preparer(client: GatewayClient): (path: string, stream: boolean) => PreparedRequest {
  const made = new Map<string, PreparedRequest>();
  return (path, stream) => {
    const key = `${stream ? 's' : 'j'}${path}`;
    let r = made.get(key);
    if (r === undefined) made.set(key, (r = client.prepare({ method: 'POST', path, json: true, stream })));
    return r;
  };
}

/**
 * Runs a replay and returns its report (one step, `replay`). Checks the whole trace first (checkTrace): a bad
 * line or a missing budget throws a UsageError before anything is sent. Throws the client's
 * AuthenticationError/PermissionDeniedError when the gateway answered 401/403.
 */
export async function runReplay(o: ReplayOptions): Promise<RunReport> {
  const plan = o.plan;
  const connections = plan.connections ?? DEFAULTS.connections;
  const given = o.client;
  const client = typeof given === 'function' ? await given({ connections }) : given;
  const summary = await checkTrace(plan, { validate: client.validate, signal: o.signal });
  o.onChecked?.(summary);
  const run = new ReplayRun(o, client, summary, connections);
  await run.run();
  return run.report();
}

/**
 * Where t_ms = 0 falls, once the first lines are read: a `GET /v1/models` first (a refused token ends the run
 * before the trace's clock starts; the first line finds its connection open), then --start-at's instant when
 * given (a run that started more than a second after it replays from its own start: run.ts untilInstant).
 */
async function originOf(
  client: GatewayClient,
  clock: Clock & { timeOrigin: number },
  startAt: number | undefined,
  signal: AbortSignal,
): Promise<{ origin: number; lateMs: number | undefined }> {
  await preflight(client, signal);
  if (startAt === undefined) return { origin: clock.now(), lateMs: undefined };
  const at = startAt - clock.timeOrigin;
  const start = await untilInstant(at, clock, signal);
  return { origin: start.anchored ? at : clock.now(), lateMs: start.lateMs };
}

/** Where the reader stands: the window of lines read ahead, and the reader itself. */
interface Window {
  items: TraceItem[];
  head: number;
  bytes: number;
  eof: boolean;
  reading: boolean;
}

/** The state of one running replay. */
class ReplayRun {
  readonly rec: Recorder;
  readonly groups: ApiModelGroups;
  /** The caller's signal, or the run's own end (a 401/403, a trace changed under it). */
  readonly signal: AbortSignal;
  readonly #end = new AbortController();
  readonly clock: Clock & { timeOrigin: number };
  readonly target: Target;
  readonly flight: Flight;
  readonly videos: VideoTasks;
  readonly prepared: (path: string, stream: boolean) => PreparedRequest;
  readonly speed: number;
  readonly slo: Expr | undefined;
  readonly win: Window = { items: [], head: 0, bytes: 0, eof: false, reading: false };
  readonly #reader: AsyncGenerator<Line & { index: number }>;
  /** Sessions with a turn in flight, and the due turns parked behind it. */
  readonly #busy = new Map<string, TraceItem[]>();
  #parked = 0;
  #inFlight = 0;
  #stopping = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #finish: (() => void) | undefined;
  #failure: unknown;
  origin = 0;
  /** Each request's span (--otlp), once the origin is known. */
  #span: ((o: Outcome) => void) | undefined;
  /** How late the run started after --start-at. */
  lateMs: number | undefined;
  /** The videos' spend against --budget; video lines not sent because they would have passed it. */
  readonly ledger: BudgetLedger;
  budgetSkipped = 0;
  authFailure: Outcome | undefined;

  constructor(
    readonly o: ReplayOptions,
    readonly client: GatewayClient,
    readonly summary: TraceSummary,
    readonly connections: number,
  ) {
    const plan = o.plan;
    this.signal = o.signal !== undefined ? AbortSignal.any([o.signal, this.#end.signal]) : this.#end.signal;
    this.clock = o.clock ?? performance;
    this.target = { client, clock: this.clock };
    this.flight = new Flight(this.signal);
    this.speed = plan.speed ?? 1;
    this.slo = typeof plan.slo === 'string' ? parseExpr(plan.slo, '--slo') : plan.slo;
    this.rec = new Recorder(perRequestTerms(this.slo), plan.prices);
    this.groups = new ApiModelGroups(plan.prices !== undefined);
    this.prepared = preparer(client);
    this.ledger = new BudgetLedger(plan.budgets ?? new Map());
    this.videos = new VideoTasks({
      client,
      clock: this.clock,
      signal: this.signal,
      pollMs: plan.pollMs ?? VIDEO_DEFAULTS.pollMs,
      videoTimeoutMs: plan.videoTimeoutMs ?? VIDEO_DEFAULTS.timeoutMs,
      onCreated: o.onCreated,
      onFinished: o.onFinished,
    });
    this.#reader = this.#mine();
  }

  /** True when the caller's signal ended the run (Ctrl-C): the report is partial. */
  get interrupted(): boolean {
    return this.o.signal?.aborted === true;
  }

  /** This shard's lines (the session decides the shard; only this shard's lines are built). */
  async *#mine(): AsyncGenerator<Line & { index: number }> {
    const shard = this.o.plan.shard;
    for await (const l of traceLines(this.o.plan.path, this.signal)) {
      const session = shard !== undefined && l.text.includes('"session"') ? sessionOf(l.text) : undefined;
      if (shard === undefined || traceShard(session, l.index, shard.n) === shard.k) yield l;
    }
  }

  async run(): Promise<void> {
    await this.#fill();
    const start = await originOf(this.client, this.clock, this.o.plan.startAt, this.signal);
    this.origin = start.origin;
    this.lateMs = start.lateMs;
    const onSpan = this.o.onSpan;
    if (onSpan !== undefined)
      this.#span = spans(this.client.origin, this.clock.timeOrigin + this.origin, onSpan);
    this.rec.runOrigin = this.origin;
    this.rec.startedAt = this.origin;
    const ticker = setInterval(
      () => this.o.onProgress?.(progress('replay', false, this.rec, this.clock.now())),
      250,
    );
    const stop = (): void => this.#stop();
    try {
      await new Promise<void>((resolve) => {
        this.#finish = resolve;
        this.signal.addEventListener('abort', stop, { once: true });
        this.#tick();
      });
    } finally {
      this.signal.removeEventListener('abort', stop);
      clearInterval(ticker);
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.flight.close();
      void this.#reader.return(undefined);
    }
    this.rec.endedAt = this.clock.now();
    if (this.#failure !== undefined) throw this.#failure;
    if (this.authFailure !== undefined) throw authError(this.authFailure);
  }

  /** Reads ahead until the window is full or the trace ends. */
  async #fill(): Promise<void> {
    const w = this.win;
    if (w.reading || w.eof) return;
    w.reading = true;
    const d = defaultsOf(this.o.plan, false);
    let read = 0;
    try {
      while (
        !w.eof &&
        !this.#stopping &&
        w.items.length - w.head + this.#parked < MAX_WINDOW &&
        w.bytes < MAX_WINDOW_BYTES
      ) {
        // A slice at a time, then a turn of the event loop: lines already buffered are read on promise callbacks
        // alone, which would hold the timers of due lines (measured: 2048 lines at a time put 0.5 s of lag on
        // a loaded machine).
        if (++read % READ_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
        const r = await this.#reader.next();
        if (r.done === true) {
          w.eof = true;
          break;
        }
        const item = readTraceLine(r.value.text, r.value.lineNo, this.o.plan.path, d);
        if (w.head > 1024 && w.head * 2 > w.items.length) {
          w.items = w.items.slice(w.head);
          w.head = 0;
        }
        w.items.push(item);
        w.bytes += sizeOf(item);
        // The first line read while none was waiting: schedule it now.
        if (w.items.length - w.head === 1 && this.#timer === undefined) this.#tick();
      }
    } catch (e) {
      this.#failure ??= e;
      this.#stop();
    } finally {
      w.reading = false;
    }
    this.#maybeDone();
  }

  #due(item: TraceItem): number {
    return this.origin + item.tMs / this.speed;
  }

  /** Sends every due line (parking turns of busy sessions), then sets a timer for the next one. */
  #tick(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#finish === undefined || this.#stopping) return;
    const w = this.win;
    const now = this.clock.now();
    while (w.head < w.items.length && this.#inFlight < this.connections) {
      const item = w.items[w.head] as TraceItem;
      const due = this.#due(item);
      if (due > now) break;
      w.items[w.head++] = undefined as unknown as TraceItem;
      w.bytes -= sizeOf(item);
      const queue = item.session !== undefined ? this.#busy.get(item.session) : undefined;
      if (queue !== undefined) {
        queue.push(item);
        this.#parked++;
      } else this.#send(item, due);
    }
    if (w.items.length - w.head < MAX_WINDOW / 2) void this.#fill();
    const next = w.items[w.head];
    if (next !== undefined && this.#inFlight < this.connections) {
      const wait = Math.max(0, Math.floor(this.#due(next) - this.clock.now()));
      this.#timer = setTimeout(() => this.#tick(), wait);
    }
    this.#maybeDone();
  }

  /** Sends a line (latency and lag from `t0`); a video line the budget cannot take is skipped. */
  #send(item: TraceItem, t0: number): void {
    if (item.api === 'video') {
      const hold = this.#reserve(item);
      if (hold === undefined) {
        this.budgetSkipped++;
        if (item.session !== undefined) this.#nextTurn(item.session);
        return;
      }
      const settled = this.#start(item);
      void this.#video(item, t0, hold).then(settled);
      return;
    }
    const settled = this.#start(item);
    const path = API_PATH[item.api];
    const req: Sendable = {
      api: item.api,
      model: item.model,
      stream: item.stream,
      path,
      body: item.body as Buffer,
      request: this.prepared(path, item.stream),
    };
    void exchange(this.target, req, t0, this.origin, this.flight).then(settled);
  }

  /** Counts a line in flight (its session busy until it ends); returns what ends it. */
  #start(item: TraceItem): (o: Outcome) => void {
    this.#inFlight++;
    this.rec.inFlight++;
    if (item.session !== undefined && !this.#busy.has(item.session)) this.#busy.set(item.session, []);
    return (o) => this.#settled(item, o);
  }

  /**
   * Holds a video's list price against the budget; undefined when it would pass it (checkTrace priced it). A due
   * line is never kept waiting for videos in flight to end: the trace's clock decides when it goes.
   */
  #reserve(item: TraceItem): Hold | undefined {
    const price = videoPrice(item);
    if (!price.ok) return undefined;
    const hold = this.ledger.reserve(price.currency, price.amount);
    return isRefusal(hold) ? undefined : hold;
  }

  /** A video line: created, followed and downloaded (video.ts), its hold ended as its end says. */
  async #video(item: TraceItem, t0: number, hold: Hold): Promise<Outcome> {
    const lag = Math.max(0, this.clock.now() - t0);
    const body = item.body as VideoCreateInput;
    const v = await this.videos.item(body);
    settleVideo(this.ledger, hold, body, v);
    return { ...this.videos.record(v, t0 - this.origin, lag), model: item.model };
  }

  #settled(item: TraceItem, o: Outcome): void {
    this.#inFlight--;
    this.rec.inFlight--;
    this.#span?.(o);
    this.rec.add(o);
    this.groups.add(o, item.model);
    if ((o.status === 401 || o.status === 403) && this.authFailure === undefined) {
      this.authFailure = o;
      this.#stop();
    }
    if (o.cancelled !== true) this.o.onRequest?.({ ...o, lineNo: item.lineNo, session: item.session });
    if (item.session !== undefined) this.#nextTurn(item.session);
    this.#tick();
    this.#maybeDone();
  }

  /** A session's turn ended: its next parked turn goes now, its lag and latency counted from now. */
  #nextTurn(session: string): void {
    const queue = this.#busy.get(session) ?? [];
    this.#busy.delete(session);
    const next = queue.shift();
    if (next === undefined) return;
    this.#parked--;
    if (this.#stopping) return;
    if (queue.length > 0) this.#busy.set(session, queue);
    this.#send(next, Math.max(this.#due(next), this.clock.now()));
  }

  /** Sends nothing more; requests in flight are cancelled and the run ends once they settled. */
  #stop(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#end.abort();
    this.flight.abortAll();
    this.#maybeDone();
  }

  #maybeDone(): void {
    const finish = this.#finish;
    if (finish === undefined || this.#inFlight > 0) return;
    const w = this.win;
    if (this.#stopping || (w.eof && w.head >= w.items.length && this.#parked === 0)) {
      this.#finish = undefined;
      finish();
    }
  }

  report(): RunReport {
    return replayReport(this);
  }
}

/** The session of a line's text (only for choosing its shard; the line was checked). */
function sessionOf(text: string): string | undefined {
  const v = (JSON.parse(text) as { session?: unknown }).session;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
}

function sizeOf(item: TraceItem): number {
  return Buffer.isBuffer(item.body) ? item.body.length : 1024;
}

/**
 * The run's identity (core/shard.ts runId): a digest of what every shard is given (the gateway, the settings, the
 * trace's bytes, the --start-at instant) and the shard count; `gw load merge` joins only shards of one run.
 */
function replayRun(r: ReplayRun, config: Record<string, unknown>): string {
  const plan = r.o.plan;
  const input = JSON.stringify({ target: r.client.baseUrl, config, start_at: plan.startAt ?? null });
  return runId(createHash('sha256').update(input).digest('hex'), plan.shard?.n ?? 1);
}

/** The report of a replay: one open-loop step labelled `replay`, its figures per api and model, its videos. */
function replayReport(r: ReplayRun): RunReport {
  const plan = r.o.plan;
  const step = stepReport(r.rec, { label: 'replay', mode: 'open' }, r.slo);
  step.by_api_model = r.groups.report();
  if (r.summary.hasVideo) {
    const currency = [...r.summary.videos.spend.keys()][0] ?? 'CNY';
    const spent = r.ledger.spent(currency as Currency);
    step.video = videoFigures(
      {
        model: r.summary.videos.models.join(', '),
        seconds: 0,
        resolution: 'as traced',
        ...r.videos.facts(),
        completed: r.videos.states.get('completed') ?? 0,
        spend: {
          currency,
          estimated: Math.round(spent * 100) / 100,
          unit_price: 0,
          budget: plan.budgets?.get(currency as Currency) ?? 0,
          stopped_by_budget: r.budgetSkipped > 0,
        },
        poll_interval_ms: plan.pollMs ?? VIDEO_DEFAULTS.pollMs,
      },
      r.videos.hist,
    );
  }
  const warnings: string[] = [];
  const late = lateStartWarning(r.lateMs);
  if (late !== undefined) warnings.push(late);
  if (step.schedule.behind) warnings.push(behindWarning(step, r.rec.peakInFlight, 1));
  if (step.usage_missing > 0)
    warnings.push(
      `replay: ${step.usage_missing} answers reported no usage; their output tokens are not counted`,
    );
  warnings.push(...spendWarnings(step));
  if (r.budgetSkipped > 0)
    warnings.push(
      `replay: ${r.budgetSkipped} video lines not sent: each would have carried the spend past --budget`,
    );
  const config: Record<string, unknown> = {
    mode: 'replay',
    replay: plan.path,
    speed: r.speed,
    lines: r.summary.lines,
    trace_sha256: r.summary.digest,
    apis: r.summary.apis,
    stream: plan.stream ?? true,
    max_tokens: plan.maxTokens ?? DEFAULTS.maxTokens,
    connections: r.connections,
    timeout_ms: r.client.timeoutMs,
    ...(r.slo !== undefined ? { slo: r.slo.text } : {}),
    ...(plan.prices !== undefined ? { prices: { sha256: pricesDigest(plan.prices) } } : {}),
  };
  return {
    schema: SCHEMA,
    created_at: new Date().toISOString(),
    gw_version: GW_VERSION,
    target: r.client.baseUrl,
    machines: 1,
    origin_unix_ms: Math.round((r.clock.timeOrigin + r.origin) * 1000) / 1000,
    ...(plan.shard !== undefined
      ? { shard: { shard: `${plan.shard.k}/${plan.shard.n}`, run: replayRun(r, config) } }
      : {}),
    ...(plan.startAt !== undefined ? { start_at: { unix_ms: plan.startAt, late_ms: r.lateMs ?? 0 } } : {}),
    config,
    interrupted: r.interrupted,
    stopped: null,
    warnings,
    steps: [step],
    ...runSpend([step]),
    sweep: null,
    slo: r.slo !== undefined ? { expr: r.slo.text, pass: step.slo?.pass !== false } : null,
  };
}
