/**
 * `runLoad`: a load test as a library. From a plan and a gateway client to the report document (schema
 * gw.load.v1): warm-up, one step per sweep value (or one step), the knee and the SLO verdict. It prints nothing and
 * writes no file: progress and each finished request go to the sinks the caller passes, and the caller writes the
 * report where it wants. Every request goes through the client's `dispatch` (its pool, proxy, CAs, token rule and
 * timeouts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import {
  AuthenticationError,
  errorClassFor,
  PermissionDeniedError,
  type GatewayError,
} from '../client/errors.js';
import type { GatewayClient } from '../client/gateway-client.js';
import { list as listModels } from '../client/resources/models.js';
import { runId } from '../core/shard.js';
import type { RequestSpan } from '../client/trace.js';
import { seededRandom } from './arrivals.js';
import type { Clock, Outcome, Sendable, Target } from './exchange.js';
import { perRequestTerms } from './expr.js';
import { kneeIndex, saturated, type CurvePoint } from './knee.js';
import { resolvePlan, shareOf, type LoadPlan, type LoadPlanInput } from './plan.js';
import type { Recorder } from './recorder.js';
import { stepReport } from './report.js';
import { runStep, sleep, type StepContext, type StepPlan } from './runner.js';
import { SCHEMA, type RunReport, type StepReport } from './schema.js';
import { pricesDigest, requestBound, runSpend, spendWarnings, TextBudget } from './spend.js';
import { TIMING_GLOSSARY } from './glossary.js';
import { API_PATH, prepare } from './workload.js';

/** Version written into reports. */
export const GW_VERSION = '0.1.0';

/** What the live figures of a running step say (about four times a second). */
export interface LoadProgress {
  /** The step (`concurrency=8`, `rate=50/s`), `warm-up`, or empty for a run of one step. */
  label: string;
  warming: boolean;
  inFlight: number;
  done: number;
  errors: number;
  p50Ms: number;
  p95Ms: number;
  requestsPerS: number;
}

/** The options of `runLoad`. */
export interface LoadOptions {
  /**
   * The gateway client, or a factory of clients given their pool size: the open loop asks for one client of
   * `plan.connections`, the closed loop for one client per virtual user with one connection (each user its own
   * connection, as benchmark tools do). With a single client every user shares its pool.
   */
  client: GatewayClient | ((need: { connections: number }) => GatewayClient | Promise<GatewayClient>);
  plan: LoadPlanInput;
  /** Ends the run (the report is then partial, `interrupted: true`). */
  signal?: AbortSignal | undefined;
  /** Monotonic milliseconds and the Unix time of their zero (default `performance`). */
  clock?: (Clock & { timeOrigin: number }) | undefined;
  onProgress?: ((p: LoadProgress) => void) | undefined;
  /** Each finished request of a measured step, with the step's label (`--csv`). */
  onRequest?: ((step: string, o: Outcome) => void) | undefined;
  /**
   * Every request when it ended (warm-ups and requests a step's end cancelled included) as a span of its trace,
   * with its timings and tokens: for a telemetry exporter (`--otlp`).
   */
  onSpan?: ((s: RequestSpan) => void) | undefined;
}

/** The steps of a run as they ended. */
interface Steps {
  steps: StepReport[];
  /** The largest number of requests in flight at once, per step label (open loop). */
  peaks: Map<string, number>;
  /** Requests that failed for want of a file descriptor, per step label. */
  localFailures: Map<string, number>;
  stopped: string | null;
  authFailure: Outcome | undefined;
}

function point(value: number, st: StepReport): CurvePoint {
  return { value, throughput: st.ok_per_s, latencyMs: st.latency_ms.e2e.p50 };
}

/**
 * Runs a load test and returns its report. Throws the client's AuthenticationError (or PermissionDeniedError)
 * when the gateway answered 401/403: more requests would only repeat it.
 */
export async function runLoad(o: LoadOptions): Promise<RunReport> {
  const plan = resolvePlan(o.plan);
  const given = o.client;
  const factory = typeof given === 'function' ? given : undefined;
  const open = plan.mode === 'open';
  const client =
    typeof given === 'function' ? await given({ connections: open ? plan.connections : 1 }) : given;
  const clock = o.clock ?? performance;
  const signal = o.signal ?? new AbortController().signal;
  const target: Target = { client, clock };
  if (factory !== undefined && !open) {
    // One client (one connection) per virtual user, made as the user starts and kept across the steps.
    const lanes: Array<Promise<GatewayClient>> = [Promise.resolve(client)];
    target.lane = (i) => (lanes[i] ??= Promise.resolve(factory({ connections: 1 })));
  }
  const next = workload(client, plan);
  // Read now: once requests fail for want of file descriptors, reading a file would fail the same way.
  const openFiles = openFilesLimit();
  // --start-at: everything is ready; wait for the instant. The run's origin (each CSV start_ms counts from it) is
  // that instant, or this run's own start when it started too late to keep to it.
  const at = plan.startAt !== undefined ? plan.startAt - clock.timeOrigin : undefined;
  if (at !== undefined) await preflight(client, signal);
  const start = at !== undefined ? await untilInstant(at, clock, signal) : undefined;
  const anchored = at !== undefined && start?.anchored === true;
  const origin = anchored ? at : clock.now();
  const ctx = {
    target,
    next,
    signal,
    goodTerms: perRequestTerms(plan.slo),
    origin,
    prices: plan.prices,
    budget:
      plan.budgets !== undefined && plan.prices !== undefined
        ? new TextBudget(plan.budgets, plan.prices)
        : undefined,
    onFinished:
      o.onSpan !== undefined ? spans(client.origin, clock.timeOrigin + origin, o.onSpan) : undefined,
  } satisfies Omit<StepContext, 'onAuthFailure'>;
  const run = await runSteps(plan, ctx, o, anchored ? origin : undefined);
  if (run.authFailure !== undefined) throw authError(run.authFailure);
  return buildReport(plan, run, {
    target: client.baseUrl,
    originUnixMs: Math.round((clock.timeOrigin + origin) * 1000) / 1000,
    timeoutMs: client.timeoutMs,
    interrupted: signal.aborted,
    openFiles,
    lateMs: start?.lateMs,
  });
}

/**
 * Before waiting for --start-at: one `GET /v1/models` (free) through the run's client. A token the gateway refuses
 * ends the run now, not at the instant; and the first request at the instant finds its connection open and the
 * send path run once, instead of paying for both (15 to 35 ms on a loaded 2-core machine, measured against the
 * simulator's arrival stamps; 1 to 8 ms after it). Any other failure is the run's to meet.
 */
export async function preflight(client: GatewayClient, signal: AbortSignal): Promise<void> {
  try {
    await listModels(client, { signal });
  } catch (e) {
    if (e instanceof AuthenticationError || e instanceof PermissionDeniedError) throw e;
  }
}

/** Past this lateness a shard starts its schedule when it starts, not at --start-at (see untilInstant). */
const START_SLACK_MS = 1000;

/**
 * Waits until clock time `at` (a timer to 2 ms before it, then turns of the event loop, so the wake-up is not a
 * timer's millisecond late). Returns how late the run starts, and whether its schedule stays anchored at `at`: a
 * run started more than START_SLACK_MS after it (queued too long by its scheduler) runs its schedule from its own
 * start instead, else its first arrivals would all be due at once (and a --duration could be over before it).
 */
export async function untilInstant(
  at: number,
  clock: Clock,
  signal: AbortSignal,
): Promise<{ lateMs: number; anchored: boolean }> {
  while (!signal.aborted && clock.now() < at - 2) {
    await sleep(Math.min(at - 2 - clock.now(), 60_000), signal);
  }
  while (!signal.aborted && clock.now() < at) await new Promise<void>((r) => setImmediate(r));
  const lateMs = Math.max(0, clock.now() - at);
  return { lateMs: Math.round(lateMs * 1000) / 1000, anchored: lateMs <= START_SLACK_MS };
}

/** Each request's outcome as its span (a request that was never sent has no span). */
export function spans(
  origin: string,
  originUnixMs: number,
  sink: (s: RequestSpan) => void,
): (o: Outcome) => void {
  return (o) => {
    if (o.spanId === undefined || o.traceId === undefined || o.api === 'video') return;
    sink({
      traceId: o.traceId,
      spanId: o.spanId,
      method: 'POST',
      path: API_PATH[o.api],
      origin,
      startUnixMs: originUnixMs + o.startMs,
      durationMs: o.e2eMs,
      status: o.status > 0 ? o.status : undefined,
      requestId: o.requestId,
      errorCode: o.ok ? undefined : (o.code ?? 'error'),
      model: o.model,
      ttftMs: o.ttftMs,
      chunkGapsMs: o.itlMs,
      inputTokens: o.inputTokens,
      cachedInputTokens: o.cachedTokens,
      outputTokens: o.outputTokens,
    });
  };
}

/**
 * The request bodies of the plan (checked against the contract when the client validates, and with --budget each
 * given its upper bound at --prices: requestBound refuses the run before anything is sent), drawn by weight.
 */
function workload(client: GatewayClient, plan: LoadPlan): () => Sendable {
  const { prices, budgets } = plan;
  const pools = plan.mix.map((m) =>
    prepare(
      m.api,
      { model: m.model ?? plan.model, stream: plan.stream, maxTokens: plan.maxTokens, prompts: plan.prompts },
      client.validate,
    ).map((p): Sendable => ({
      ...p,
      request: client.prepare({ method: 'POST', path: p.path, json: true, stream: p.stream }),
      ...(prices !== undefined && budgets !== undefined ? { bound: requestBound(p, prices, budgets) } : {}),
    })),
  );
  const weights = plan.mix.map((m) => m.weight);
  const total = weights.reduce((a, w) => a + w, 0);
  const random = seededRandom(plan.seed ^ 0x9e3779b9);
  const cursors = plan.mix.map(() => 0);
  return () => {
    let i = 0;
    if (weights.length > 1) {
      let x = random() * total;
      while (i < weights.length - 1 && x >= (weights[i] as number)) x -= weights[i++] as number;
    }
    const pool = pools[i] as Sendable[];
    const c = cursors[i] as number;
    cursors[i] = (c + 1) % pool.length;
    return pool[c] as Sendable;
  };
}

/** The values a run steps through, and what they set. */
function stepValues(plan: LoadPlan): { values: number[]; parameter: 'concurrency' | 'rate' } {
  const parameter = plan.sweep?.parameter ?? (plan.mode === 'open' ? 'rate' : 'concurrency');
  const values = plan.sweep?.values ?? [(plan.mode === 'open' ? plan.rate : plan.concurrency) as number];
  return { values, parameter };
}

/**
 * Step i of the plan, with value v. A shard's closed loop runs its share of the users and of the requests; its
 * open loop draws the whole schedule (every arrival, `requests` of them) and sends its own arrivals.
 */
function stepPlan(plan: LoadPlan, parameter: 'concurrency' | 'rate', v: number, i: number): StepPlan {
  const p: StepPlan = { mode: plan.mode, arrival: plan.arrival, seed: plan.seed + i };
  const closed = plan.mode === 'closed';
  if (parameter === 'rate') p.rate = v;
  else p.concurrency = shareOf(v, plan.shard);
  if (!closed) p.connections = plan.connections;
  if (!closed && plan.shard !== undefined) p.shard = plan.shard;
  if (plan.durationMs !== undefined) p.durationMs = plan.durationMs;
  if (plan.requests !== undefined) p.requests = closed ? shareOf(plan.requests, plan.shard) : plan.requests;
  if (plan.mode === 'closed') {
    // The closed loop's warm-up is the first step's own start (runner.ts); the open loop's runs before it.
    if (i === 0 && plan.warmup > 0) p.warmup = plan.warmup;
    if (plan.rampUpMs !== undefined) p.rampMs = plan.rampUpMs;
  }
  return p;
}

/** The live figures of a recorder (a step's, the warm-up's, a replay's). */
export function progress(label: string, warming: boolean, rec: Recorder, now: number): LoadProgress {
  const l = rec.live(now);
  return {
    label,
    warming,
    inFlight: l.inFlight,
    done: l.done,
    errors: l.errors,
    p50Ms: l.p50,
    p95Ms: l.p95,
    requestsPerS: l.rps,
  };
}

/** The warm-up (open loop), then one step per value until the sweep ends, a stop, Ctrl-C or a 401/403. */
async function runSteps(
  plan: LoadPlan,
  base: Omit<StepContext, 'onAuthFailure'>,
  o: LoadOptions,
  startAt: number | undefined,
): Promise<Steps> {
  const { values, parameter } = stepValues(plan);
  const run: Steps = {
    steps: [],
    peaks: new Map(),
    localFailures: new Map(),
    stopped: null,
    authFailure: undefined,
  };
  const clock = base.target.clock;
  const ctx: StepContext = { ...base, onAuthFailure: (x) => (run.authFailure ??= x) };
  const tick = (label: string) => (rec: Recorder, warming: boolean) =>
    o.onProgress?.(progress(warming ? 'warm-up' : label, warming, rec, clock.now()));
  // The first step (the warm-up, when there is one) starts at --start-at's instant.
  let first = startAt !== undefined ? { startAt } : {};
  if (plan.mode === 'open' && plan.warmup > 0 && values.length > 0) {
    const warm: StepPlan = {
      ...stepPlan(plan, parameter, values[0] as number, 0),
      requests: plan.warmup,
      ...first,
    };
    first = {};
    delete warm.durationMs;
    await runStep(warm, { ...ctx, onTick: tick('warm-up') });
  }
  for (let i = 0; i < values.length && !ctx.signal.aborted && run.authFailure === undefined; i++) {
    const v = values[i] as number;
    const label = parameter === 'rate' ? `rate=${v}/s` : `concurrency=${v}`;
    const r = await runStep(
      { ...stepPlan(plan, parameter, v, i), ...(i === 0 ? first : {}) },
      {
        ...ctx,
        stopOn: plan.stopOn,
        onOutcome: o.onRequest !== undefined ? (x) => o.onRequest?.(label, x) : undefined,
        onTick: tick(values.length > 1 ? label : ''),
      },
    );
    if (!r.measured) break;
    // A shard's step records its share (merged shards add up to v); the label stays the run's.
    const share =
      parameter === 'rate' ? { rate: v / (plan.shard?.n ?? 1) } : { concurrency: shareOf(v, plan.shard) };
    const meta = { label, mode: plan.mode, ...share };
    const st = stepReport(r.rec, meta, plan.slo);
    run.steps.push(st);
    if (plan.mode === 'open') run.peaks.set(label, r.rec.peakInFlight);
    if (r.rec.localFailures > 0) run.localFailures.set(label, r.rec.localFailures);
    if (r.stopped !== undefined && r.stopped !== 'auth') {
      run.stopped = r.stopped;
      break;
    }
    const prev = run.steps[run.steps.length - 2];
    if (plan.stopOn?.saturation === true && prev !== undefined) {
      if (saturated(point(values[i - 1] as number, prev), point(v, st))) {
        run.stopped = 'saturation';
        break;
      }
    }
  }
  return run;
}

/** The client's error for the 401/403 that ended the run. */
export function authError(o: Outcome): GatewayError {
  const Cls = errorClassFor(o.status);
  return new Cls({
    status: o.status,
    code: o.code ?? 'unauthorized',
    message: `the gateway answered ${o.status} ${o.code ?? ''}`.trim(),
    requestId: o.requestId,
  });
}

/** The sweep's curve, its knee and the heaviest step meeting the SLO. */
function sweepOf(plan: LoadPlan, steps: StepReport[]): RunReport['sweep'] {
  const sweep = plan.sweep;
  if (sweep === undefined) return null;
  const value = (i: number): number => sweep.values[i] as number;
  const k = kneeIndex(steps.map((st, i) => point(value(i), st)));
  let best: { index: number; value: number } | null = null;
  steps.forEach((st, i) => {
    if (st.slo?.pass === true) best = { index: i, value: value(i) };
  });
  return {
    parameter: sweep.parameter,
    points: steps.map((st, i) => ({
      value: value(i),
      throughput_rps: st.ok_per_s,
      latency_p50_ms: st.latency_ms.e2e.p50,
      latency_p95_ms: st.latency_ms.e2e.p95,
      ttft_p95_ms: st.latency_ms.ttft.p95,
      error_rate: st.error_rate,
    })),
    knee: k !== undefined ? { index: k, value: value(k) } : null,
    best_within_slo: plan.slo !== undefined ? best : null,
  };
}

/** What a run's steps say the user should know: a client behind its schedule, answers without usage, … */
function warningsOf(plan: LoadPlan, run: Steps, openFiles: number | undefined): string[] {
  const warnings: string[] = [];
  for (const st of run.steps) {
    if (st.schedule.behind) warnings.push(behindWarning(st, run.peaks.get(st.label), plan.warmup));
    if (st.usage_missing > 0) {
      warnings.push(
        `${st.label}: ${st.usage_missing} answers reported no usage; their output tokens are not counted`,
      );
    }
    const local = run.localFailures.get(st.label);
    if (local !== undefined) warnings.push(openFilesWarning(st.label, local, openFiles));
    warnings.push(...spendWarnings(st));
  }
  return warnings;
}

/** The run's settings as the report records them. */
function configOf(plan: LoadPlan, timeoutMs: number): Record<string, unknown> {
  const open = plan.mode === 'open';
  const arrival = plan.arrival.kind === 'gamma' ? `gamma:${plan.arrival.cv}` : plan.arrival.kind;
  return {
    model: plan.model,
    mix: plan.mix,
    stream: plan.stream,
    mode: plan.mode,
    ...(plan.concurrency !== undefined ? { concurrency: plan.concurrency } : {}),
    ...(plan.rate !== undefined ? { rate: plan.rate } : {}),
    ...(open ? { arrival, connections: plan.connections } : {}),
    ...(plan.durationMs !== undefined ? { duration_ms: plan.durationMs } : {}),
    ...(plan.requests !== undefined ? { requests: plan.requests } : {}),
    ...(plan.sweep !== undefined ? { sweep: `${plan.sweep.parameter}=${plan.sweep.values.join(',')}` } : {}),
    warmup: plan.warmup,
    ...(plan.rampUpMs !== undefined ? { ramp_up_ms: plan.rampUpMs } : {}),
    prompts: plan.promptSource,
    max_tokens: plan.maxTokens,
    timeout_ms: timeoutMs,
    seed: plan.seed,
    ...(plan.slo !== undefined ? { slo: plan.slo.text } : {}),
    ...(plan.stopOn !== undefined ? { stop_on: plan.stopOn.text } : {}),
    ...(plan.prices !== undefined ? { prices: { sha256: pricesDigest(plan.prices) } } : {}),
    ...(plan.budgets !== undefined
      ? { budget: [...plan.budgets].map(([c, a]) => `${a}${c}`).join(',') }
      : {}),
  };
}

/**
 * The run's identity (core/shard.ts runId): a digest of what every shard of it is given (the gateway, the
 * settings, the prompts themselves, the --start-at instant) and its shard count.
 */
function runOf(plan: LoadPlan, target: string, config: Record<string, unknown>): string {
  const input = JSON.stringify({ target, config, prompts: plan.prompts, start_at: plan.startAt ?? null });
  return runId(createHash('sha256').update(input).digest('hex'), plan.shard?.n ?? 1);
}

function buildReport(
  plan: LoadPlan,
  run: Steps,
  meta: {
    target: string;
    originUnixMs: number;
    timeoutMs: number;
    interrupted: boolean;
    openFiles: number | undefined;
    lateMs: number | undefined;
  },
): RunReport {
  const { steps } = run;
  const sloPass =
    plan.slo === undefined || plan.slo.terms.length === 0
      ? true
      : plan.sweep !== undefined
        ? steps.some((st) => st.slo?.pass === true)
        : steps.every((st) => st.slo?.pass === true);
  const config = configOf(plan, meta.timeoutMs);
  const warnings = warningsOf(plan, run, meta.openFiles);
  const late = lateStartWarning(meta.lateMs);
  if (late !== undefined) warnings.push(late);
  if (run.stopped === 'budget')
    warnings.push(
      'stopped sending: the next request could have carried the spend past --budget (each request is held at its upper bound at --prices until its usage settles it)',
    );
  return {
    schema: SCHEMA,
    created_at: new Date().toISOString(),
    gw_version: GW_VERSION,
    target: meta.target,
    machines: 1,
    origin_unix_ms: meta.originUnixMs,
    ...(plan.shard !== undefined
      ? { shard: { shard: `${plan.shard.k}/${plan.shard.n}`, run: runOf(plan, meta.target, config) } }
      : {}),
    ...(plan.startAt !== undefined ? { start_at: { unix_ms: plan.startAt, late_ms: meta.lateMs ?? 0 } } : {}),
    config,
    interrupted: meta.interrupted,
    stopped: run.stopped,
    warnings,
    steps,
    ...runSpend(steps),
    sweep: sweepOf(plan, steps),
    slo: plan.slo !== undefined ? { expr: plan.slo.text, pass: sloPass } : null,
    glossary: TIMING_GLOSSARY,
  };
}

/** The warning of a run that started too late after --start-at to keep to it, if it did. */
export function lateStartWarning(lateMs: number | undefined): string | undefined {
  if (lateMs === undefined || lateMs <= START_SLACK_MS) return undefined;
  return `started ${(lateMs / 1000).toFixed(1)}s after --start-at: this machine ran its schedule from its own start`;
}

/**
 * The warning of a step whose client fell behind its schedule: how late, how many requests the open loop had in
 * flight at most (a connection each), and (without a warm-up) that opening those connections was measured.
 */
export function behindWarning(st: StepReport, inFlight: number | undefined, warmup: number): string {
  const conns = inFlight !== undefined ? `; up to ${inFlight} requests in flight, a connection each` : '';
  const hint =
    inFlight !== undefined
      ? `; ${warmup === 0 ? '--warmup <n> opens the connections before measuring, ' : ''}--connections <n> caps them`
      : '';
  const dropped =
    st.schedule.dropped > 0 ? `, ${st.schedule.dropped} arrivals never sent (dropped or still waiting)` : '';
  return `${st.label}: the client fell behind its schedule (${st.schedule.late} of ${st.requests} starts more than 10ms late, max ${st.schedule.lag_max_ms}ms${dropped}${conns}); latencies are still measured from the scheduled starts${hint}`;
}

/** The warning of a step whose requests failed for want of file descriptors (this machine's limit, not the gateway). */
function openFilesWarning(label: string, failures: number, limit: number | undefined): string {
  return `${label}: open-files limit reached (ulimit -n ${limit ?? '?'}): ${failures} requests failed before they were sent; raise it (e.g. ulimit -n 65536) or lower --concurrency / --connections`;
}

/** This process's limit of open files (Linux: /proc/self/limits), if it can be read. */
function openFilesLimit(): number | undefined {
  try {
    const text = readFileSync('/proc/self/limits', 'utf8');
    const m = /^Max open files\s+(\d+)/m.exec(text);
    return m !== null ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
