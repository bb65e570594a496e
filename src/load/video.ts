/**
 * `gw load --api video`: a closed loop of video tasks. Each item is one create (`POST /v1/videos`, never retried:
 * it bills), journaled before it is polled, polled at a fixed interval until a terminal state, then its result
 * downloaded and discarded (the bytes are counted and thrown away; nothing is written to disk). Per item: create
 * latency (until the POST answered), queue wait (until a poll first saw it leave `queued`; resolution: the poll
 * interval), time to completion (create sent → terminal state seen), download time and throughput. Failed and
 * cancelled tasks, timeouts and failed downloads are failures. `--budget` is required: no create is sent whose
 * list price would carry the estimated spend of the created items past it.
 */
import { performance } from 'node:perf_hooks';
import type { Context } from '../cli/context.js';
import type { GatewayClient } from '../client/gateway-client.js';
import { parseDuration } from '../core/duration.js';
import { UsageError } from '../core/errors.js';
import { checkReportPath, writeReportFile } from '../report/output.js';
import { estimateRequest, type Currency } from '../contract/estimate.js';
import { parseBudgets } from '../core/budget.js';
import { isVideoSuccess, minVideoSecondsFor } from '../contract/video.js';
import type { Outcome } from './exchange.js';
import { LatencyHistogram } from './histogram.js';
import { int, type LoadFlags } from './options.js';
import { Recorder } from './recorder.js';
import { stepReport, videoFigures } from './report.js';
import { readPrompts } from './workload.js';
import { SCHEMA, VIDEO_METRICS, type RunReport, type VideoMetric } from './schema.js';

/** Defaults of the video mode. */
export const VIDEO_DEFAULTS = { concurrency: 2, requests: 4, pollMs: 500, timeoutMs: 30 * 60_000 };

const PROMPT = 'gw load: a slow pan over a calm sea at dawn';

function usage(flag: string, rule: string): never {
  throw new UsageError(`${flag}: ${rule}`, { field: flag });
}

/** The checked flags of a video load test. */
export interface VideoSpec {
  model: string;
  seconds: number;
  resolution: string;
  concurrency: number;
  requests?: number;
  durationMs?: number;
  pollMs: number;
  videoTimeoutMs: number;
  prompts: string[];
  budget: { currency: Currency; amount: number };
  price: { currency: Currency; amount: number; basis: string };
  out?: string;
}

/** Checks the flags of `gw load --api video` (exit 2 naming the flag; nothing sent). */
export function parseVideoFlags(f: LoadFlags): VideoSpec {
  if (f.model === undefined || f.model.trim() === '') usage('--model', 'is required (a video model)');
  if (f.budget === undefined || f.budget.length === 0) {
    usage('--budget', '--api video creates paid tasks, so it needs --budget (e.g. --budget 50CNY)');
  }
  for (const [flag, v] of [
    ['--mix', f.mix],
    ['--rate', f.rate],
    ['--sweep', f.sweep],
    ['--arrival', f.arrival],
    ['--warmup', f.warmup],
    ['--ramp-up', f.rampUp],
    ['--connections', f.connections],
    ['--prompt-words', f.promptWords],
    ['--max-tokens', f.maxTokens],
    ['--slo', f.slo],
    ['--stop-on', f.stopOn],
    ['--csv', f.csv],
    ['--baseline', f.baseline],
    ['--tolerance', f.tolerance],
    ['--seed', f.seed],
  ] as const) {
    if (v !== undefined) usage(flag, 'is not supported with --api video (closed loop of video tasks)');
  }
  if (f.stream === true) usage('--stream', 'video tasks are not streamed');
  if (f.duration !== undefined && f.requests !== undefined) {
    usage('--requests', 'cannot be combined with --duration (choose one end)');
  }
  const model = f.model.trim();
  const seconds = int('--seconds', f.seconds, 1, 3600) ?? minVideoSecondsFor(model);
  const resolution = f.resolution ?? '720p';
  const concurrency = int('--concurrency', f.concurrency, 1, 1000) ?? VIDEO_DEFAULTS.concurrency;
  const requests = int('--requests', f.requests, 1, 1_000_000);
  const durationMs = f.duration !== undefined ? parseDuration(f.duration, '--duration') : undefined;
  if (durationMs !== undefined && durationMs <= 0) usage('--duration', 'must be above 0');
  const pollMs =
    f.pollInterval !== undefined ? parseDuration(f.pollInterval, '--poll-interval') : VIDEO_DEFAULTS.pollMs;
  if (pollMs < 50) usage('--poll-interval', 'must be at least 50ms');
  const videoTimeoutMs =
    f.videoTimeout !== undefined
      ? parseDuration(f.videoTimeout, '--video-timeout')
      : VIDEO_DEFAULTS.timeoutMs;
  if (videoTimeoutMs <= 0) usage('--video-timeout', 'must be above 0');
  const est = estimateRequest('/v1/videos', { model, seconds, resolution });
  if (!est.priced) {
    usage('--budget', `cannot be kept for ${model}: ${est.reason}`);
  }
  const amount = parseBudgets(f.budget).get(est.currency);
  if (amount === undefined) {
    usage('--budget', `${model} is priced in ${est.currency}: give a budget in ${est.currency}`);
  }
  const budget = { currency: est.currency, amount };
  if (budget.amount < est.amount) {
    usage(
      '--budget',
      `${budget.amount} ${budget.currency} does not cover one video (${est.currency} ${est.amount.toFixed(2)}: ${est.basis})`,
    );
  }
  const prompts = f.prompts !== undefined ? readPrompts(f.prompts).map((p) => p.text) : [`${PROMPT}`];
  const spec: VideoSpec = {
    model,
    seconds,
    resolution,
    concurrency,
    pollMs,
    videoTimeoutMs,
    prompts,
    budget,
    price: { currency: est.currency, amount: est.amount, basis: est.basis },
  };
  if (durationMs !== undefined) spec.durationMs = durationMs;
  else spec.requests = requests ?? VIDEO_DEFAULTS.requests;
  // Checked now: the report of paid work must not be lost to an unwritable path at the end.
  if (f.out !== undefined) spec.out = checkReportPath(f.out, 'out');
  return spec;
}

/** The measurements of one video item. */
interface Item {
  ok: boolean;
  state?: string;
  code?: string;
  createMs?: number;
  queueMs?: number;
  completionMs?: number;
  downloadMs?: number;
  bytes?: number;
  /** The create was answered with an error (nothing billed). */
  refused?: boolean;
}

function codeOf(e: unknown): string {
  const x = e as { code?: unknown; name?: unknown };
  if (typeof x.code === 'string' && x.code !== '') return x.code;
  return typeof x.name === 'string' ? x.name : 'error';
}

/** Runs one item: create, journal, poll, download-and-discard. */
async function runItem(
  ctx: Context,
  client: GatewayClient,
  spec: VideoSpec,
  prompt: string,
  signal: AbortSignal,
  onCreated: (id: string) => void,
): Promise<Item> {
  const videos = await import('../client/resources/videos.js');
  const t0 = performance.now();
  let id: string;
  let state: string;
  const item: Item = { ok: false };
  try {
    const created = await videos.create(
      client,
      { model: spec.model, prompt, seconds: spec.seconds, resolution: spec.resolution },
      { signal },
    );
    item.createMs = performance.now() - t0;
    id = created.data.video_id;
    state = created.data.status;
    // Billed from here on: journaled before anything else, so `gw history` finds it whatever happens next.
    ctx.recordCreated(client, {
      kind: 'video',
      id,
      model: spec.model,
      requestId: created.requestId,
      state,
    });
    onCreated(id);
  } catch (e) {
    item.code = codeOf(e);
    item.completionMs = performance.now() - t0;
    // The gateway answered with an error: nothing was created. Without an answer it may have been (in doubt).
    const status = (e as { status?: unknown }).status;
    item.refused = typeof status === 'number' && status > 0;
    return item;
  }
  if (state !== 'queued') item.queueMs = item.createMs;
  try {
    const done = await videos.wait(client, id, {
      signal,
      timeoutMs: spec.videoTimeoutMs,
      initialMs: spec.pollMs,
      maxMs: spec.pollMs,
      random: () => 0.5,
      onUpdate: (r) => {
        if (item.queueMs === undefined && r.status !== 'queued') item.queueMs = performance.now() - t0;
      },
    });
    state = done.data.status;
  } catch (e) {
    item.code = codeOf(e);
    item.completionMs = performance.now() - t0;
    return item;
  }
  item.completionMs = performance.now() - t0;
  item.state = state;
  ctx.journal().update('video', id, state);
  if (!isVideoSuccess(state)) {
    item.code = `video_${state}`;
    return item;
  }
  const d0 = performance.now();
  try {
    const res = await videos.content(client, id, { signal });
    let bytes = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) bytes += chunk.length;
    item.downloadMs = performance.now() - d0;
    item.bytes = bytes;
  } catch (e) {
    item.code = `download_${codeOf(e)}`;
    return item;
  }
  item.ok = true;
  return item;
}

/** Runs `gw load --api video`; prints the report; returns the exit code. */
export async function runVideoLoad(
  ctx: Context,
  spec: VideoSpec,
  onReport?: (r: RunReport) => Promise<void>,
): Promise<number> {
  const client = await ctx.client();
  const rec = new Recorder();
  const hist = Object.fromEntries(VIDEO_METRICS.map((m) => [m, new LatencyHistogram()])) as Record<
    VideoMetric,
    LatencyHistogram
  >;
  const states = new Map<string, number>();
  let created = 0;
  let spent = 0;
  let bytes = 0;
  let budgetStop = false;
  const origin = performance.now();
  rec.runOrigin = origin;
  rec.startedAt = origin;
  const deadline = spec.durationMs !== undefined ? origin + spec.durationMs : Infinity;
  const ids: string[] = [];
  let issued = 0;
  const cents = (x: number): number => Math.round(x * 100);
  ctx.out.note(
    `load: ${spec.seconds}s ${spec.resolution} ${spec.model} videos at ${spec.price.currency} ${spec.price.amount.toFixed(2)} each (list price), budget ${spec.budget.currency} ${spec.budget.amount}`,
  );
  const worker = async (): Promise<void> => {
    while (!ctx.signal.aborted && performance.now() < deadline) {
      if (spec.requests !== undefined && issued >= spec.requests) return;
      // The estimate of every item sent so far plus this one must stay within the budget.
      if (cents(spent) + cents(spec.price.amount) > cents(spec.budget.amount)) {
        budgetStop = true;
        return;
      }
      issued++;
      spent += spec.price.amount;
      rec.inFlight++;
      const prompt = spec.prompts[(issued - 1) % spec.prompts.length] as string;
      const startMs = performance.now() - origin;
      const item = await runItem(ctx, client, spec, prompt, ctx.signal, (id) => {
        created++;
        ids.push(id);
        ctx.out.note(`created ${id}`);
      });
      rec.inFlight--;
      if (item.refused === true) spent -= spec.price.amount; // refused: not created, not billed
      if (item.state !== undefined) states.set(item.state, (states.get(item.state) ?? 0) + 1);
      const interrupted = ctx.signal.aborted && !item.ok && item.state === undefined;
      const o: Outcome = {
        api: 'video',
        stream: false,
        ok: item.ok,
        status: item.createMs !== undefined ? 200 : 0,
        startMs,
        lagMs: 0,
        e2eMs: item.completionMs ?? 0,
        itlMs: [],
        ...(item.code !== undefined ? { code: item.code } : {}),
        ...(interrupted ? { cancelled: true } : {}),
      };
      rec.add(o);
      if (interrupted) continue;
      if (item.createMs !== undefined) hist.create.recordMs(item.createMs);
      if (item.queueMs !== undefined) hist.queue_wait.recordMs(item.queueMs);
      if (item.completionMs !== undefined && item.state !== undefined)
        hist.completion.recordMs(item.completionMs);
      if (item.downloadMs !== undefined && item.bytes !== undefined) {
        hist.download.recordMs(item.downloadMs);
        bytes += item.bytes;
        // MB/s recorded as "ms": the histogram holds kB/s (values ×1000).
        hist.download_mbps.recordMs(item.bytes / 1e6 / Math.max(1e-6, item.downloadMs / 1000));
      }
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, () => worker()));
  rec.endedAt = performance.now();
  const interrupted = ctx.signal.aborted;
  const step = stepReport(
    rec,
    { label: `concurrency=${spec.concurrency}`, mode: 'closed', concurrency: spec.concurrency },
    undefined,
  );
  step.video = videoFigures(
    {
      model: spec.model,
      seconds: spec.seconds,
      resolution: spec.resolution,
      created,
      completed: step.ok,
      failed: states.get('failed') ?? 0,
      cancelled: states.get('cancelled') ?? 0,
      states: Object.fromEntries(states),
      ids,
      download_bytes: bytes,
      spend: {
        currency: spec.price.currency,
        estimated: Math.round(spent * 100) / 100,
        unit_price: spec.price.amount,
        budget: spec.budget.amount,
        stopped_by_budget: budgetStop,
      },
      poll_interval_ms: spec.pollMs,
    },
    hist,
  );
  const settings = ctx.settings();
  const report: RunReport = {
    schema: SCHEMA,
    created_at: new Date().toISOString(),
    gw_version: '0.1.0',
    target: settings.baseUrl ?? '',
    machines: 1,
    config: {
      model: spec.model,
      api: 'video',
      mode: 'closed',
      concurrency: spec.concurrency,
      ...(spec.requests !== undefined ? { requests: spec.requests } : {}),
      ...(spec.durationMs !== undefined ? { duration_ms: spec.durationMs } : {}),
      seconds: spec.seconds,
      resolution: spec.resolution,
      budget: `${spec.budget.amount}${spec.budget.currency}`,
      poll_interval_ms: spec.pollMs,
      video_timeout_ms: spec.videoTimeoutMs,
    },
    interrupted,
    stopped: budgetStop ? 'budget' : null,
    warnings: [],
    steps: [step],
    sweep: null,
    slo: null,
  };
  const { printReport } = await import('./run.js');
  if (spec.out !== undefined)
    await writeReportFile(spec.out, `${JSON.stringify(report)}\n`, 'the load report');
  await onReport?.(report);
  if (budgetStop) ctx.out.warn(`stopped creating: one more video would pass the budget`);
  if (ctx.globals.json) ctx.out.json(report);
  else await printReport(ctx, report);
  if (interrupted) {
    ctx.out.note('interrupted: the report above is partial');
    return 130;
  }
  if (step.requests > 0 && step.ok === 0) {
    ctx.out.warn('no video succeeded');
    return 1;
  }
  return 0;
}
