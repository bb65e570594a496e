/**
 * Flags of `gw load`, checked before anything is sent: every rule broken exits 2 naming the flag and the rule.
 */
import { parseDuration } from '../core/duration.js';
import { UsageError } from '../core/errors.js';
import { parseArrival, type Arrival } from './arrivals.js';
import { parseExpr, type Expr } from './expr.js';
import {
  generatedPrompts,
  parseMix,
  readPrompts,
  TEXT_APIS,
  type MixEntry,
  type Prompt,
} from './workload.js';

/** The flags as commander hands them over. */
export interface LoadFlags {
  model?: string;
  api?: string;
  mix?: string;
  stream?: boolean;
  concurrency?: string;
  rate?: string;
  arrival?: string;
  duration?: string;
  requests?: string;
  sweep?: string;
  warmup?: string;
  rampUp?: string;
  connections?: string;
  promptWords?: string;
  maxTokens?: string;
  prompts?: string;
  slo?: string;
  stopOn?: string;
  budget?: string[];
  out?: string;
  csv?: string;
  html?: string;
  baseline?: string;
  tolerance?: string;
  seed?: string;
  /** --api video only. */
  seconds?: string;
  resolution?: string;
  pollInterval?: string;
  videoTimeout?: string;
}

/** A checked load specification. */
export interface LoadSpec {
  model: string;
  mix: MixEntry[];
  stream: boolean;
  mode: 'closed' | 'open';
  concurrency?: number;
  rate?: number;
  arrival: Arrival;
  durationMs?: number;
  requests?: number;
  sweep?: { parameter: 'concurrency' | 'rate'; values: number[] };
  warmup: number;
  /** Closed loop: the virtual users start evenly over this long. */
  rampUpMs?: number;
  /** Open loop: the most connections the pool opens. */
  connections: number;
  prompts: Prompt[];
  promptSource: string;
  maxTokens: number;
  slo?: Expr;
  stopOn?: Expr;
  out?: string;
  csv?: string;
  baseline?: string;
  tolerance: number;
  seed: number;
}

/** Defaults where the flags are silent. */
export const DEFAULTS = {
  concurrency: 10,
  durationMs: 30_000,
  promptWords: 32,
  maxTokens: 64,
  tolerance: 0.1,
  /** Open loop: connections the pool may open (a request that finds none free opens one, up to this). */
  connections: 4096,
};

function usage(flag: string, rule: string): never {
  throw new UsageError(`${flag}: ${rule}`, { field: flag });
}

/** A whole number in [min, max]. */
export function int(flag: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) usage(flag, `"${text}" must be a whole number from ${min} to ${max}`);
  const n = Number(text);
  if (n < min || n > max) usage(flag, `"${text}" must be a whole number from ${min} to ${max}`);
  return n;
}

function positive(flag: string, text: string, max: number): number {
  if (!/^\d+(\.\d+)?$/.test(text.trim())) usage(flag, `"${text}" must be a number above 0`);
  const n = Number(text);
  if (!(n > 0) || n > max) usage(flag, `"${text}" must be above 0 and at most ${max}`);
  return n;
}

/** `--tolerance 10%` (or `10`): a fraction. */
export function parseTolerance(text: string | undefined): number {
  if (text === undefined) return DEFAULTS.tolerance;
  const m = /^(\d+(?:\.\d+)?)\s*%?$/.exec(text.trim());
  if (!m) usage('--tolerance', `"${text}" must be a percentage such as 10%`);
  const v = Number(m[1]);
  if (v > 1000) usage('--tolerance', `"${text}" must be at most 1000%`);
  return v / 100;
}

const MAX_CONCURRENCY = 100_000;
const MAX_CONNECTIONS = 100_000;
const MAX_RATE = 1_000_000;

/** Checks the flags of `gw load` (not --api video, see the command). */
export function parseLoadFlags(f: LoadFlags): LoadSpec {
  if (f.model === undefined || f.model.trim() === '') usage('--model', 'is required (see `gw models`)');
  if (f.api !== undefined && f.mix !== undefined)
    usage('--mix', 'cannot be combined with --api (the mix names the apis)');
  let mix: MixEntry[];
  if (f.mix !== undefined) mix = parseMix(f.mix);
  else {
    const api = f.api ?? 'chat';
    if (!(TEXT_APIS as readonly string[]).includes(api)) {
      usage('--api', `"${api}" is not one of chat, responses, messages, embeddings, video`);
    }
    mix = [{ api: api as MixEntry['api'], weight: 1 }];
  }
  if (f.stream === true && mix.every((m) => m.api === 'embeddings')) {
    usage('--stream', 'embeddings are never streamed');
  }
  if (f.concurrency !== undefined && f.rate !== undefined) {
    usage('--rate', 'cannot be combined with --concurrency (closed loop or open loop, not both)');
  }
  if (f.duration !== undefined && f.requests !== undefined) {
    usage('--requests', 'cannot be combined with --duration (choose one end)');
  }
  let sweep: LoadSpec['sweep'];
  if (f.sweep !== undefined) {
    const m = /^(concurrency|rate)=(.+)$/.exec(f.sweep.trim());
    if (!m) usage('--sweep', `"${f.sweep}" is not concurrency=<a,b,...> or rate=<a,b,...>`);
    const parameter = m[1] as 'concurrency' | 'rate';
    const values = (m[2] as string)
      .split(',')
      .map((v) =>
        parameter === 'concurrency'
          ? (int('--sweep', v.trim(), 1, MAX_CONCURRENCY) as number)
          : positive('--sweep', v.trim(), MAX_RATE),
      );
    if (values.length < 2) usage('--sweep', 'needs at least two values');
    if (new Set(values).size !== values.length) usage('--sweep', 'has a value twice');
    if (parameter === 'concurrency' && f.rate !== undefined)
      usage('--sweep', 'concurrency=… cannot be combined with --rate');
    if (parameter === 'rate' && f.concurrency !== undefined)
      usage('--sweep', 'rate=… cannot be combined with --concurrency');
    if (parameter === 'concurrency' && f.concurrency !== undefined)
      usage('--sweep', 'concurrency=… replaces --concurrency');
    if (parameter === 'rate' && f.rate !== undefined) usage('--sweep', 'rate=… replaces --rate');
    sweep = { parameter, values };
  }
  const open = f.rate !== undefined || sweep?.parameter === 'rate';
  if (f.arrival !== undefined && !open)
    usage('--arrival', 'needs --rate (arrivals are an open-loop schedule)');
  const arrival = parseArrival(f.arrival ?? 'poisson');
  const concurrency = int('--concurrency', f.concurrency, 1, MAX_CONCURRENCY);
  const rate = f.rate !== undefined ? positive('--rate', f.rate, MAX_RATE) : undefined;
  const durationMs = f.duration !== undefined ? parseDuration(f.duration, '--duration') : undefined;
  if (durationMs !== undefined && durationMs <= 0) usage('--duration', 'must be above 0');
  const requests = int('--requests', f.requests, 1, 1_000_000_000);
  const warmup = int('--warmup', f.warmup, 0, 1_000_000) ?? 0;
  const rampUpMs = f.rampUp !== undefined ? parseDuration(f.rampUp, '--ramp-up') : undefined;
  if (rampUpMs !== undefined && open) {
    usage('--ramp-up', 'applies to the closed loop (--concurrency); open-loop arrivals are already spread');
  }
  const connections = int('--connections', f.connections, 1, MAX_CONNECTIONS) ?? DEFAULTS.connections;
  if (f.connections !== undefined && !open) {
    usage('--connections', 'applies to the open loop (--rate); the closed loop has one connection per user');
  }
  if (f.prompts !== undefined && f.promptWords !== undefined) {
    usage('--prompt-words', 'cannot be combined with --prompts (the file gives the prompts)');
  }
  const words = int('--prompt-words', f.promptWords, 1, 100_000) ?? DEFAULTS.promptWords;
  const maxTokens = int('--max-tokens', f.maxTokens, 1, 10_000_000) ?? DEFAULTS.maxTokens;
  const slo = f.slo !== undefined ? parseExpr(f.slo, '--slo') : undefined;
  const stopOn = f.stopOn !== undefined ? parseExpr(f.stopOn, '--stop-on') : undefined;
  if (f.budget !== undefined && f.budget.length > 0)
    usage('--budget', 'applies to --api video only (text requests are not priced in advance)');
  for (const [flag, v] of [
    ['--seconds', f.seconds],
    ['--resolution', f.resolution],
    ['--poll-interval', f.pollInterval],
    ['--video-timeout', f.videoTimeout],
  ] as const) {
    if (v !== undefined) usage(flag, 'applies to --api video only');
  }
  const tolerance = parseTolerance(f.tolerance);
  if (f.tolerance !== undefined && f.baseline === undefined) usage('--tolerance', 'needs --baseline');
  const seed = int('--seed', f.seed, 0, 2 ** 31 - 1) ?? 1;
  if (f.out !== undefined && f.out === f.csv) usage('--csv', 'must be another file than --out');
  const prompts = f.prompts !== undefined ? readPrompts(f.prompts) : generatedPrompts(words);
  const spec: LoadSpec = {
    model: f.model.trim(),
    mix,
    stream: f.stream ?? true,
    mode: open ? 'open' : 'closed',
    arrival,
    warmup,
    connections,
    prompts,
    promptSource: f.prompts !== undefined ? `file ${f.prompts}` : `${words} generated words`,
    maxTokens,
    tolerance,
    seed,
  };
  if (!open) spec.concurrency = concurrency ?? DEFAULTS.concurrency;
  if (rate !== undefined) spec.rate = rate;
  if (rampUpMs !== undefined && rampUpMs > 0) spec.rampUpMs = rampUpMs;
  if (requests !== undefined) spec.requests = requests;
  else spec.durationMs = durationMs ?? DEFAULTS.durationMs;
  if (sweep) spec.sweep = sweep;
  if (slo) spec.slo = slo;
  if (stopOn) spec.stopOn = stopOn;
  if (f.out !== undefined) spec.out = f.out;
  if (f.csv !== undefined) spec.csv = f.csv;
  if (f.baseline !== undefined) spec.baseline = f.baseline;
  return spec;
}
