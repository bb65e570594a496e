/**
 * `gw load` from checked flags to the report: warm-up, one step per sweep value (or one step), the knee, SLO and
 * baseline verdicts, and the outputs (table or JSON on stdout, --out JSON, --csv rows). Returns the exit code:
 * 130 when interrupted (after the partial report), 1 when the SLO was missed, the baseline regressed, or no
 * request at all succeeded, else 0.
 */
import { createWriteStream, openSync, readFileSync, type WriteStream } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'undici';
import type { Context } from '../cli/context.js';
import { NEVER_CONNECTED_CODES } from '../client/network-errors.js';
import { ConfigError, ExitCode, UsageError } from '../core/errors.js';
import { seededRandom } from './arrivals.js';
import { compareReports, renderComparison } from './compare.js';
import type { Outcome, Target } from './exchange.js';
import { perRequestTerms } from './expr.js';
import { kneeIndex, saturated, type CurvePoint } from './knee.js';
import { LiveLine } from './live.js';
import type { LoadSpec } from './options.js';
import { csvLine, CSV_HEAD, stepLines, stepReport, tableRows } from './report.js';
import { checkReportPath, writeReportFile } from '../report/output.js';
import { runStep, type StepPlan } from './runner.js';
import { SCHEMA, type RunReport, type StepReport } from './schema.js';
import { prepare, type Prepared } from './workload.js';

/** Version written into reports. */
const GW_VERSION = '0.1.0';

/** Reads a report written by `gw load --out` (exit 2 when it is not one). */
export function readReport(path: string, flag: string): RunReport {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    const why =
      e instanceof SyntaxError
        ? 'is not JSON'
        : `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
    throw new UsageError(`${flag}: ${path} ${why}`, { field: flag });
  }
  const r = doc as Partial<RunReport> | null;
  if (r === null || typeof r !== 'object' || r.schema !== SCHEMA || !Array.isArray(r.steps)) {
    throw new UsageError(`${flag}: ${path} is not a gw load report (schema ${SCHEMA})`, { field: flag });
  }
  return r as RunReport;
}

function point(value: number, st: StepReport): CurvePoint {
  return { value, throughput: st.ok_per_s, latencyMs: st.latency_ms.e2e.p50 };
}

/** Runs a load test; prints the report; returns the exit code. */
export async function runLoad(
  ctx: Context,
  spec: LoadSpec,
  /** Also handed the finished report (`--html`). */
  onReport?: (report: RunReport) => Promise<void>,
): Promise<number> {
  const settings = ctx.settings();
  if (settings.baseUrl === undefined) {
    throw new ConfigError('no gateway base URL', {
      hint: 'pass --base-url, set GW_BASE_URL, or run `gw login`',
    });
  }
  if (settings.token === undefined || settings.token === '') {
    throw new ConfigError('no gateway token', { hint: 'set GW_TOKEN, or run `gw login`' });
  }
  ctx.redactor.add(settings.token);
  let base: URL;
  try {
    base = new URL(settings.baseUrl);
  } catch {
    throw new ConfigError(`base URL "${settings.baseUrl}" is not a URL`, {
      hint: 'use e.g. https://gateway.example.com',
    });
  }
  const baseline = spec.baseline !== undefined ? readReport(spec.baseline, '--baseline') : undefined;
  const validate = ctx.globals.validate;
  const pools = spec.mix.map((m) =>
    prepare(
      m.api,
      { model: m.model ?? spec.model, stream: spec.stream, maxTokens: spec.maxTokens, prompts: spec.prompts },
      validate,
    ),
  );
  const totalWeight = spec.mix.reduce((a, m) => a + m.weight, 0);
  const random = seededRandom(spec.seed ^ 0x9e3779b9);
  const cursors = spec.mix.map(() => 0);
  const next = (): Prepared => {
    let i = 0;
    if (spec.mix.length > 1) {
      let x = random() * totalWeight;
      while (i < spec.mix.length - 1 && x >= (spec.mix[i] as { weight: number }).weight) {
        x -= (spec.mix[i] as { weight: number }).weight;
        i++;
      }
    }
    const pool = pools[i] as Prepared[];
    const c = cursors[i] as number;
    cursors[i] = (c + 1) % pool.length;
    return pool[c] as Prepared;
  };

  const maxConcurrency = Math.max(
    spec.concurrency ?? 0,
    ...(spec.sweep?.parameter === 'concurrency' ? spec.sweep.values : []),
  );
  const timeoutMs = settings.timeoutMs;
  // undici's own header and body timers are off (0): a timer re-armed on every request and every body chunk is
  // a cost per request, and Flight (exchange.ts) already ends each request at its deadline.
  const connection = { pipelining: 1, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 };
  const dispatcher = new Pool(base.origin, {
    ...connection,
    connections: spec.mode === 'closed' ? maxConcurrency : spec.connections,
  });
  // The closed loop: each virtual user its own connection, kept across the warm-up and the sweep's steps.
  const lanes: Client[] = [];
  const lane = (i: number): Client => (lanes[i] ??= new Client(base.origin, connection));
  const headers = {
    authorization: `Bearer ${settings.token}`,
    'content-type': 'application/json',
    'user-agent': 'gw-load/0.1',
  };
  const target: Target = {
    dispatcher,
    ...(spec.mode === 'closed' ? { lane } : {}),
    prefix: base.pathname.replace(/\/+$/, ''),
    headers: {
      stream: { ...headers, accept: 'text/event-stream' },
      plain: { ...headers, accept: 'application/json' },
    },
    timeoutMs,
  };
  if (base.protocol === 'http:' && !/^(localhost|127\.|\[::1\])/.test(base.host)) {
    ctx.out.warn(`the token travels unencrypted over http to ${base.host}; use https`);
  }

  // Files are checked before anything is sent: a run must not end in an unwritable report.
  if (spec.out !== undefined) checkReportPath(spec.out, 'out');
  let csv: WriteStream | undefined;
  let csvStep = '';
  if (spec.csv !== undefined) {
    let fd: number;
    try {
      fd = openSync(spec.csv, 'w');
    } catch (e) {
      throw new UsageError(
        `--csv: cannot write ${spec.csv} (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
        {
          field: '--csv',
        },
      );
    }
    csv = createWriteStream('', { fd });
    csv.on('error', (e) => ctx.out.warn(`--csv: ${e.message}`));
    csv.write(csvLine(CSV_HEAD));
  }
  const onOutcome = csv
    ? (o: Outcome): void => {
        const tpot =
          o.ok && o.ttftMs !== undefined && o.outputTokens !== undefined && o.outputTokens > 1
            ? (o.e2eMs - o.ttftMs) / (o.outputTokens - 1)
            : undefined;
        csv.write(
          csvLine([
            csvStep,
            o.startMs,
            o.api,
            String(o.stream),
            String(o.ok),
            o.status,
            o.code,
            o.requestId,
            o.ttftMs,
            o.e2eMs,
            tpot,
            o.outputTokens,
            o.lagMs,
          ]),
        );
      }
    : undefined;

  const live = new LiveLine(ctx.out, ctx.progress.enabled);
  const goodTerms = perRequestTerms(spec.slo);
  const origin = performance.now();
  let authFailure: Outcome | undefined;
  const steps: StepReport[] = [];
  const openConnections = new Map<string, number>();
  let stopped: string | null = null;
  const values = spec.sweep?.values ?? [
    spec.sweep === undefined && spec.mode === 'open' ? (spec.rate as number) : (spec.concurrency as number),
  ];
  const parameter = spec.sweep?.parameter ?? (spec.mode === 'open' ? 'rate' : 'concurrency');
  const planFor = (v: number, i: number): StepPlan => {
    const p: StepPlan = { mode: spec.mode, arrival: spec.arrival, seed: spec.seed + i };
    if (parameter === 'rate') p.rate = v;
    else p.concurrency = v;
    if (spec.durationMs !== undefined) p.durationMs = spec.durationMs;
    if (spec.requests !== undefined) p.requests = spec.requests;
    if (spec.mode === 'closed') {
      // The closed loop's warm-up is the first step's own start (runner.ts); the open loop's runs before it.
      if (i === 0 && spec.warmup > 0) p.warmup = spec.warmup;
      if (spec.rampUpMs !== undefined) p.rampMs = spec.rampUpMs;
    }
    return p;
  };
  const common = {
    target,
    next,
    signal: ctx.signal,
    goodTerms,
    onAuthFailure: (o: Outcome) => (authFailure ??= o),
    origin,
  };
  try {
    if (spec.mode === 'open' && spec.warmup > 0 && values.length > 0) {
      const first = planFor(values[0] as number, 0);
      const warm: StepPlan = { ...first, requests: spec.warmup };
      delete warm.durationMs;
      await runStep(warm, { ...common, onTick: (rec) => live.update('warm-up: ', rec) });
    }
    for (let i = 0; i < values.length && !ctx.signal.aborted && authFailure === undefined; i++) {
      const v = values[i] as number;
      const label = parameter === 'rate' ? `rate=${v}/s` : `concurrency=${v}`;
      csvStep = label;
      const {
        rec,
        stopped: why,
        measured,
      } = await runStep(planFor(v, i), {
        ...common,
        stopOn: spec.stopOn,
        ...(onOutcome ? { onOutcome } : {}),
        onTick: (r, warming) => live.update(warming ? 'warm-up: ' : values.length > 1 ? `${label}: ` : '', r),
      });
      if (!measured) break;
      const meta: { label: string; mode: 'closed' | 'open'; concurrency?: number; rate?: number } = {
        label,
        mode: spec.mode,
      };
      if (parameter === 'rate') meta.rate = v;
      else meta.concurrency = v;
      const st = stepReport(rec, meta, spec.slo);
      steps.push(st);
      // The open loop's pool opens a connection for each request that finds none free: a client that fell
      // behind (cold code, a rate beyond it) opens many, and says how many.
      if (spec.mode === 'open') openConnections.set(st.label, dispatcher.stats.connected);
      if (why !== undefined && why !== 'auth') {
        stopped = why;
        break;
      }
      if (spec.stopOn?.saturation === true && steps.length >= 2) {
        const prev = steps[steps.length - 2] as StepReport;
        if (saturated(point(values[i - 1] as number, prev), point(v, st))) {
          stopped = 'saturation';
          break;
        }
      }
    }
  } finally {
    live.clear();
    await Promise.all([dispatcher, ...lanes].map((d) => d.destroy().catch(() => {})));
    if (csv) await new Promise<void>((resolve) => csv.end(resolve));
  }
  if (authFailure !== undefined) {
    throw new ConfigError(`the gateway answered ${authFailure.status} ${authFailure.code ?? ''}`.trim(), {
      code: authFailure.code ?? 'unauthorized',
      requestId: authFailure.requestId,
      hint: 'check the token (GW_TOKEN or the profile) and its access to this model',
    });
  }

  const interrupted = ctx.signal.aborted;
  const warnings: string[] = [];
  for (const st of steps) {
    if (st.schedule.behind) {
      warnings.push(behindWarning(st, openConnections.get(st.label), spec.warmup));
    }
    if (st.usage_missing > 0) {
      warnings.push(
        `${st.label}: ${st.usage_missing} answers reported no usage; their output tokens are not counted`,
      );
    }
  }
  let sweep: RunReport['sweep'] = null;
  if (spec.sweep !== undefined) {
    const pts = steps.map((st, i) => point(spec.sweep?.values[i] as number, st));
    const k = kneeIndex(pts);
    let best: { index: number; value: number } | null = null;
    steps.forEach((st, i) => {
      if (st.slo?.pass === true) best = { index: i, value: spec.sweep?.values[i] as number };
    });
    sweep = {
      parameter: spec.sweep.parameter,
      points: steps.map((st, i) => ({
        value: spec.sweep?.values[i] as number,
        throughput_rps: st.ok_per_s,
        latency_p50_ms: st.latency_ms.e2e.p50,
        latency_p95_ms: st.latency_ms.e2e.p95,
        ttft_p95_ms: st.latency_ms.ttft.p95,
        error_rate: st.error_rate,
      })),
      knee: k !== undefined ? { index: k, value: spec.sweep.values[k] as number } : null,
      best_within_slo: spec.slo !== undefined ? best : null,
    };
  }
  const sloPass =
    spec.slo === undefined || spec.slo.terms.length === 0
      ? true
      : spec.sweep !== undefined
        ? steps.some((st) => st.slo?.pass === true)
        : steps.every((st) => st.slo?.pass === true);
  const report: RunReport = {
    schema: SCHEMA,
    created_at: new Date().toISOString(),
    gw_version: GW_VERSION,
    target: base.origin + target.prefix,
    machines: 1,
    origin_unix_ms: Math.round((performance.timeOrigin + origin) * 1000) / 1000,
    config: {
      model: spec.model,
      mix: spec.mix,
      stream: spec.stream,
      mode: spec.mode,
      ...(spec.concurrency !== undefined ? { concurrency: spec.concurrency } : {}),
      ...(spec.rate !== undefined ? { rate: spec.rate } : {}),
      ...(spec.mode === 'open'
        ? {
            arrival: spec.arrival.kind === 'gamma' ? `gamma:${spec.arrival.cv}` : spec.arrival.kind,
            connections: spec.connections,
          }
        : {}),
      ...(spec.durationMs !== undefined ? { duration_ms: spec.durationMs } : {}),
      ...(spec.requests !== undefined ? { requests: spec.requests } : {}),
      ...(spec.sweep !== undefined
        ? { sweep: `${spec.sweep.parameter}=${spec.sweep.values.join(',')}` }
        : {}),
      warmup: spec.warmup,
      ...(spec.rampUpMs !== undefined ? { ramp_up_ms: spec.rampUpMs } : {}),
      prompts: spec.promptSource,
      max_tokens: spec.maxTokens,
      timeout_ms: timeoutMs,
      seed: spec.seed,
      ...(spec.slo !== undefined ? { slo: spec.slo.text } : {}),
      ...(spec.stopOn !== undefined ? { stop_on: spec.stopOn.text } : {}),
    },
    interrupted,
    stopped,
    warnings,
    steps,
    sweep,
    slo: spec.slo !== undefined ? { expr: spec.slo.text, pass: sloPass } : null,
  };
  if (spec.out !== undefined)
    await writeReportFile(spec.out, `${JSON.stringify(report)}\n`, 'the load report');
  await onReport?.(report);
  for (const w of warnings) ctx.out.warn(w);
  if (ctx.globals.json) ctx.out.json(report);
  else await printReport(ctx, report);

  let code: number = ExitCode.ok;
  if (!sloPass) code = ExitCode.failure;
  if (steps.length > 0 && steps.every((st) => st.ok === 0) && !interrupted) {
    ctx.out.warn(`no request succeeded${unreachable(steps, base.origin)}`);
    code = ExitCode.failure;
  }
  if (baseline !== undefined) {
    const cmp = compareReports(baseline, report, spec.tolerance);
    if (!ctx.globals.json) await renderComparison(ctx, cmp);
    else if (!cmp.pass)
      ctx.out.warn(`regressed against the baseline: ${cmp.regressions.map((r) => r.what).join(', ')}`);
    if (!cmp.pass) code = ExitCode.failure;
  }
  if (interrupted) {
    ctx.out.note('interrupted: the report above is partial');
    return ExitCode.interrupted;
  }
  return code;
}

/** The human report: a summary per step, the latency table, the sweep curve and knee, the SLO verdict. */
export async function printReport(ctx: Context, report: RunReport): Promise<void> {
  for (const st of report.steps) {
    if (report.steps.length > 1) ctx.out.line(`${st.label}`);
    ctx.out.keyValue(stepLines(st));
  }
  const t = tableRows(report);
  await ctx.out.table(t.head, t.rows);
  if (report.sweep !== null) {
    await ctx.out.table(
      [report.sweep.parameter, 'ok req/s', 'e2e p50', 'e2e p95', 'ttft p95', 'errors'],
      report.sweep.points.map((p, i) => [
        `${p.value}${report.sweep?.knee?.index === i ? ' (knee)' : ''}`,
        p.throughput_rps.toFixed(2),
        `${p.latency_p50_ms.toFixed(1)}ms`,
        `${p.latency_p95_ms.toFixed(1)}ms`,
        p.ttft_p95_ms > 0 ? `${p.ttft_p95_ms.toFixed(1)}ms` : '-',
        `${(p.error_rate * 100).toFixed(1)}%`,
      ]),
    );
    const k = report.sweep.knee;
    ctx.out.line(
      k !== null
        ? `knee: ${report.sweep.parameter} ${k.value}`
        : 'knee: not found (needs 3 steps with successes)',
    );
    if (report.sweep.best_within_slo !== null) {
      ctx.out.line(
        `heaviest step meeting the SLO: ${report.sweep.parameter} ${report.sweep.best_within_slo.value}`,
      );
    }
  }
  if (report.stopped !== null) ctx.out.line(`stopped early: ${report.stopped}`);
  if (report.slo !== null) ctx.out.line(`slo ${report.slo.expr}: ${report.slo.pass ? 'met' : 'MISSED'}`);
}

/** When every failure of a run is a gateway nobody reached: what to check (else empty). */
function unreachable(
  steps: ReadonlyArray<{ errors_by_code: Record<string, number> }>,
  origin: string,
): string {
  const codes = new Set(steps.flatMap((st) => Object.keys(st.errors_by_code)));
  if (codes.size === 0 || ![...codes].every((c) => NEVER_CONNECTED_CODES.has(c))) return '';
  return `: nothing answered at ${origin} (${[...codes].join(', ')}); is the gateway up, and the base URL right?`;
}

/**
 * The warning of a step whose client fell behind its schedule: how late, how many connections the open loop had
 * open at its end, and (without a warm-up) that opening them was measured.
 */
export function behindWarning(st: StepReport, connections: number | undefined, warmup: number): string {
  const conns = connections !== undefined ? `; ${connections} connections open at its end` : '';
  const hint =
    connections !== undefined
      ? `; ${warmup === 0 ? '--warmup <n> opens the connections before measuring, ' : ''}--connections <n> caps them`
      : '';
  return `${st.label}: the client fell behind its schedule (${st.schedule.late} of ${st.requests} starts more than 10ms late, max ${st.schedule.lag_max_ms}ms${conns}); latencies are still measured from the scheduled starts${hint}`;
}
