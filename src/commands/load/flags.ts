/**
 * The flags of `gw load` as one zod schema: each value is parsed by its field (a bad one is exit 2 naming the
 * flag as typed and the rule), and the combinations by the object's check, all before the handler module loads
 * and before anything is sent. `--api video` takes its own subset (a closed loop of paid video tasks).
 */
import * as z from 'zod';
import { httpUrl, int, parsed, parsedList, parseInteger, parseTolerance } from '../../cli/flag-types.js';
import { flag } from '../../cli/verb.js';
import { parseBudgets } from '../../core/budget.js';
import { parseDuration, parsePositiveDuration } from '../../core/duration.js';
import { UsageError } from '../../core/errors.js';
import { minVideoSecondsFor, VIDEO_RESOLUTIONS } from '../../contract/video.js';
import { parseArrival } from '../../load/arrivals.js';
import { parseShardFlag } from '../../core/shard.js';
import { parseExpr } from '../../load/expr.js';
import { videoPricing } from '../../load/video.js';
import { parseMix, TEXT_APIS } from '../../load/workload.js';
import { otlpFlag } from '../shared/otlp.js';

const MAX_CONCURRENCY = 100_000;
const MAX_VIDEO_CONCURRENCY = 1000;
const MAX_CONNECTIONS = 100_000;
const MAX_RATE = 1_000_000;

function refuse(flagName: string, rule: string): never {
  throw new UsageError(`${flagName}: ${rule}`, { field: flagName });
}

/** A number above 0 and at most `max`. */
function positiveNumber(flagName: string, text: string, max: number): number {
  if (!/^\d+(\.\d+)?$/.test(text.trim())) refuse(flagName, `"${text}" must be a number above 0`);
  const n = Number(text);
  if (!(n > 0) || n > max) refuse(flagName, `"${text}" must be above 0 and at most ${max}`);
  return n;
}

/** The default of --tolerance. */
export const DEFAULT_TOLERANCE = 0.1;

/** `--tolerance <pct>` as a field. */
export const toleranceFlag = (help: string) =>
  flag(parsed(parseTolerance).optional(), { flag: '--tolerance <pct>', help });

/** `--sweep concurrency=1,2,4` or `rate=10,20`. */
function parseSweep(text: string): { parameter: 'concurrency' | 'rate'; values: number[] } {
  const m = /^(concurrency|rate)=(.+)$/.exec(text.trim());
  if (!m) refuse('--sweep', `"${text}" is not concurrency=<a,b,...> or rate=<a,b,...>`);
  const parameter = m[1] as 'concurrency' | 'rate';
  const values = (m[2] as string)
    .split(',')
    .map((v) =>
      parameter === 'rate'
        ? positiveNumber('--sweep', v.trim(), MAX_RATE)
        : parseInteger('--sweep', v.trim(), { min: 1, max: MAX_CONCURRENCY }),
    );
  if (values.length < 2) refuse('--sweep', 'needs at least two values');
  if (new Set(values).size !== values.length) refuse('--sweep', 'has a value twice');
  return { parameter, values };
}

/** How far ahead --start-at may be (a typo of a day would hold every shard for a day). */
const MAX_START_AHEAD_MS = 24 * 3600_000;

/**
 * `--start-at <RFC 3339 time | unix ms>`: the instant as Unix ms. A number must be milliseconds (13 digits
 * today): a count of seconds would be an instant in 1970, and every shard would start at once, late.
 */
export function parseStartAt(text: string, now = Date.now()): number {
  const t = text.trim();
  let at: number;
  if (/^\d+$/.test(t)) {
    at = Number(t);
    if (at < 1e12) refuse('--start-at', `"${text}" looks like seconds; give Unix milliseconds (date +%s%3N)`);
  } else if (/^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/.test(t)) {
    at = Date.parse(t.replace(' ', 'T'));
  } else {
    at = NaN;
  }
  if (!Number.isFinite(at))
    refuse('--start-at', `"${text}" is not an RFC 3339 time (2026-01-31T12:00:00Z) or Unix milliseconds`);
  if (at > now + MAX_START_AHEAD_MS) refuse('--start-at', `"${text}" is more than 24 hours ahead`);
  return at;
}

const API_CHOICES = [...TEXT_APIS, 'video'] as const;

const fields = {
  model: flag(z.string().optional(), {
    flag: '-m, --model <model>',
    help: 'model to load (see `gw models`)',
  }),
  api: flag(
    parsed((t) => {
      if (!(API_CHOICES as readonly string[]).includes(t))
        refuse('--api', `"${t}" is not one of ${API_CHOICES.join(', ')}`);
      return t as (typeof API_CHOICES)[number];
    }).optional(),
    {
      flag: '--api <api>',
      help: 'chat | responses | messages | embeddings (default chat) | video (needs --budget)',
    },
  ),
  mix: flag(parsed(parseMix).optional(), {
    flag: '--mix <spec>',
    help: 'several apis by weight: chat=3,messages=1,embeddings@text-embedding-v4=1',
  }),
  stream: flag(z.boolean().optional(), {
    flag: '--stream',
    help: 'stream answers (default; needed for time to first token)',
    negate: 'ask for whole answers',
  }),
  concurrency: flag(int('--concurrency', { min: 1, max: MAX_CONCURRENCY }).optional(), {
    flag: '--concurrency <n>',
    help: 'closed loop: n requests in flight (default 10; --api video: 2)',
  }),
  rate: flag(parsed((t) => positiveNumber('--rate', t, MAX_RATE)).optional(), {
    flag: '--rate <req/s>',
    help: 'open loop: arrivals per second, whatever the answers do',
  }),
  arrival: flag(parsed(parseArrival).optional(), {
    flag: '--arrival <kind>',
    help: 'open-loop gaps: poisson (default) | constant | gamma:<cv>',
  }),
  duration: flag(parsed((t) => parsePositiveDuration(t, '--duration')).optional(), {
    flag: '--duration <dur>',
    help: 'length of each step, e.g. 30s, 2m (default 30s); requests still in flight then are cancelled',
  }),
  requests: flag(int('--requests', { min: 1, max: 1_000_000_000 }).optional(), {
    flag: '--requests <n>',
    help: 'end each step after n requests instead of a duration',
  }),
  sweep: flag(parsed(parseSweep).optional(), {
    flag: '--sweep <spec>',
    help: 'one step per value: concurrency=1,2,4,8 or rate=10,20,40',
  }),
  warmup: flag(int('--warmup', { min: 0, max: 1_000_000 }).optional(), {
    flag: '--warmup <n>',
    help: 'send n requests first and leave them out of every figure (default 0)',
  }),
  connections: flag(int('--connections', { min: 1, max: MAX_CONNECTIONS }).optional(), {
    flag: '--connections <n>',
    help: 'open loop: most requests in flight, a connection each (default 4096); later arrivals wait (up to 100000, then dropped), their wait counted',
  }),
  rampUp: flag(parsed((t) => parseDuration(t, '--ramp-up')).optional(), {
    flag: '--ramp-up <dur>',
    help: 'closed loop: start the users evenly over this long, e.g. 2s (default: all at once)',
  }),
  promptWords: flag(int('--prompt-words', { min: 1, max: 100_000 }).optional(), {
    flag: '--prompt-words <n>',
    help: 'words per generated prompt (default 32)',
  }),
  maxTokens: flag(int('--max-tokens', { min: 1, max: 10_000_000 }).optional(), {
    flag: '--max-tokens <n>',
    help: 'output token limit per request (default 64)',
  }),
  prompts: flag(z.string().optional(), {
    flag: '--prompts <file.jsonl>',
    help: 'prompts, one per line: "text" or {"prompt": "text", "max_tokens": n}',
  }),
  slo: flag(parsed((t) => parseExpr(t, '--slo')).optional(), {
    flag: '--slo <expr>',
    help: "pass mark, e.g. 'ttft.p95<800ms,e2e.p99<10s,errors<1%' (exit 1 when missed)",
  }),
  stopOn: flag(parsed((t) => parseExpr(t, '--stop-on')).optional(), {
    flag: '--stop-on <expr>',
    help: "end the run or sweep early, e.g. 'errors>5%' or saturation",
  }),
  budget: flag(parsedList(parseBudgets).optional(), {
    flag: '--budget <amount><cur>',
    help: 'cap on the spend, e.g. 20CNY (repeatable, one per currency): created videos at list price; with --prices, text requests too',
    repeat: 'collect',
  }),
  seconds: flag(int('--seconds', { min: 1, max: 3600 }).optional(), {
    flag: '--seconds <n>',
    help: "--api video: length of each video (default: the model's minimum)",
  }),
  resolution: flag(z.string().optional(), {
    flag: '--resolution <res>',
    help: '--api video: 720p (default) or 1080p',
    offer: VIDEO_RESOLUTIONS,
  }),
  pollInterval: flag(
    parsed((t) => {
      const ms = parseDuration(t, '--poll-interval');
      if (ms < 50) refuse('--poll-interval', 'must be at least 50ms');
      return ms;
    }).optional(),
    {
      flag: '--poll-interval <dur>',
      help: '--api video: fixed poll interval, the queue wait resolution (default 500ms)',
    },
  ),
  videoTimeout: flag(parsed((t) => parsePositiveDuration(t, '--video-timeout')).optional(), {
    flag: '--video-timeout <dur>',
    help: '--api video: give up on a task after this long (default 30m)',
  }),
  prices: flag(z.string().min(1).optional(), {
    flag: '--prices <prices.json>',
    help: 'your prices per model: each answer priced from the usage, images or seconds it reports; spend on every report',
  }),
  out: flag(z.string().optional(), {
    flag: '--out <file.json>',
    help: 'write the report (JSON, with histograms) to a file',
  }),
  csv: flag(z.string().optional(), {
    flag: '--csv <file>',
    help: "write one CSV row per request (timings, status, error code, request id); a text cell starting with = + - @, a tab or CR gets a leading ' so spreadsheets never run it as a formula",
  }),
  html: flag(z.string().optional(), {
    flag: '--html <file>',
    help: 'write a self-contained HTML report (CDFs, histograms, requests/s, sweep curve)',
  }),
  baseline: flag(z.string().optional(), {
    flag: '--baseline <file.json>',
    help: 'compare with an earlier report; exit 1 on a regression',
  }),
  tolerance: toleranceFlag('with --baseline: allowed regression (default 10%)'),
  seed: flag(int('--seed', { min: 0, max: 2 ** 31 - 1 }).optional(), {
    flag: '--seed <n>',
    help: 'seed of the arrival schedule and the mix (default 1)',
  }),
  shard: flag(parsed(parseShardFlag).optional(), {
    flag: '--shard <k/n|auto>',
    help: "run shard k of n of the test (open loop: every n-th arrival; closed loop: a share of the users); auto: the scheduler's index and count (default: GW_SHARD when set)",
  }),
  startAt: flag(parsed((t) => parseStartAt(t)).optional(), {
    flag: '--start-at <time>',
    help: 'send the first request at this instant (RFC 3339, or Unix ms): shards given one instant start together',
  }),
  otlp: otlpFlag,
  remoteWrite: flag(httpUrl('--remote-write').optional(), {
    flag: '--remote-write <url>',
    help: 'push the figures to Prometheus remote write 1.0 every 5s and at the end (e.g. http://prometheus:9090/api/v1/write)',
  }),
  replay: flag(z.string().optional(), {
    flag: '--replay <trace.jsonl>',
    help: 'send a recorded trace on its own clock, one request per line: {"t_ms", "api", "model", "body"?, "input_words"?, "max_tokens"?, "session"?} (see `gw load import`)',
  }),
  speed: flag(parsed((t) => positiveNumber('--speed', t, 1000)).optional(), {
    flag: '--speed <x>',
    help: '--replay: play the trace x times as fast (default 1; 2 = twice as fast, 0.5 = half)',
  }),
};

/** The parsed flags of `gw load`. */
export type LoadFlags = z.output<z.ZodObject<typeof fields>>;

type Given = Partial<Record<keyof LoadFlags, unknown>>;

/** Refuses the first flag of `names` that was given, with `rule`. */
function refuseAny(f: Given, names: Array<[keyof LoadFlags, string]>, rule: string): void {
  for (const [key, name] of names) if (f[key] !== undefined) refuse(name, rule);
}

/** The combinations of a text run (chat, responses, messages, embeddings). */
function textRules(f: LoadFlags): void {
  if (f.api !== undefined && f.mix !== undefined)
    refuse('--mix', 'cannot be combined with --api (the mix names the apis)');
  const apis = f.mix?.map((m) => m.api) ?? [f.api ?? 'chat'];
  if (f.stream === true && apis.every((a) => a === 'embeddings'))
    refuse('--stream', 'embeddings are never streamed');
  if (f.concurrency !== undefined && f.rate !== undefined)
    refuse('--rate', 'cannot be combined with --concurrency (closed loop or open loop, not both)');
  if (f.duration !== undefined && f.requests !== undefined)
    refuse('--requests', 'cannot be combined with --duration (choose one end)');
  const sweep = f.sweep?.parameter;
  if (sweep === 'concurrency' && f.rate !== undefined)
    refuse('--sweep', 'concurrency=… cannot be combined with --rate');
  if (sweep === 'rate' && f.concurrency !== undefined)
    refuse('--sweep', 'rate=… cannot be combined with --concurrency');
  if (sweep === 'concurrency' && f.concurrency !== undefined)
    refuse('--sweep', 'concurrency=… replaces --concurrency');
  if (sweep === 'rate' && f.rate !== undefined) refuse('--sweep', 'rate=… replaces --rate');
  const open = f.rate !== undefined || sweep === 'rate';
  if (f.arrival !== undefined && !open)
    refuse('--arrival', 'needs --rate (arrivals are an open-loop schedule)');
  if (f.rampUp !== undefined && open)
    refuse('--ramp-up', 'applies to the closed loop (--concurrency); open-loop arrivals are already spread');
  if (f.connections !== undefined && !open)
    refuse('--connections', 'applies to the open loop (--rate); the closed loop has one connection per user');
  if (f.prompts !== undefined && f.promptWords !== undefined)
    refuse('--prompt-words', 'cannot be combined with --prompts (the file gives the prompts)');
  if (f.budget !== undefined && f.prices === undefined)
    refuse(
      '--budget',
      'text requests are priced only at --prices <prices.json> (each held at its upper bound until its usage settles it)',
    );
  const video: Array<[keyof LoadFlags, string]> = [
    ['seconds', '--seconds'],
    ['resolution', '--resolution'],
    ['pollInterval', '--poll-interval'],
    ['videoTimeout', '--video-timeout'],
  ];
  refuseAny(f, video, 'applies to --api video only');
  if (f.tolerance !== undefined && f.baseline === undefined) refuse('--tolerance', 'needs --baseline');
  if (f.out !== undefined && f.out === f.csv) refuse('--csv', 'must be another file than --out');
}

/** The combinations of `--api video`, and its budget (which must cover one video at list price). */
function videoRules(f: LoadFlags): void {
  if (f.budget === undefined)
    refuse('--budget', '--api video creates paid tasks, so it needs --budget (e.g. --budget 50CNY)');
  const unsupported: Array<[keyof LoadFlags, string]> = [
    ['mix', '--mix'],
    ['rate', '--rate'],
    ['sweep', '--sweep'],
    ['arrival', '--arrival'],
    ['warmup', '--warmup'],
    ['rampUp', '--ramp-up'],
    ['connections', '--connections'],
    ['promptWords', '--prompt-words'],
    ['maxTokens', '--max-tokens'],
    ['slo', '--slo'],
    ['stopOn', '--stop-on'],
    ['csv', '--csv'],
    ['baseline', '--baseline'],
    ['tolerance', '--tolerance'],
    ['seed', '--seed'],
    ['shard', '--shard'],
    ['startAt', '--start-at'],
    ['remoteWrite', '--remote-write'],
  ];
  refuseAny(f, unsupported, 'is not supported with --api video (closed loop of video tasks)');
  if (f.stream === true) refuse('--stream', 'video tasks are not streamed');
  if (f.duration !== undefined && f.requests !== undefined)
    refuse('--requests', 'cannot be combined with --duration (choose one end)');
  if (f.concurrency !== undefined && f.concurrency > MAX_VIDEO_CONCURRENCY)
    refuse('--concurrency', `must be an integer from 1 to ${MAX_VIDEO_CONCURRENCY} with --api video`);
  const model = (f.model as string).trim();
  videoPricing({
    model,
    seconds: f.seconds ?? minVideoSecondsFor(model),
    resolution: f.resolution ?? '720p',
    budgets: f.budget,
  });
}

/**
 * The combinations of `--replay`: the trace names the apis, models and times, so the flags that shape a
 * generated workload do not apply.
 */
function replayRules(f: LoadFlags): void {
  const workload: Array<[keyof LoadFlags, string]> = [
    ['model', '--model'],
    ['api', '--api'],
    ['mix', '--mix'],
    ['concurrency', '--concurrency'],
    ['rate', '--rate'],
    ['arrival', '--arrival'],
    ['duration', '--duration'],
    ['requests', '--requests'],
    ['sweep', '--sweep'],
    ['warmup', '--warmup'],
    ['rampUp', '--ramp-up'],
    ['promptWords', '--prompt-words'],
    ['prompts', '--prompts'],
    ['stopOn', '--stop-on'],
    ['seconds', '--seconds'],
    ['resolution', '--resolution'],
    ['seed', '--seed'],
  ];
  refuseAny(f, workload, 'does not apply to --replay (the trace gives each request its api, model and time)');
  if (f.replay?.trim() === '') refuse('--replay', 'needs a file name');
  if (f.tolerance !== undefined && f.baseline === undefined) refuse('--tolerance', 'needs --baseline');
  if (f.out !== undefined && f.out === f.csv) refuse('--csv', 'must be another file than --out');
}

/** The flags of `gw load`: each value parsed, then the combinations checked. */
export const loadFlags = z.object(fields).superRefine((f, ctx) => {
  try {
    if (f.replay !== undefined) return replayRules(f);
    if (f.speed !== undefined) refuse('--speed', "needs --replay (it scales a trace's clock)");
    if (f.model === undefined || f.model.trim() === '') refuse('--model', 'is required (see `gw models`)');
    if (f.api === 'video') videoRules(f);
    else textRules(f);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    ctx.addIssue({ code: 'custom', message: e.message, params: { usageError: e } });
  }
});
