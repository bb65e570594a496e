import type { Context } from '../../cli/context.js';
import { DEFAULT_PROBE_KINDS } from '../../contract/model-kinds.js';
import type { CommandLike } from '../../report/index.js';
import type { Flags } from '../../cli/verb.js';
import type { probeFlags } from './index.js';
import type { GatewayClient } from '../../client/gateway-client.js';
// Every probe needs the client (undici), which ctx.client() imports: loaded with this module, its file reads overlap
// the probe's own, and ctx.client() finds it loaded.
import '../../client/gateway-client.js';
import { loadProbeSim, startFullProbeSim, type ProbeSim } from '../../probe/sim.js';
import {
  askOf,
  runProbe,
  type AllModelsSettings,
  type ProbeOptions,
  type ProbeSinks,
} from '../../probe/probe.js';
import * as runner from '../../probe/runner.js';
import * as b from '../../probe/baseline.js';
import { appendHistory, readHistory, toHistoryRun } from '../../probe/history.js';
import { LiveLines, printTable, summaryLine } from '../../probe/report.js';
import { asProbeReport, probeReportSchema } from '../../probe/report-schema.js';
import { stateDir } from '../../core/paths.js';
import { readJsonDocument } from '../../core/json-file.js';
import { prepareReportPath } from '../../report/output.js';
import { writeJUnit } from '../../report/junit.js';
import type { ProbeAsk, ProbeReport, Selection } from '../../probe/runner.js';
import { UsageError } from '../../core/errors.js';
import { readPrices } from '../shared/prices.js';
import type { WatchSettings } from '../../probe/watch-command.js';
import { startOtlp } from '../shared/otlp.js';

type ProbeFlags = Flags<typeof probeFlags>;

/** An image the simulator accepts as public (it never fetches it). */
const SIM_PROBE_IMAGE = 'https://example.com/gw-probe.png';

/** Runs the checklist (once, or every --every). Every flag was parsed and checked before this module loaded. */
export default async function run(ctx: Context, f: ProbeFlags): Promise<number> {
  // The simulator's code loads at once (its file reads overlap the checks' set-up).
  const simCode = f.sim === true && f.allModels !== true ? loadProbeSim() : undefined;
  simCode?.catch(() => {}); // awaited below; must not count as unhandled first
  const watching = f.every !== undefined;
  const selection = selectionOf(f, watching);
  // The report paths are checked before any request (a missing directory is exit 2).
  if (f.junit !== undefined) prepareReportPath(f.junit, 'junit');
  const writeHtml = f.html !== undefined ? await htmlWriter(ctx, f.html) : undefined;
  const sim =
    f.allModels === true && f.sim === true ? await startFullProbeSim() : await (await simCode)?.start();
  try {
    // Fail on configuration (exit 3) before any check runs.
    await startOtlp(ctx, f.otlp);
    const client = await ctx.client(sim ? { baseUrl: sim.baseUrl, tokenValue: sim.token } : {});
    const options = probeOptions(ctx, f, { selection, client, sim });
    // Read (and a file checked) before any request: a baseline of another gateway or other checks is exit 2.
    if (f.prices !== undefined) options.prices = await readPrices(f.prices, ctx.signal);
    if (f.baseline !== undefined)
      options.baseline = await baselineOf(ctx, f, f.baseline, askOf(options), client);
    const record = f.history && f.sim !== true ? historyWriter(ctx) : undefined;
    const runOnce = async (sinks: ProbeSinks = {}): Promise<ProbeReport> => {
      const report = await runProbe({ ...options, sinks: { ...options.sinks, ...sinks } });
      if (sim === undefined) journalStates(ctx, report);
      sim?.clearLog?.();
      return report;
    };
    if (f.every !== undefined)
      return await watchRuns(ctx, watchSettings(f, f.every), client.baseUrl, runOnce, record);
    const result = await runWithLiveLines(ctx, f, selection, runOnce);
    record?.(result);
    if (f.junit !== undefined) await writeJUnit(f.junit, result);
    await writeHtml?.(result, result.gateway);
    await ctx.out.result(result, (r) => printTable(ctx.out, r));
    return runner.exitCodeOf(result, f.failOn ?? 'failures');
  } finally {
    await sim?.close();
  }
}

/** The checks to run; a watch leaves out the video (a paid video every run) unless --only names it. */
function selectionOf(f: ProbeFlags, watching: boolean): Selection {
  const selection = runner.selectChecks({
    extended: f.extended === true,
    only: f.only ?? [],
    skip: f.skip ?? [],
  });
  if (watching && selection.run.has('video') && f.only?.includes('video') !== true) {
    selection.run.delete('video');
    selection.skipReason.set(
      'video',
      'skipped in a watch: each run would create a paid video (--only video to include it)',
    );
  }
  return selection;
}

/** The library's options from the flags: what runs, with which models and bounds, and where it reports. */
function probeOptions(
  ctx: Context,
  f: ProbeFlags,
  o: { selection: Selection; client: GatewayClient; sim: ProbeSim | undefined },
): ProbeOptions {
  const { sim } = o;
  const plan = runner.planModels({ models: f.model, ...f }, ctx.settings().profile.probe, o.selection.run);
  return {
    client: o.client,
    selection: o.selection,
    plan,
    ...(f.allModels === true ? { allModels: allModelsSettings(f) } : {}),
    ...(f.slo !== undefined ? { slo: f.slo } : {}),
    ...(f.warnSlo !== undefined ? { warnSlo: f.warnSlo } : {}),
    videoTimeoutMs: f.videoTimeout,
    videoPoll: sim ? { initialMs: 150, maxMs: 400 } : { initialMs: 1000, maxMs: 15_000 },
    signal: ctx.signal,
    ...(sim !== undefined
      ? { prepare: async (c) => (c.family !== undefined ? sim.ready(c.family) : undefined) }
      : {}),
    sinks: {
      // A watch prints one line per run, not the notes of each.
      note: (text) => (f.every === undefined ? ctx.out.note(text) : undefined),
      // A simulator's videos vanish with it: only a real gateway's are journaled.
      created: (kind, id, model, requestId) => {
        if (sim === undefined) ctx.recordCreated(o.client, { kind, id, model, requestId });
      },
    },
  };
}

function allModelsSettings(f: ProbeFlags): AllModelsSettings {
  return {
    kinds: f.kind ?? DEFAULT_PROBE_KINDS,
    skipGlobs: f.skipModel ?? [],
    bothStreamModes: f.bothStreamModes === true,
    budget: f.budget ?? new Map(),
    allowUnpriced: f.allowUnpriced === true,
    probeImage: f.probeImage ?? (f.sim === true ? SIM_PROBE_IMAGE : undefined),
    rowTimeoutMs: f.modelTimeout ?? 60_000,
  };
}

/** One run; on a terminal, live lines per check (or one spinner line for --all-models) on stderr meanwhile. */
async function runWithLiveLines(
  ctx: Context,
  f: ProbeFlags,
  selection: Selection,
  runOnce: (sinks?: ProbeSinks) => Promise<ProbeReport>,
): Promise<ProbeReport> {
  if (!ctx.progress.enabled) return runOnce();
  if (f.allModels === true) {
    const spinner = await ctx.progress.spinner('probing the model list');
    let done = 0;
    return runOnce({ finish: (r) => spinner.update(`${++done} rows done; ${r.id}: ${r.status}`) }).finally(
      () => spinner.stop(),
    );
  }
  const live = new LiveLines(
    (s) => ctx.out.io.stderr.write(s),
    selection.listed.map((c) => c.id),
    ctx.out.io.stderr.columns,
  );
  live.start();
  return runOnce({
    note: (text) => live.log(text),
    start: (c) => live.set(c.id, 'running'),
    update: (c, text) => live.set(c.id, text),
    finish: (r) => live.set(r.id, r.detail, r.status),
  }).finally(() => live.stop());
}

function watchSettings(f: ProbeFlags, intervalMs: number): WatchSettings {
  return {
    intervalMs,
    metricsHost: f.metricsHost ?? '127.0.0.1',
    alertAfter: f.alertAfter ?? 3,
    ...(f.metricsPort !== undefined ? { metricsPort: f.metricsPort } : {}),
    ...(f.metricsFile !== undefined ? { metricsFile: f.metricsFile } : {}),
    ...(f.webhook !== undefined ? { webhook: f.webhook } : {}),
  };
}

/** `--every`: a run per interval until Ctrl-C or SIGTERM; one line (or one JSON document) per run. */
async function watchRuns(
  ctx: Context,
  settings: WatchSettings,
  gateway: string,
  runOnce: () => Promise<ProbeReport>,
  record: ((r: ProbeReport) => void) | undefined,
): Promise<number> {
  // The watch brings the metrics endpoint (prom-client): loaded only for --every.
  const { runWatch } = await import('../../probe/watch-command.js');
  const end = await runWatch({
    settings,
    gateway,
    signal: ctx.signal,
    runOnce: () => runOnce(),
    afterRun: (r) => {
      record?.(r);
      if (ctx.globals.json) return ctx.out.ndjson(r);
      ctx.out.line(`${r.startedAt} ${summaryLine(r)}`);
      for (const c of r.checks) if (c.status === 'fail') ctx.out.line(`  FAIL ${c.id}: ${c.detail}`);
    },
    redact: (t) => ctx.redactor.redact(t),
    note: (t) => ctx.out.note(t),
    warn: (t) => ctx.out.warn(t),
  });
  const hook =
    end.webhook !== undefined
      ? `; webhook: ${end.webhook.delivered} delivered, ${end.webhook.dropped} dropped`
      : '';
  ctx.out.note(`probe: stopped after ${end.runs} run${end.runs === 1 ? '' : 's'}${hook}`);
  return 0;
}

/** The default of --tolerance: a probe takes one sample per cell, so latency gets a wide allowance. */
const DEFAULT_BASELINE_TOLERANCE = 0.2;

/**
 * `--baseline <file|last>`: the run to compare with. A file is a `gw probe --json` report, checked with the
 * report's schema, of this gateway and asking the same (else exit 2); `last` is this gateway's latest run in the
 * history that asked the same, or the reason there is none (the run is then judged without a comparison).
 */
async function baselineOf(
  ctx: Context,
  f: ProbeFlags,
  source: string,
  asked: ProbeAsk,
  client: GatewayClient,
): Promise<NonNullable<ProbeOptions['baseline']>> {
  const gateway = client.baseUrl;
  const tolerance = f.tolerance ?? DEFAULT_BASELINE_TOLERANCE;
  if (source === 'last') {
    const found = b.lastComparable(readHistory(stateDir(ctx.io.env)), gateway, asked);
    return 'run' in found
      ? { source, tolerance, run: b.baselineOfHistory(found.run, source) }
      : { source, tolerance, reason: found.reason };
  }
  const doc = await readJsonDocument(source, probeReportSchema, '--baseline', ctx.signal);
  const run = b.baselineOfReport(asProbeReport(doc), source);
  const why = b.incomparable(run, gateway, asked);
  if (why !== undefined) throw new UsageError(`--baseline: ${source}: ${why}`, { field: '--baseline' });
  return { source, tolerance, run };
}

/** The journal keeps the last state of what a run created and followed (`gw history`). */
function journalStates(ctx: Context, report: ProbeReport): void {
  for (const c of report.checks) {
    const state = typeof c.data?.state === 'string' ? c.data.state : undefined;
    if (state === undefined) continue;
    if (typeof c.data?.videoId === 'string') ctx.journal().update('video', c.data.videoId, state);
    else if (typeof c.data?.taskId === 'string') ctx.journal().update('beta-task', c.data.taskId, state);
  }
}

/** `--html`: the path is checked now; the returned function writes the report of a run. */
async function htmlWriter(
  ctx: Context,
  file: string,
): Promise<(r: ProbeReport, gateway: string) => Promise<void>> {
  // The HTML reports (their charts, hdr-histogram) load only for --html.
  const html = await import('../../report/index.js');
  return html.htmlReport(file, ctx.command as CommandLike, html.probeHtml, ctx.redactor);
}

/** Appends each run to the probe history (a failure to write is a warning: the probe's answer matters more). */
function historyWriter(ctx: Context): (r: ProbeReport) => void {
  const dir = stateDir(ctx.io.env);
  return (r) => {
    const problem = appendHistory(dir, toHistoryRun(r));
    if (problem !== undefined) ctx.out.warn(problem);
  };
}
