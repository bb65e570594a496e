/**
 * `gw load`: the verb around the engine (load/run.ts, load/video.ts). Everything that can refuse the run is
 * checked before anything is sent (the flags by their schema; here the output paths, the baseline and the prompts
 * file); then the engine runs with the client, Ctrl-C's signal and sinks for the live line and the CSV rows, and
 * the verb writes --out, --html and prints. Exit codes: 130 when interrupted (after the partial report), 1 when
 * the SLO was missed, the baseline regressed, or no request succeeded, else 0.
 */
import { hostname } from 'node:os';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import type { GatewayClient } from '../../client/gateway-client.js';
import { ExitCode } from '../../core/errors.js';
import { LOCAL_LIMITS, readLocalFile } from '../../core/local-file.js';
import { minVideoSecondsFor } from '../../contract/video.js';
import { compareReports } from '../../load/compare.js';
import { resolveShard, type Shard } from '../../core/shard.js';
import { resolvePlan, type LoadPlanInput } from '../../load/plan.js';
// Static, like every module the handler needs after a run: one that met the open-files limit could not open it.
import { noSuccess } from '../../load/report.js';
import type { RemoteWrite } from '../../load/remote-write.js';
import type { RunReport } from '../../load/schema.js';
import { runReplay, type TraceSummary } from '../../load/replay.js';
import { runLoad } from '../../load/run.js';
import {
  runVideoLoad,
  videoPricing,
  VIDEO_DEFAULTS,
  VIDEO_PROMPT,
  type VideoPlan,
} from '../../load/video.js';
import { parsePrompts, type Prompt, type TextApi } from '../../load/workload.js';
import { checkReportPath, writeReportFile } from '../../report/output.js';
import { CsvFile } from './csv.js';
import { DEFAULT_TOLERANCE } from './flags.js';
import type { loadFlags } from './index.js';
import { LiveLine } from './live.js';
import { printComparison, printReport } from './print.js';
import { readReport } from './reports.js';
import { commandOf } from './shared.js';
import { startOtlp } from '../shared/otlp.js';
import { readPrices } from '../shared/prices.js';
import type { PriceTable } from '../../contract/prices.js';

type LoadFlags = Flags<typeof loadFlags>;

/** What the run writes besides stdout, each checked before anything is sent. */
interface Outputs {
  out: string | undefined;
  html: ((r: RunReport) => Promise<void>) | undefined;
}

async function outputs(ctx: Context, f: LoadFlags): Promise<Outputs> {
  const out = f.out !== undefined ? checkReportPath(f.out, 'out') : undefined;
  if (f.html === undefined) return { out, html: undefined };
  const h = await import('../../report/index.js');
  const write = h.htmlReport(f.html, commandOf(ctx), h.loadHtml, ctx.redactor);
  return { out, html: (r) => write(r, r.target) };
}

/** Writes the report files and prints the report (JSON with --json) after its warnings. */
async function deliver(ctx: Context, o: Outputs, report: RunReport): Promise<void> {
  if (o.out !== undefined) await writeReportFile(o.out, `${JSON.stringify(report)}\n`, 'the load report');
  await o.html?.(report);
  for (const w of report.warnings) ctx.out.warn(w);
  await ctx.out.result(report, (r) => printReport(ctx, r));
}

/** The prompts of --prompts (read with the size cap and Ctrl-C of every local input), if given. */
async function prompts(ctx: Context, path: string | undefined): Promise<Prompt[] | undefined> {
  if (path === undefined) return undefined;
  const bytes = await readLocalFile(path, {
    flag: '--prompts',
    field: '--prompts',
    limit: LOCAL_LIMITS.body,
    signal: ctx.signal,
  });
  return parsePrompts(bytes.toString('utf8'), path);
}

/** `gw load`. */
export default async function load(ctx: Context, f: LoadFlags): Promise<number> {
  if (f.replay !== undefined) return loadReplay(ctx, f, f.replay);
  return f.api === 'video' ? loadVideo(ctx, f) : loadText(ctx, f);
}

function textPlan(f: LoadFlags, given: Prompt[] | undefined, shard: Shard | undefined): LoadPlanInput {
  // The schema leaves video to loadVideo: here the api is a text one.
  const api = (f.api ?? 'chat') as TextApi;
  return {
    model: (f.model as string).trim(),
    mix: f.mix ?? [{ api, weight: 1 }],
    stream: f.stream,
    concurrency: f.concurrency,
    rate: f.rate,
    arrival: f.arrival,
    durationMs: f.duration,
    requests: f.requests,
    sweep: f.sweep,
    warmup: f.warmup,
    rampUpMs: f.rampUp,
    connections: f.connections,
    prompts: given,
    promptWords: f.promptWords,
    promptSource: f.prompts !== undefined ? `file ${f.prompts}` : undefined,
    maxTokens: f.maxTokens,
    slo: f.slo,
    stopOn: f.stopOn,
    seed: f.seed,
    shard,
    startAt: f.startAt,
    budgets: f.budget,
  };
}

/** The price table of --prices, read and checked before anything is sent. */
function prices(ctx: Context, f: LoadFlags): Promise<PriceTable | undefined> {
  return f.prices !== undefined ? readPrices(f.prices, ctx.signal) : Promise.resolve(undefined);
}

/** The --csv file (its header written now), with the --prices columns when the run is priced. */
function csvFile(ctx: Context, f: LoadFlags, priced: boolean): CsvFile | undefined {
  if (f.csv === undefined) return undefined;
  return new CsvFile(f.csv, (e) => ctx.out.warn(`--csv: ${e.message}`), priced);
}

async function loadText(ctx: Context, f: LoadFlags): Promise<number> {
  const o = await outputs(ctx, f);
  const baseline =
    f.baseline !== undefined ? await readReport(f.baseline, '--baseline', ctx.signal) : undefined;
  const priceTable = await prices(ctx, f);
  // --shard auto (or GW_SHARD) from the scheduler; the plan resolved now, so a closed loop too small to split
  // is refused before the CSV file is written.
  const shard = resolveShard(f.shard, ctx.io.env);
  if (shard !== undefined && shard.source !== '--shard')
    ctx.out.note(`shard ${shard.k}/${shard.n} from ${shard.source}`);
  const plan = resolvePlan({ ...textPlan(f, await prompts(ctx, f.prompts), shard), prices: priceTable });
  const csv = csvFile(ctx, f, priceTable !== undefined);
  const live = new LiveLine(ctx.out, ctx.progress.enabled);
  const onSpan = await startOtlp(ctx, f.otlp);
  const rw = f.remoteWrite !== undefined ? await remoteWrite(ctx, f.remoteWrite) : undefined;
  let report: RunReport;
  try {
    report = await runLoad({
      client: (need) => ctx.client({ connections: need.connections }),
      plan,
      signal: ctx.signal,
      onProgress: (p) => {
        live.update(p);
        if (!p.warming) rw?.progress(p.inFlight);
      },
      onRequest:
        csv !== undefined || rw !== undefined
          ? (step, x) => {
              csv?.write(step, x);
              rw?.request(step, x);
            }
          : undefined,
      onSpan,
    });
  } finally {
    live.clear();
    await csv?.close();
  }
  await deliver(ctx, o, report);
  return verdict(ctx, f, report, baseline);
}

/**
 * `--replay`: the trace is checked whole before anything is sent (a bad line, a missing budget: exit 2), then
 * sent on its own clock; its videos are journaled as `--api video` journals them.
 */
async function loadReplay(ctx: Context, f: LoadFlags, path: string): Promise<number> {
  const o = await outputs(ctx, f);
  const baseline =
    f.baseline !== undefined ? await readReport(f.baseline, '--baseline', ctx.signal) : undefined;
  const priceTable = await prices(ctx, f);
  const csv = csvFile(ctx, f, priceTable !== undefined);
  const live = new LiveLine(ctx.out, ctx.progress.enabled);
  const journal = ctx.journal();
  const shard = resolveShard(f.shard, ctx.io.env);
  if (shard !== undefined && shard.source !== '--shard')
    ctx.out.note(`shard ${shard.k}/${shard.n} from ${shard.source}`);
  const onSpan = await startOtlp(ctx, f.otlp);
  const rw = f.remoteWrite !== undefined ? await remoteWrite(ctx, f.remoteWrite) : undefined;
  let client: GatewayClient | undefined;
  let report: RunReport;
  try {
    report = await runReplay({
      client: async (need) => (client = await ctx.client({ connections: need.connections })),
      plan: {
        path,
        speed: f.speed,
        stream: f.stream,
        maxTokens: f.maxTokens,
        connections: f.connections,
        budgets: f.budget,
        pollMs: f.pollInterval,
        videoTimeoutMs: f.videoTimeout,
        slo: f.slo,
        shard: shard !== undefined ? { k: shard.k, n: shard.n } : undefined,
        startAt: f.startAt,
        prices: priceTable,
      },
      signal: ctx.signal,
      onChecked: (s) => ctx.out.note(replayNote(s, f.speed ?? 1)),
      onProgress: (p) => {
        live.update(p);
        rw?.progress(p.inFlight);
      },
      onRequest:
        csv !== undefined || rw !== undefined
          ? (x) => {
              csv?.write('replay', x);
              rw?.request('replay', x);
            }
          : undefined,
      onSpan,
      onCreated: (v) => {
        ctx.recordCreated(client as GatewayClient, { kind: 'video', ...v });
        ctx.out.note(`created ${v.id}`);
      },
      onFinished: (id, state) => journal.update('video', id, state),
    });
  } finally {
    live.clear();
    await csv?.close();
  }
  await deliver(ctx, o, report);
  return verdict(ctx, f, report, baseline);
}

/** What the replay is about to send, once its trace was checked. */
function replayNote(s: TraceSummary, speed: number): string {
  const apis = Object.entries(s.apis)
    .map(([api, n]) => `${api} ${n}`)
    .join(', ');
  const secs = s.lastMs / speed / 1000;
  const part = s.mine !== s.lines ? ` (${s.mine} on this shard)` : '';
  return `replay: ${s.lines} requests${part} over ${secs.toFixed(1)}s at speed ${speed} (${apis})`;
}

/** The exit code of a text run or a replay: its SLO, whether anything succeeded, the baseline. */
async function verdict(
  ctx: Context,
  f: LoadFlags,
  report: RunReport,
  baseline: RunReport | undefined,
): Promise<number> {
  let code: number = report.slo?.pass === false ? ExitCode.failure : ExitCode.ok;
  const none = report.interrupted ? undefined : noSuccess(report);
  if (none !== undefined) {
    ctx.out.warn(none);
    code = ExitCode.failure;
  }
  if (baseline !== undefined) {
    const cmp = compareReports(baseline, report, f.tolerance ?? DEFAULT_TOLERANCE);
    if (!ctx.globals.json) await printComparison(ctx, cmp);
    else if (!cmp.pass)
      ctx.out.warn(`regressed against the baseline: ${cmp.regressions.map((r) => r.what).join(', ')}`);
    if (!cmp.pass) code = ExitCode.failure;
  }
  return ended(ctx, report, code);
}

/**
 * `--remote-write`: pushes while the run goes, and a last time when the command ends (after the report is
 * printed). Its series are labelled job="gw_load", instance=<host>, run=<the command's trace id>.
 */
async function remoteWrite(ctx: Context, url: string): Promise<RemoteWrite> {
  // Remote write (protobuf and snappy) loads only for --remote-write.
  const { RemoteWrite } = await import('../../load/remote-write.js');
  const labels = { job: 'gw_load', instance: hostname(), run: ctx.trace().traceId };
  const rw = new RemoteWrite({ url, labels, env: ctx.io.env, warn: (t) => ctx.out.warn(t) });
  rw.start();
  ctx.atClose(() => rw.close());
  return rw;
}

/** 130 after the partial report of an interrupted run; else `code`. */
function ended(ctx: Context, report: RunReport, code: number): number {
  if (!report.interrupted) return code;
  ctx.out.note('interrupted: the report above is partial');
  return ExitCode.interrupted;
}

async function loadVideo(ctx: Context, f: LoadFlags): Promise<number> {
  const model = (f.model as string).trim();
  const o = await outputs(ctx, f);
  const given = await prompts(ctx, f.prompts);
  const plan: VideoPlan = {
    model,
    seconds: f.seconds ?? minVideoSecondsFor(model),
    resolution: f.resolution ?? '720p',
    concurrency: f.concurrency ?? VIDEO_DEFAULTS.concurrency,
    requests: f.duration === undefined ? (f.requests ?? VIDEO_DEFAULTS.requests) : undefined,
    durationMs: f.duration,
    pollMs: f.pollInterval ?? VIDEO_DEFAULTS.pollMs,
    videoTimeoutMs: f.videoTimeout ?? VIDEO_DEFAULTS.timeoutMs,
    prompts: given?.map((p) => p.text) ?? [VIDEO_PROMPT],
    budgets: f.budget ?? new Map(),
    prices: await prices(ctx, f),
  };
  const { price, budget } = videoPricing(plan);
  await startOtlp(ctx, f.otlp);
  const client = await ctx.client();
  ctx.out.note(
    `load: ${plan.seconds}s ${plan.resolution} ${model} videos at ${price.currency} ${price.amount.toFixed(2)} each (list price), budget ${budget.currency} ${budget.amount}`,
  );
  const journal = ctx.journal();
  const report = await runVideoLoad({
    client,
    plan,
    signal: ctx.signal,
    onCreated: (v) => {
      ctx.recordCreated(client, {
        kind: 'video',
        id: v.id,
        model: v.model,
        requestId: v.requestId,
        state: v.state,
      });
      ctx.out.note(`created ${v.id}`);
    },
    onFinished: (id, state) => journal.update('video', id, state),
  });
  if (report.stopped === 'budget') ctx.out.warn('stopped creating: one more video would pass the budget');
  await deliver(ctx, o, report);
  const st = report.steps[0];
  let code: number = ExitCode.ok;
  if (!report.interrupted && st !== undefined && st.requests > 0 && st.ok === 0) {
    ctx.out.warn('no video succeeded');
    code = ExitCode.failure;
  }
  return ended(ctx, report, code);
}
