import { readFileSync } from 'node:fs';

/** Services of the second family an account must open (beta-tasks-assets.md §7: 503 `service_unavailable`). */
export type SimService = 'beta-tasks' | 'asset-library';

/** One token the simulator accepts: its tenant and the models it sees (`"*"` = all). */
export interface SimToken {
  tenant: string;
  models: '*' | string[];
  /** Services this account has not opened: their endpoints answer 503 `service_unavailable` (default: none). */
  notOpened?: SimService[];
  /** This token's own rate limit (overrides the config's `rateLimit`). */
  rateLimit?: SimRateLimit | undefined;
}

/** A token bucket per token: `requestsPerSecond` refill, `burst` capacity; past it 429 with Retry-After. */
export interface SimRateLimit {
  requestsPerSecond: number;
  burst: number;
}

/** Fault kinds (docs/simulator.md "Faults"). */
export type FaultKind =
  | 'latency' // wait `ms` before answering
  | 'status' // answer `status` with a common error body (and Retry-After when `retryAfter` is set)
  | 'html502' // a proxy's HTML 502 page
  | 'malformed' // 200 with a body that is not JSON
  | 'drop' // destroy the connection after `after` bytes (responses) or events (streams)
  | 'burst' // streams: deliver every event in one write, at the end
  | 'slow' // never finish: dribble one byte every `ms`
  | 'no-request-id' // omit X-Gateway-Request-Id
  | 'redirect-loop' // CDN/content: redirect to itself forever
  | 'lost-answer' // the route does its work (a create creates), then the connection drops before any answer byte
  | 'no-terminal' // streams: end cleanly without the terminal event ([DONE], response.completed, message_stop)
  | 'after-terminal' // streams: one more event after the terminal one
  | 'vanish'; // the model named by `model` is not listed, and requests naming it answer 404 model_not_found

/** A fault applied to matching requests. */
export interface FaultRule {
  /** `METHOD /route/:pattern` as registered, e.g. `POST /v1/chat/completions`, or `*`. */
  route: string;
  kind: FaultKind;
  status?: number;
  retryAfter?: number;
  ms?: number;
  after?: number;
  /** How many requests it hits (default: all). */
  times?: number;
  /** Probability per request in [0,1] (seeded, deterministic). Default 1. */
  probability?: number;
  /** Only requests whose body names this model (`model`, or alpha's `model_name`). */
  model?: string;
  /** Only streamed requests (`true`: the body asks `"stream": true`) or only the others (`false`). */
  stream?: boolean;
}

/** Request kinds an extra model serves (`extraModels`): `chat` also serves responses and messages. */
export type SimModelKind = 'chat' | 'responses' | 'messages' | 'embeddings' | 'image' | 'image-edit';

/** Timings of the state machines, in milliseconds. */
export interface SimTimings {
  /** Video: queued → in_progress, in_progress → completed. */
  videoQueuedMs: number;
  videoRunningMs: number;
  /** Beta task: queued → running, running → succeeded. */
  betaQueuedMs: number;
  betaRunningMs: number;
  /** Asset: Processing → Active/Failed. */
  assetProcessingMs: number;
  /** Delay between stream events (per token). */
  streamDelayMs: number;
  /** Lifetime of result URLs. */
  resultTtlMs: number;
}

/** Simulator configuration (`gw sim --config <file>` takes the same shape as JSON). */
export interface SimConfig {
  host: string;
  port: number;
  /** Port of the CDN origin (0 = ephemeral). */
  cdnPort: number;
  tokens: Record<string, SimToken>;
  timings: SimTimings;
  faults: FaultRule[];
  /** Video terminal success word: `completed` (default) or `success` (common.md §3: clients accept both). */
  videoSuccessState: 'completed' | 'success';
  /** Size in bytes of the video the CDN serves (default: the real small MP4 fixture). */
  videoBytes?: number;
  /** Chunks in a streamed chat answer (bench uses 50 000). */
  streamChunks?: number;
  seed: number;
  /** Per-token rate limit of every authenticated route (default none). */
  rateLimit?: SimRateLimit | undefined;
  /** beta §2.1 rule 4 / §7: filter-off models lack an exact version mapping → 503 model_mapping_required (default off). */
  betaFilterOffUnmapped?: boolean;
  /** Models beyond the documents' names, listed by `GET /v1/models` (to tokens that see them) and served by kind. */
  extraModels?: Record<string, SimModelKind>;
  /**
   * Many extra models at once: `count` chat models (or of `kind`) named `<prefix>001`, `<prefix>002`, … (default
   * prefix `sim-chat-`), listed and served like `extraModels` (a probe over hundreds of models).
   */
  generatedModels?: { count: number; kind?: SimModelKind; prefix?: string };
  /** Models listed by `GET /v1/models` that answer 404 `model_not_found` everywhere (a channel misconfiguration). */
  misconfiguredModels?: string[];
  /** Capacity model of the text routes (src/sim/capacity.ts); off when absent. */
  capacity?: SimCapacity;
}

/** Capacity model of the text routes (docs/simulator.md "Capacity"). */
export interface SimCapacity {
  /** Requests served at once. */
  maxConcurrent: number;
  /** Requests that may wait for a slot; beyond them 429. */
  queue: number;
  /** Time to first token once served: fixed ms, or a log-normal fitted to its median and 99th percentile. */
  ttftMs: number | { p50: number; p99: number };
  /** Output tokens per second of each served request. */
  tokensPerSecond: number;
  /** Retry-After (seconds) of the 429 answer; default 1. */
  retryAfter?: number;
}

/** The default token: sees every model, tenant `default`. Printed by `gw sim` at start. */
export const DEFAULT_SIM_TOKEN = 'sk-sim-local-0000';

/** Defaults that make a demo look real and still finish in seconds. */
export function defaultSimConfig(): SimConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    cdnPort: 0,
    tokens: { [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' } },
    timings: {
      videoQueuedMs: 400,
      videoRunningMs: 1200,
      betaQueuedMs: 400,
      betaRunningMs: 1200,
      assetProcessingMs: 800,
      streamDelayMs: 15,
      resultTtlMs: 24 * 3600 * 1000,
    },
    faults: [],
    videoSuccessState: 'completed',
    seed: 1,
  };
}

/** Partial config as accepted from files and tests. */
export type SimConfigInput = Partial<Omit<SimConfig, 'timings'>> & { timings?: Partial<SimTimings> };

/** Merges partial settings over the defaults. */
export function resolveSimConfig(input: SimConfigInput = {}): SimConfig {
  const d = defaultSimConfig();
  const generated = generatedModels(input.generatedModels);
  return {
    ...d,
    ...input,
    tokens: input.tokens ?? d.tokens,
    timings: { ...d.timings, ...input.timings },
    faults: input.faults ?? [],
    ...(generated !== undefined ? { extraModels: { ...generated, ...input.extraModels } } : {}),
  };
}

/** The extra models `generatedModels` names (zero-padded numbers, so the list sorts as it counts). */
function generatedModels(g: SimConfig['generatedModels']): Record<string, SimModelKind> | undefined {
  if (g === undefined || !(g.count > 0)) return undefined;
  const width = String(g.count).length < 3 ? 3 : String(g.count).length;
  const out: Record<string, SimModelKind> = {};
  for (let i = 1; i <= g.count; i++)
    out[`${g.prefix ?? 'sim-chat-'}${String(i).padStart(width, '0')}`] = g.kind ?? 'chat';
  return out;
}

/** Reads a JSON config file. */
export function loadSimConfigFile(path: string): SimConfigInput {
  return JSON.parse(readFileSync(path, 'utf8')) as SimConfigInput;
}
