/**
 * `gw load --api video`: a closed loop of video tasks. Each item is one create (`POST /v1/videos`, never retried:
 * it bills), journaled before it is polled, polled at a fixed interval until a terminal state, then its result
 * downloaded and discarded (the bytes are counted and thrown away; nothing is written to disk). Per item: create
 * latency (until the POST answered), queue wait (until a poll first saw it leave `queued`; resolution: the poll
 * interval), time to completion (create sent → terminal state seen), download time and throughput. Failed and
 * cancelled tasks, timeouts and failed downloads are failures. `--budget` is required: no create is sent whose
 * list price would carry the estimated spend of the created items past it.
 */
/**
 * `gw load --api video` as a library (`runVideoLoad`): a closed loop of video tasks. Each item is one create
 * (`POST /v1/videos`, never retried: it bills), handed to `onCreated` before it is polled (the CLI journals it),
 * polled at a fixed interval until a terminal state, then its result downloaded and discarded (the bytes are
 * counted and thrown away; nothing is written to disk). Per item: create latency (until the POST answered), queue
 * wait (until a poll first saw it leave `queued`; resolution: the poll interval), time to completion (create sent →
 * terminal state seen), download time and throughput. Failed and cancelled tasks, timeouts and failed downloads are
 * failures. No create is sent whose list price would carry the estimated spend of the created items past the
 * budget.
 */
import { performance } from 'node:perf_hooks';
import type { GatewayClient } from '../client/gateway-client.js';
import * as videos from '../client/resources/videos.js';
import { estimateRequest, impliedSpend, type Currency } from '../contract/estimate.js';
import { producedOf, type PriceTable } from '../contract/prices.js';
import { isVideoSuccess, type VideoCreateInput } from '../contract/video.js';
import { BudgetLedger, isRefusal, type Hold } from '../core/budget.js';
import { UsageError } from '../core/errors.js';
import type { Clock, Outcome } from './exchange.js';
import { LatencyHistogram } from './histogram.js';
import { Recorder } from './recorder.js';
import { stepReport, videoFigures, type VideoFacts } from './report.js';
import { GW_VERSION } from './run.js';
import { SCHEMA, VIDEO_METRICS, type RunReport, type VideoMetric } from './schema.js';
import { pricesDigest, runSpend, spendWarnings } from './spend.js';

/** Defaults of the video mode. */
export const VIDEO_DEFAULTS = { concurrency: 2, requests: 4, pollMs: 500, timeoutMs: 30 * 60_000 };

/** The prompt of every item when none are given. */
export const VIDEO_PROMPT = 'gw load: a slow pan over a calm sea at dawn';

/** A video load test. */
export interface VideoPlan {
  model: string;
  seconds: number;
  resolution: string;
  concurrency: number;
  /** Items to run (default VIDEO_DEFAULTS.requests unless `durationMs` is given). */
  requests?: number | undefined;
  durationMs?: number | undefined;
  pollMs: number;
  videoTimeoutMs: number;
  prompts: string[];
  /** The cap on the list price of the created videos, per currency. */
  budgets: ReadonlyMap<Currency, number>;
  /** `--prices`: each finished video priced by its seconds (the report's spend). */
  prices?: PriceTable | undefined;
}

/** A task the gateway created (billed): what `onCreated` is handed. */
export interface CreatedVideo {
  id: string;
  model: string;
  requestId: string | undefined;
  state: string;
}

/** The options of `runVideoLoad`. */
export interface VideoLoadOptions {
  client: GatewayClient;
  plan: VideoPlan;
  signal?: AbortSignal | undefined;
  clock?: Clock | undefined;
  /** Each task the gateway created, before it is polled (journal it: it is billed). */
  onCreated?: ((v: CreatedVideo) => void) | undefined;
  /** A created task's terminal state. */
  onFinished?: ((id: string, state: string) => void) | undefined;
}

/** One video's list price and the budget in its currency. */
export interface VideoPricing {
  price: { currency: Currency; amount: number; basis: string };
  budget: { currency: Currency; amount: number };
}

/**
 * The list price of one video of the plan and the budget that covers it; a UsageError naming --budget when the
 * contract prices no such video, no budget is in its currency, or the budget does not cover one.
 */
export function videoPricing(
  p: Pick<VideoPlan, 'model' | 'seconds' | 'resolution' | 'budgets'>,
): VideoPricing {
  const est = estimateRequest('/v1/videos', { model: p.model, seconds: p.seconds, resolution: p.resolution });
  const refuse = (rule: string): never => {
    throw new UsageError(`--budget: ${rule}`, { field: '--budget' });
  };
  if (!est.priced) return refuse(`cannot be kept for ${p.model}: ${est.reason}`);
  const amount = p.budgets.get(est.currency);
  if (amount === undefined)
    return refuse(`${p.model} is priced in ${est.currency}: give a budget in ${est.currency}`);
  if (amount < est.amount) {
    refuse(
      `${amount} ${est.currency} does not cover one video (${est.currency} ${est.amount.toFixed(2)}: ${est.basis})`,
    );
  }
  return {
    price: { currency: est.currency, amount: est.amount, basis: est.basis },
    budget: { currency: est.currency, amount },
  };
}

/** The measurements of one video item. */
export interface VideoItem {
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
  /** The task's last record, once it reached a terminal state. */
  record?: Record<string, unknown>;
  /** The model asked for. */
  model?: string;
  /** A finished video's seconds (its final record's, else those asked for): what --prices prices. */
  seconds?: number;
}

/**
 * Ends a video's hold on the budget: released when the gateway refused the create (nothing billed); a finished
 * video settles at the list price of the length its record reports; any other end keeps the price held.
 */
export function settleVideo(ledger: BudgetLedger, hold: Hold, body: VideoCreateInput, item: VideoItem): void {
  if (item.refused === true) {
    ledger.release(hold);
    return;
  }
  const done = item.state !== undefined && isVideoSuccess(item.state) ? item.record : undefined;
  ledger.settle(hold, impliedSpend('/v1/videos', body, done));
}

function codeOf(e: unknown): string {
  const x = e as { code?: unknown; name?: unknown };
  if (typeof x.code === 'string' && x.code !== '') return x.code;
  return typeof x.name === 'string' ? x.name : 'error';
}

/** Where video tasks are sent and how they are followed (`--api video`, and the video lines of a replay). */
export interface VideoTaskOptions {
  client: GatewayClient;
  clock: Clock;
  signal: AbortSignal;
  pollMs: number;
  videoTimeoutMs: number;
  onCreated?: ((v: CreatedVideo) => void) | undefined;
  onFinished?: ((id: string, state: string) => void) | undefined;
}

/**
 * Video tasks measured one by one: create, hand to onCreated, poll, download-and-discard; and what they add up
 * to (the video histograms, states, ids, bytes). `record` counts an item in a step's recorder too.
 */
export class VideoTasks {
  readonly hist = Object.fromEntries(VIDEO_METRICS.map((m) => [m, new LatencyHistogram()])) as Record<
    VideoMetric,
    LatencyHistogram
  >;
  readonly states = new Map<string, number>();
  readonly ids: string[] = [];
  created = 0;
  bytes = 0;

  constructor(readonly o: VideoTaskOptions) {}

  get signal(): AbortSignal {
    return this.o.signal;
  }

  get clock(): Clock {
    return this.o.clock;
  }

  /** Runs one item: create, hand to onCreated, poll, download-and-discard. */
  async item(body: VideoCreateInput): Promise<VideoItem> {
    const t0 = this.clock.now();
    const item: VideoItem = { ok: false, model: body.model };
    const created = await this.create(body, item, t0);
    if (created === undefined) return item;
    const state = await this.wait(created, item, t0);
    if (state === undefined) return item;
    item.state = state;
    this.o.onFinished?.(created.id, state);
    if (!isVideoSuccess(state)) {
      item.code = `video_${state}`;
      return item;
    }
    // Billed once finished, downloaded or not.
    const seconds =
      producedOf('/v1/videos', item.record).videoSeconds ?? producedOf('/v1/videos', body).videoSeconds;
    if (seconds !== undefined) item.seconds = seconds;
    await this.download(created.id, item);
    return item;
  }

  async create(
    body: VideoCreateInput,
    item: VideoItem,
    t0: number,
  ): Promise<{ id: string; state: string } | undefined> {
    const { o } = this;
    try {
      const created = await videos.create(o.client, body, { signal: this.signal });
      item.createMs = this.clock.now() - t0;
      const { video_id: id, status: state } = created.data;
      // Billed from here on: handed over before anything else, so a journal finds it whatever happens next.
      o.onCreated?.({ id, model: body.model, requestId: created.requestId, state });
      this.created++;
      this.ids.push(id);
      if (state !== 'queued') item.queueMs = item.createMs;
      return { id, state };
    } catch (e) {
      item.code = codeOf(e);
      item.completionMs = this.clock.now() - t0;
      // The gateway answered with an error: nothing was created. Without an answer it may have been (in doubt).
      const status = (e as { status?: unknown }).status;
      item.refused = typeof status === 'number' && status > 0;
      return undefined;
    }
  }

  async wait(created: { id: string }, item: VideoItem, t0: number): Promise<string | undefined> {
    try {
      const done = await videos.wait(this.o.client, created.id, {
        signal: this.signal,
        timeoutMs: this.o.videoTimeoutMs,
        initialMs: this.o.pollMs,
        maxMs: this.o.pollMs,
        random: () => 0.5,
        onUpdate: (r) => {
          if (item.queueMs === undefined && r.status !== 'queued') item.queueMs = this.clock.now() - t0;
        },
      });
      item.completionMs = this.clock.now() - t0;
      item.record = done.data;
      return done.data.status;
    } catch (e) {
      item.code = codeOf(e);
      item.completionMs = this.clock.now() - t0;
      return undefined;
    }
  }

  async download(id: string, item: VideoItem): Promise<void> {
    const d0 = this.clock.now();
    try {
      const res = await videos.content(this.o.client, id, { signal: this.signal });
      let bytes = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) bytes += chunk.length;
      item.downloadMs = this.clock.now() - d0;
      item.bytes = bytes;
      item.ok = true;
    } catch (e) {
      item.code = `download_${codeOf(e)}`;
    }
  }

  /**
   * Counts a finished item in the video histograms and returns its outcome (for the step's recorder). `startMs`
   * is its start relative to the run's origin; `lagMs` how late its create left after its schedule (a replay),
   * counted in its end-to-end time as the open loop counts it.
   */
  record(item: VideoItem, startMs: number, lagMs = 0): Outcome {
    if (item.state !== undefined) this.states.set(item.state, (this.states.get(item.state) ?? 0) + 1);
    const interrupted = this.signal.aborted && !item.ok && item.state === undefined;
    const o: Outcome = {
      api: 'video',
      stream: false,
      ok: item.ok,
      status: item.createMs !== undefined ? 200 : 0,
      startMs,
      lagMs,
      e2eMs: (item.completionMs ?? 0) + lagMs,
      itlMs: [],
      sent: true,
      ...(item.model !== undefined ? { model: item.model } : {}),
      ...(item.seconds !== undefined ? { videoSeconds: item.seconds } : {}),
      ...(item.code !== undefined ? { code: item.code } : {}),
      ...(interrupted ? { cancelled: true } : {}),
    };
    if (interrupted) return o;
    const hist = this.hist;
    if (item.createMs !== undefined) hist.create.recordMs(item.createMs);
    if (item.queueMs !== undefined) hist.queue_wait.recordMs(item.queueMs);
    if (item.completionMs !== undefined && item.state !== undefined)
      hist.completion.recordMs(item.completionMs);
    if (item.downloadMs !== undefined && item.bytes !== undefined) {
      hist.download.recordMs(item.downloadMs);
      this.bytes += item.bytes;
      // MB/s recorded as "ms": the histogram holds kB/s (values ×1000).
      hist.download_mbps.recordMs(item.bytes / 1e6 / Math.max(1e-6, item.downloadMs / 1000));
    }
    return o;
  }

  /** The facts of the tasks so far (counts, states, ids, bytes) for a step's `video` figures. */
  facts(): Pick<VideoFacts, 'created' | 'failed' | 'cancelled' | 'states' | 'ids' | 'download_bytes'> {
    return {
      created: this.created,
      failed: this.states.get('failed') ?? 0,
      cancelled: this.states.get('cancelled') ?? 0,
      states: Object.fromEntries(this.states),
      ids: this.ids,
      download_bytes: this.bytes,
    };
  }
}

/** The state of one running video load test. */
class VideoRun {
  readonly rec: Recorder;
  readonly tasks: VideoTasks;
  readonly ledger: BudgetLedger;
  budgetStop = false;
  issued = 0;
  readonly origin: number;
  readonly deadline: number;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly pricing: VideoPricing;

  constructor(readonly o: VideoLoadOptions) {
    this.clock = o.clock ?? performance;
    this.signal = o.signal ?? new AbortController().signal;
    this.pricing = videoPricing(o.plan);
    this.ledger = new BudgetLedger(new Map([[this.pricing.budget.currency, this.pricing.budget.amount]]));
    this.rec = new Recorder([], o.plan.prices);
    this.tasks = new VideoTasks({
      client: o.client,
      clock: this.clock,
      signal: this.signal,
      pollMs: o.plan.pollMs,
      videoTimeoutMs: o.plan.videoTimeoutMs,
      onCreated: o.onCreated,
      onFinished: o.onFinished,
    });
    this.origin = this.clock.now();
    this.rec.runOrigin = this.origin;
    this.rec.startedAt = this.origin;
    const { durationMs } = o.plan;
    this.deadline = durationMs !== undefined ? this.origin + durationMs : Infinity;
  }

  get plan(): VideoPlan {
    return this.o.plan;
  }

  get requests(): number | undefined {
    return this.plan.requests ?? (this.plan.durationMs === undefined ? VIDEO_DEFAULTS.requests : undefined);
  }

  /**
   * One virtual user: items one after another until the count, the duration, the budget or Ctrl-C. A video is
   * created only when its list price fits beside what the others spent or hold; one that fits only if a video in
   * flight ends for less waits for it.
   */
  async worker(): Promise<void> {
    const { currency, amount } = this.pricing.price;
    const { model, seconds, resolution } = this.plan;
    while (!this.signal.aborted && this.clock.now() < this.deadline) {
      const limit = this.requests;
      if (limit !== undefined && this.issued >= limit) return;
      const hold = this.ledger.reserve(currency, amount);
      if (isRefusal(hold)) {
        if (hold.later) {
          await this.ledger.changed();
          continue;
        }
        this.budgetStop = true;
        return;
      }
      this.issued++;
      this.rec.inFlight++;
      const prompt = this.plan.prompts[(this.issued - 1) % this.plan.prompts.length] as string;
      const startMs = this.clock.now() - this.origin;
      const body = { model, prompt, seconds, resolution };
      const item = await this.tasks.item(body);
      this.rec.inFlight--;
      settleVideo(this.ledger, hold, body, item);
      this.rec.add(this.tasks.record(item, startMs));
    }
  }

  /** The report of the run (one step). */
  report(): RunReport {
    const { plan, pricing } = this;
    this.rec.endedAt = this.clock.now();
    const step = stepReport(
      this.rec,
      { label: `concurrency=${plan.concurrency}`, mode: 'closed', concurrency: plan.concurrency },
      undefined,
    );
    step.video = videoFigures(
      {
        model: plan.model,
        seconds: plan.seconds,
        resolution: plan.resolution,
        ...this.tasks.facts(),
        completed: step.ok,
        spend: {
          currency: pricing.price.currency,
          estimated: Math.round(this.ledger.spent(pricing.price.currency) * 100) / 100,
          unit_price: pricing.price.amount,
          budget: pricing.budget.amount,
          stopped_by_budget: this.budgetStop,
        },
        poll_interval_ms: plan.pollMs,
      },
      this.tasks.hist,
    );
    const requests = this.requests;
    return {
      schema: SCHEMA,
      created_at: new Date().toISOString(),
      gw_version: GW_VERSION,
      target: this.o.client.baseUrl,
      machines: 1,
      config: {
        model: plan.model,
        api: 'video',
        mode: 'closed',
        concurrency: plan.concurrency,
        ...(requests !== undefined ? { requests } : { duration_ms: plan.durationMs }),
        seconds: plan.seconds,
        resolution: plan.resolution,
        budget: `${pricing.budget.amount}${pricing.budget.currency}`,
        poll_interval_ms: plan.pollMs,
        video_timeout_ms: plan.videoTimeoutMs,
        ...(plan.prices !== undefined ? { prices: { sha256: pricesDigest(plan.prices) } } : {}),
      },
      interrupted: this.signal.aborted,
      stopped: this.budgetStop ? 'budget' : null,
      warnings: spendWarnings(step),
      steps: [step],
      ...runSpend([step]),
      sweep: null,
      slo: null,
    };
  }
}

/**
 * Runs a video load test and returns its report (`stopped: "budget"` when one more video would have passed the
 * budget). Throws a UsageError naming --budget, before anything is sent, when the budget cannot be kept.
 */
export async function runVideoLoad(o: VideoLoadOptions): Promise<RunReport> {
  const run = new VideoRun(o);
  await Promise.all(Array.from({ length: o.plan.concurrency }, () => run.worker()));
  return run.report();
}
