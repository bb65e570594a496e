/**
 * The probe runner: plans which checks run and with which models, runs them concurrently (they are
 * independent), and turns each outcome into one record of the report (status, latency, time to first
 * token, request id, detail, error). The report order is the order of the checklist, never of completion.
 */
import type { Exchange, GatewayClient } from '../client/gateway-client.js';
import type { BaselineDiff } from './baseline.js';
import type { Currency } from '../contract/money.js';
import type { PriceTable, Spend } from '../contract/prices.js';
import { tokensOf } from '../contract/usage.js';
import { InterruptedError, UsageError } from '../core/errors.js';
import type { ProbeSettings } from '../core/config.js';
import type { JournalKind } from '../core/journal.js';
import { CHECKS, type Check, type CheckContext } from './checks.js';
import { EXTENDED_CHECK_IDS, unknownCheck } from './check-ids.js';
import { isInterrupted, toGwError } from '../core/error-map.js';

/** What a probe run creates and journals: videos, alpha and beta tasks. */
export type CreatedKind = Exclude<JournalKind, 'beta-asset'>;
/** A check's verdict. `warn` does not fail the run. */
export type CheckStatus = 'pass' | 'fail' | 'warn' | 'skip';

/** The gateway error a failed check saw (code and message as the gateway sent them). */
export interface CheckError {
  code: string;
  message: string;
  status?: number;
  requestId?: string;
  hint?: string;
}

/** Timing of a stream: chunk count and arrival times of the first and last chunk, from the request start. */
export interface StreamTiming {
  chunks: number;
  firstMs: number;
  lastMs: number;
}

/** What a check returns; the runner adds latency and checks the request id. */
export interface CheckOutcome {
  status: CheckStatus;
  detail: string;
  requestId?: string | undefined;
  ttftMs?: number | undefined;
  stream?: StreamTiming | undefined;
  error?: CheckError | undefined;
  /** Extra facts for the JSON report (e.g. the video's id and list price). */
  data?: Record<string, unknown> | undefined;
}

/** One line of the report. */
export interface CheckRecord {
  id: string;
  title: string;
  status: CheckStatus;
  latencyMs: number;
  ttftMs?: number;
  requestId?: string;
  detail: string;
  error?: CheckError;
  data?: Record<string, unknown>;
  /** `--all-models` rows: the check kind of the row (e.g. `chat-stream`), its model and the model's kind. */
  check?: string;
  model?: string;
  kind?: string;
  /** Why a check failed when it is not the model's fault: `auth`, `quota`, `rate-limit`, `timeout`; `model` for
   * a model that is broken; `unknown-kind` for a model not probed. */
  class?: string;
  /** The SLO verdict (with --slo / --warn-slo). */
  slo?: { verdict: 'pass' | 'degraded' | 'failed'; missed: string[] };
  /** What the row cost at the --prices of its model, from the usage its answer reported. */
  spend?: Spend;
}

/** A row's spend at `prices`, from the usage (and images) its answer reported; undefined when not priced. */
export function recordSpend(c: CheckRecord, prices: PriceTable): Spend | undefined {
  if (c.model === undefined || c.data === undefined) return undefined;
  const images = typeof c.data.images === 'number' ? c.data.images : undefined;
  const tokens = tokensOf(c.data.usage);
  return prices.spend(c.model, { tokens, ...(images !== undefined ? { images } : {}) });
}

/**
 * What a run asked for. Two runs are compared (a baseline diff, the history's changes) only when they asked the
 * same: the checklist's checks that ran and its planned models, or `--all-models`' kinds, modes and skipped globs.
 */
export interface ProbeAsk {
  mode: 'checklist' | 'all-models';
  /** Checklist: the ids of the checks that ran; --all-models: the kinds probed. Sorted. */
  checks: string[];
  /** Checklist: the planned models. Sorted. */
  models?: string[];
  /** --all-models: both stream modes. */
  bothStreamModes?: boolean;
  /** --all-models: the --skip-model globs. Sorted. */
  skipModels?: string[];
}

/** The whole report (`gw probe --json` prints it as one document). */
export interface ProbeReport {
  /** The gateway's base URL, without credentials. */
  gateway: string;
  /** What the run asked for (comparisons need the same); absent from reports of older versions. */
  asked?: ProbeAsk;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  checks: CheckRecord[];
  summary: { passed: number; failed: number; warned: number; skipped: number };
  /** The SLO bounds applied, in milliseconds (with --slo / --warn-slo). */
  slo?: { fail?: Record<string, number>; warn?: Record<string, number> };
  /** The run's spend per currency at --prices (with --prices; rows without a priced model count nothing). */
  spend?: Partial<Record<Currency, number>>;
  /** What changed since the baseline run (with --baseline). */
  baseline?: BaselineDiff;
}

/** The models the probe plans to use, per role, and the full list the `models` check expects. */
export interface ProbePlan {
  models: string[];
  chatModel: string;
  responsesModel: string;
  messagesModel: string;
  videoModel: string;
  embeddingModel: string;
}

/** Defaults from the documents' examples (common.md §2.2, §2.3). */
export const DEFAULT_PLAN: Omit<ProbePlan, 'models'> = {
  chatModel: 'chat-3.7-plus',
  responsesModel: 'chat-3.7-plus',
  messagesModel: 'chat-3.7-plus',
  // The cheapest text-only video model of the table: no reference media needed.
  videoModel: 'clip-1.1-t2v',
  embeddingModel: 'text-embedding-v4',
};

/** A stream counts as buffered when at least this many chunks arrived within BURST_SPREAD_MS. */
export const BURST_MIN_CHUNKS = 3;
/** Spread (ms) under which first and last chunk are "one burst": token streams have gaps of tens of ms. */
export const BURST_SPREAD_MS = 3;

/** Role flags and explicit models, as the command parsed them. */
export interface PlanInput {
  models?: string[] | undefined;
  chatModel?: string | undefined;
  messagesModel?: string | undefined;
  videoModel?: string | undefined;
}

/** Which checks run: the base six, plus the extended ones, filtered by --only/--skip. */
export interface Selection {
  /** Checks listed in the report, in report order. */
  listed: Check[];
  /** Ids among `listed` that run (the others are reported as skipped). */
  run: Set<string>;
  skipReason: Map<string, string>;
}

/** Applies --extended, --only and --skip; an unknown id is a UsageError naming the valid ids. */
export function selectChecks(o: {
  extended: boolean;
  only: readonly string[];
  skip: readonly string[];
}): Selection {
  for (const [field, ids] of [
    ['only', o.only],
    ['skip', o.skip],
  ] as const) {
    const problem = ids.map(unknownCheck).find((p) => p !== undefined);
    if (problem !== undefined) throw new UsageError(`${field}: ${problem}`, { field });
  }
  const wantsExtended =
    o.extended || o.only.some((id) => (EXTENDED_CHECK_IDS as readonly string[]).includes(id));
  const listed = CHECKS.filter((c) => !c.extended || wantsExtended);
  const run = new Set<string>();
  const skipReason = new Map<string, string>();
  for (const c of listed) {
    if (o.skip.includes(c.id)) skipReason.set(c.id, 'skipped (--skip)');
    else if (o.only.length > 0 && !o.only.includes(c.id)) skipReason.set(c.id, 'not selected (--only)');
    else run.add(c.id);
  }
  return { listed, run, skipReason };
}

/**
 * Resolves the planned models: role flags > profile `probe.*` > document defaults; the expected list is the
 * explicit `--model` flags (or `probe.models`) plus the model of every check that will run.
 */
export function planModels(
  input: PlanInput,
  profile: ProbeSettings | undefined,
  run: Set<string>,
): ProbePlan {
  const p = profile ?? {};
  const chatModel = input.chatModel ?? p.chatModel ?? DEFAULT_PLAN.chatModel;
  const plan: Omit<ProbePlan, 'models'> = {
    chatModel,
    // Without their own setting, the responses and messages checks use the chat model.
    responsesModel: p.responsesModel ?? chatModel,
    messagesModel: input.messagesModel ?? p.messagesModel ?? chatModel,
    videoModel: input.videoModel ?? p.videoModel ?? DEFAULT_PLAN.videoModel,
    embeddingModel: p.embeddingModel ?? DEFAULT_PLAN.embeddingModel,
  };
  const explicit = input.models !== undefined && input.models.length > 0 ? input.models : (p.models ?? []);
  const used: string[] = [];
  for (const c of CHECKS) {
    if (c.needs !== undefined && run.has(c.id)) used.push(plan[c.needs]);
  }
  return { ...plan, models: [...new Set([...explicit, ...used])] };
}

/** Hooks for live progress. */
export interface RunnerEvents {
  onStart?(check: Check): void;
  onUpdate?(check: Check, text: string): void;
  onFinish?(record: CheckRecord): void;
}

/** What the checklist runner needs from its caller (`runProbe` in probe.ts builds it from the library's options). */
export interface ChecklistOptions extends RunnerEvents {
  gateway: string;
  selection: Selection;
  plan: ProbePlan;
  /** A client for one check; the runner passes the exchange recorder. */
  client(o: { validate: boolean; onExchange: (x: Exchange) => void }): Promise<GatewayClient>;
  signal: AbortSignal;
  videoTimeoutMs: number;
  videoPoll: { initialMs: number; maxMs: number };
  /** A note on stderr (the video's list price before it is created). */
  note(text: string): void;
  /** Called right after a billable task was created (the command journals it). */
  onCreated?(kind: CreatedKind, id: string, model: string, requestId: string | undefined): void;
  /** Awaited before a check's clock starts (an in-process simulator registers the routes it calls). */
  prepare?(check: Check): Promise<void>;
  /** Longest the other checks wait for the slow checks' first answers (default SLOW_HEAD_START_MS). */
  headStartMs?: number;
  now?: () => number;
  clock?: () => Date;
}

/** Turns any thrown error into the error part of a record. */
export function errorOf(thrown: unknown): CheckError {
  const e = toGwError(thrown);
  if (e !== undefined) {
    const err: CheckError = { code: e.code, message: e.message };
    const status = (e as { status?: unknown }).status;
    if (typeof status === 'number') err.status = status;
    if (e.requestId !== undefined) err.requestId = e.requestId;
    if (e.hint !== undefined) err.hint = e.hint;
    return err;
  }
  return { code: 'internal', message: thrown instanceof Error ? thrown.message : String(thrown) };
}

/** One-line text of an error: `code: message`. */
export function errorLine(e: CheckError): string {
  return `${e.code}: ${e.message}`;
}

/** True when the timing looks like a proxy buffered the stream and released it at the end. */
export function isBurst(t: StreamTiming | undefined): boolean {
  return t !== undefined && t.chunks >= BURST_MIN_CHUNKS && t.lastMs - t.firstMs < BURST_SPREAD_MS;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** Applies the rules every check shares: request id present on every answer, buffered streams warn. */
export function finalize(
  check: Check,
  outcome: CheckOutcome,
  latencyMs: number,
  exchanges: readonly Exchange[],
): CheckRecord {
  const rec: CheckRecord = {
    id: check.id,
    title: check.title,
    status: outcome.status,
    latencyMs: round(latencyMs),
    detail: outcome.detail,
  };
  // Answers from the gateway itself (relative paths; a CDN origin is not the gateway) must carry the header.
  const answered = exchanges.filter((x) => x.status !== undefined && x.path.startsWith('/'));
  const requestId =
    outcome.requestId ?? outcome.error?.requestId ?? answered.find((x) => x.requestId)?.requestId;
  if (requestId !== undefined) rec.requestId = requestId;
  if (outcome.ttftMs !== undefined) rec.ttftMs = round(outcome.ttftMs);
  if (outcome.error !== undefined) rec.error = outcome.error;
  if (outcome.data !== undefined) rec.data = outcome.data;
  const missing = answered.find((x) => x.requestId === undefined);
  if (missing !== undefined && rec.status !== 'skip') {
    rec.status = 'fail';
    rec.detail = `${missing.method} ${missing.path.replace(/\?.*$/, '')} answered ${missing.status} without an X-Gateway-Request-Id header`;
    return rec;
  }
  if (rec.status === 'pass' && isBurst(outcome.stream)) {
    const t = outcome.stream as StreamTiming;
    rec.status = 'warn';
    rec.detail = `all ${t.chunks} chunks arrived in one burst (first at ${Math.round(t.firstMs)}ms, last at ${Math.round(t.lastMs)}ms): a proxy may be buffering the stream`;
  }
  return rec;
}

/** Sets each checklist record's `model` to the planned model its check used (metrics and history label by it). */
export function labelModels(report: ProbeReport, plan: ProbePlan): void {
  for (const rec of report.checks) {
    const needs = CHECKS.find((c) => c.id === rec.id)?.needs;
    if (rec.model === undefined && needs !== undefined) rec.model = plan[needs];
  }
}

/** True when two runs asked for the same (so their cells may be compared, models counted as appeared or vanished). */
export function sameAsk(a: ProbeAsk | undefined, b: ProbeAsk | undefined): boolean {
  const key = (x: ProbeAsk): string =>
    JSON.stringify([x.mode, x.checks, x.models ?? [], x.bothStreamModes === true, x.skipModels ?? []]);
  return a !== undefined && b !== undefined && key(a) === key(b);
}

/** What a run asked for, in words (why two runs are not compared). */
export function askText(a: ProbeAsk | undefined): string {
  if (a === undefined) return 'not recorded (a run of an older gw)';
  if (a.mode === 'checklist')
    return `checks ${a.checks.join(', ')} with ${(a.models ?? []).join(', ') || 'no model'}`;
  const modes = a.bothStreamModes === true ? ', both stream modes' : '';
  const skip = (a.skipModels ?? []).length > 0 ? `, skipping ${(a.skipModels ?? []).join(', ')}` : '';
  return `--all-models of kinds ${a.checks.join(', ')}${modes}${skip}`;
}

/** Counts statuses. */
export function summarize(records: readonly CheckRecord[]): ProbeReport['summary'] {
  const n = (s: CheckStatus): number => records.filter((r) => r.status === s).length;
  return { passed: n('pass'), failed: n('fail'), warned: n('warn'), skipped: n('skip') };
}

/** What fails a run compared with a baseline: anything that got worse, or (the default) also any failure. */
export type FailOn = 'regressions' | 'failures';

/**
 * Exit code of a report: 0 when every check that ran passed or warned; 3 when the gateway refused the token
 * (401: nothing can pass until the configuration is fixed); 1 otherwise. Compared with a baseline, a regression
 * is a failure too, and with `failOn: 'regressions'` only a regression is (a known failure is not).
 */
export function exitCodeOf(report: ProbeReport, failOn: FailOn = 'failures'): number {
  // An --all-models row's 401 concerns that model's channel; only the checklist's (or the model list's) is the token.
  const token = report.checks.some((c) => c.check === undefined && c.error?.status === 401);
  const diff = report.baseline?.compared === true ? report.baseline : undefined;
  const regressed = (diff?.summary.regressions ?? 0) > 0;
  if (diff !== undefined && failOn === 'regressions') return regressed ? (token ? 3 : 1) : 0;
  if (report.summary.failed === 0 && !regressed) return 0;
  return token ? 3 : 1;
}

/** Longest the other checks wait for the first answer to a slow check before they start anyway (ms). */
export const SLOW_HEAD_START_MS = 250;

/**
 * Runs the selected checks concurrently and returns the report in checklist order.
 *
 * The slow checks (the video: a task to a terminal state) start first: their first request goes out alone. The
 * others start at their first answer (or after `headStartMs`), while the slow check waits between polls. The run
 * then lasts as long as its slowest check plus as little as possible. A check's clock starts after `prepare`
 * (an in-process simulator's routes): no latency carries module loading, and a failed `prepare` fails that check
 * alone.
 */
export async function runChecklist(o: ChecklistOptions): Promise<ProbeReport> {
  // process.hrtime rather than performance.now(): the global `performance` loads perf_hooks on first use (~2 ms
  // before the first check starts).
  const now = o.now ?? (() => Number(process.hrtime.bigint()) / 1e6);
  const clock = o.clock ?? (() => new Date());
  const startedAt = clock();
  const t0 = now();
  const runOne = async (check: Check, answered?: () => void): Promise<CheckRecord> => {
    if (!o.selection.run.has(check.id)) {
      const rec: CheckRecord = {
        id: check.id,
        title: check.title,
        status: 'skip',
        latencyMs: 0,
        detail: o.selection.skipReason.get(check.id) ?? 'skipped',
      };
      o.onFinish?.(rec);
      return rec;
    }
    o.onStart?.(check);
    const exchanges: Exchange[] = [];
    const ctx: CheckContext = {
      plan: o.plan,
      signal: o.signal,
      videoTimeoutMs: o.videoTimeoutMs,
      videoPoll: o.videoPoll,
      now,
      client: (c = {}) =>
        o.client({
          validate: c.validate ?? true,
          onExchange: (x) => {
            exchanges.push(x);
            answered?.();
          },
        }),
      exchanges: () => exchanges,
      note: (text) => o.note(text),
      update: (text) => o.onUpdate?.(check, text),
      created: (kind, id, model, requestId) => o.onCreated?.(kind, id, model, requestId),
    };
    let started: number | undefined;
    let outcome: CheckOutcome;
    try {
      await o.prepare?.(check);
      started = now();
      outcome = await check.run(ctx);
    } catch (e) {
      if (o.signal.aborted) throw isInterrupted(e) ? e : new InterruptedError();
      const error = errorOf(e);
      outcome = { status: 'fail', detail: errorLine(error), error };
    } finally {
      answered?.();
    }
    const rec = finalize(check, outcome, started === undefined ? 0 : now() - started, exchanges);
    o.onFinish?.(rec);
    return rec;
  };
  const slow = o.selection.listed.filter((c) => c.slow === true && o.selection.run.has(c.id));
  const running = new Map<Check, Promise<CheckRecord>>();
  const firstAnswers = slow.map((c) => {
    let answered!: () => void;
    const first = new Promise<void>((resolve) => (answered = resolve));
    const record = runOne(c, answered);
    // Awaited below with the others; this keeps an early failure from counting as unhandled meanwhile.
    record.catch(() => {});
    running.set(c, record);
    return first;
  });
  if (firstAnswers.length > 0) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const headStart = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, o.headStartMs ?? SLOW_HEAD_START_MS);
    });
    await Promise.race([Promise.all(firstAnswers), headStart]);
    clearTimeout(timer);
  }
  for (const c of o.selection.listed) if (!running.has(c)) running.set(c, runOne(c));
  const checks = await Promise.all(o.selection.listed.map((c) => running.get(c) as Promise<CheckRecord>));
  const finishedAt = clock();
  return {
    gateway: o.gateway,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: Math.round(now() - t0),
    checks,
    summary: summarize(checks),
  };
}
