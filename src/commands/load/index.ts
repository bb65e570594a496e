import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';
import { loadCompareVerb } from './compare.js';
import { loadMergeVerb } from './merge.js';

// Values stay text here: src/load checks them (parseLoadFlags) with their own messages.
/** The flags of an `--api video` run, which `load merge` also takes (to check the runs it merges agree). */
export const videoFlags = {
  seconds: flag(z.string().optional(), {
    flag: '--seconds <n>',
    help: "--api video: length of each video (default: the model's minimum)",
  }),
  resolution: flag(z.string().optional(), {
    flag: '--resolution <res>',
    help: '--api video: 720p (default) or 1080p',
  }),
  pollInterval: flag(z.string().optional(), {
    flag: '--poll-interval <dur>',
    help: '--api video: fixed poll interval, the queue wait resolution (default 500ms)',
  }),
  videoTimeout: flag(z.string().optional(), {
    flag: '--video-timeout <dur>',
    help: '--api video: give up on a task after this long (default 30m)',
  }),
};

export const loadFlags = z.object({
  model: flag(z.string().optional(), {
    flag: '-m, --model <model>',
    help: 'model to load (see `gw models`)',
  }),
  api: flag(z.string().optional(), {
    flag: '--api <api>',
    help: 'chat | responses | messages | embeddings (default chat) | video (needs --budget)',
  }),
  mix: flag(z.string().optional(), {
    flag: '--mix <spec>',
    help: 'several apis by weight: chat=3,messages=1,embeddings@text-embedding-v4=1',
  }),
  stream: flag(z.boolean().optional(), {
    flag: '--stream',
    help: 'stream answers (default; needed for time to first token)',
    negate: 'ask for whole answers',
  }),
  concurrency: flag(z.string().optional(), {
    flag: '--concurrency <n>',
    help: 'closed loop: n requests in flight (default 10)',
  }),
  rate: flag(z.string().optional(), {
    flag: '--rate <req/s>',
    help: 'open loop: arrivals per second, whatever the answers do',
  }),
  arrival: flag(z.string().optional(), {
    flag: '--arrival <kind>',
    help: 'open-loop gaps: poisson (default) | constant | gamma:<cv>',
  }),
  duration: flag(z.string().optional(), {
    flag: '--duration <dur>',
    help: 'length of each step, e.g. 30s, 2m (default 30s)',
  }),
  requests: flag(z.string().optional(), {
    flag: '--requests <n>',
    help: 'end each step after n requests instead of a duration',
  }),
  sweep: flag(z.string().optional(), {
    flag: '--sweep <spec>',
    help: 'one step per value: concurrency=1,2,4,8 or rate=10,20,40',
  }),
  warmup: flag(z.string().optional(), {
    flag: '--warmup <n>',
    help: 'send n requests first and leave them out of every figure (default 0)',
  }),
  connections: flag(z.string().optional(), {
    flag: '--connections <n>',
    help: 'open loop: most connections to open (default 4096); requests beyond wait for one, their wait counted',
  }),
  rampUp: flag(z.string().optional(), {
    flag: '--ramp-up <dur>',
    help: 'closed loop: start the users evenly over this long, e.g. 2s (default: all at once)',
  }),
  promptWords: flag(z.string().optional(), {
    flag: '--prompt-words <n>',
    help: 'words per generated prompt (default 32)',
  }),
  maxTokens: flag(z.string().optional(), {
    flag: '--max-tokens <n>',
    help: 'output token limit per request (default 64)',
  }),
  prompts: flag(z.string().optional(), {
    flag: '--prompts <file.jsonl>',
    help: 'prompts, one per line: "text" or {"prompt": "text", "max_tokens": n}',
  }),
  slo: flag(z.string().optional(), {
    flag: '--slo <expr>',
    help: "pass mark, e.g. 'ttft.p95<800ms,e2e.p99<10s,errors<1%' (exit 1 when missed)",
  }),
  stopOn: flag(z.string().optional(), {
    flag: '--stop-on <expr>',
    help: "end the run or sweep early, e.g. 'errors>5%' or saturation",
  }),
  budget: flag(z.array(z.string()).optional(), {
    flag: '--budget <amount><cur>',
    help: 'cap on the list price of created videos, e.g. 20CNY (repeatable, one per currency; --api video)',
    repeat: 'collect',
  }),
  ...videoFlags,
  out: flag(z.string().optional(), {
    flag: '--out <file.json>',
    help: 'write the report (JSON, with histograms) to a file',
  }),
  csv: flag(z.string().optional(), {
    flag: '--csv <file>',
    help: 'write one CSV row per request (timings, status, error code, request id)',
  }),
  html: flag(z.string().optional(), {
    flag: '--html <file>',
    help: 'write a self-contained HTML report (CDFs, histograms, requests/s, sweep curve)',
  }),
  baseline: flag(z.string().optional(), {
    flag: '--baseline <file.json>',
    help: 'compare with an earlier report; exit 1 on a regression',
  }),
  tolerance: flag(z.string().optional(), {
    flag: '--tolerance <pct>',
    help: 'with --baseline: allowed regression (default 10%)',
  }),
  seed: flag(z.string().optional(), {
    flag: '--seed <n>',
    help: 'seed of the arrival schedule and the mix (default 1)',
  }),
});

/** `gw load`: latency and throughput of the gateway under load. */
export const loadVerb = defineVerb<typeof loadFlags>({
  name: 'load',
  description: 'latency and throughput of the gateway under load (closed or open loop, sweeps, SLOs)',
  flags: loadFlags,
  notes: `Closed loop (--concurrency n): n requests in flight, each sent when the previous one ended; latency is
measured from the moment the request is written on its connection (opening connections is --warmup's job, not a
latency). Open loop (--rate r): arrivals on a schedule whatever the answers do; every latency is measured from the
request's scheduled start (no coordinated omission) and a run whose client fell behind its schedule says so, with
the connections it had open (one is opened for each request that finds none free, up to --connections, default
4096: at thousands of requests per second a cold start can open thousands; --warmup opens them before measuring,
--connections caps them, and a request that finds none free past the cap waits for one, its wait counted).

Warm-up and ramp-up: in the closed loop, --warmup's requests are the first step's own first requests, sent by the
same users and left out of every figure; the step's clock (and --duration) starts with the first measured request.
--ramp-up <dur> starts user i at i × dur / n instead of all at once: n users starting in the same millisecond send
n requests in one burst, and against a gateway whose answers take about the same time they keep coming back in
bursts, where a first token waits in gw's own queue behind the others' work. With a --warmup that covers the ramp,
measuring starts once the users are spread. In the open loop the warm-up runs before the first step.

Timing: time to first token (ttft) is taken when the bytes of the first content event arrive, before any parsing;
inter-token gaps (itl) between content events' arrivals; time per output token (tpot) = (e2e - ttft) / (tokens - 1);
output tokens come from the gateway's usage (chat streams ask for it with stream_options.include_usage), never from
a guessing tokenizer. Failed requests (an error status, a cut connection, a timeout, a stream with an error event or
without its final event) are counted by code and never dropped: every SLO counts them as misses, and goodput
counts only successes meeting every latency threshold of --slo.

SLO terms: <metric>[.<stat>]<op><value>, joined by commas. Metrics ttft, e2e, itl, tpot (stats p50 p90 p95 p99
p999 max mean; durations like 800ms or 2s), errors (percent), rps, goodput, tps (per second). With --sweep the
report names the heaviest step meeting the SLO and exits 1 only when no step does. --stop-on takes the same terms
(checked live once 20 requests finished) and 'saturation': between sweep steps, throughput rose < 5 % while median
latency rose > 20 %; in one closed-loop run, from the per-second timeline, the successes per second of the last 3
whole seconds rose < 5 % over the 3 before while their mean latency rose > 20 % (judged every 250 ms from the 6th
second on, once the earlier 3 s hold 10 successes); in open loop, completions stay under 80 % of the rate for 3 s
while more requests are in flight than the rate.

Video (--api video): a closed loop of video tasks (--concurrency, default 2; --requests, default 4, or
--duration). Each item: a create with the cheapest settings not overridden (the model's minimum --seconds, 720p),
journaled before it is polled (gw history lists it), polled every --poll-interval until a terminal state, then its
result streamed and discarded (the bytes are counted, nothing is written to disk). Measured: create latency (until
the create answered), queue wait (until a poll first saw the task leave queued; known to within the poll
interval), time to completion, download time and throughput. failed/cancelled tasks, timeouts and failed
downloads are errors. --budget (e.g. 10CNY) is required: no create is sent once the list price of the videos
created so far plus one would pass it; the report shows the estimated spend. Not with --rate, --sweep, --mix,
--slo, --stop-on, --csv, --baseline, --tolerance, --warmup, --ramp-up, --connections, --seed.

Sweep: one step per value, the throughput-latency curve, and the knee (the step with the highest successful
requests/s per median latency: where more load stops buying throughput).

Output: a summary and latency table per step on stdout; --json prints the report (schema gw.load.v1: counts,
errors by code, percentiles, CDF points, HdrHistogram histograms, a per-second timeline, the sweep and its knee).
Exit codes: 0 ok · 1 SLO missed, baseline regressed, or no request succeeded · 2 bad flags (nothing sent)
· 3 no base URL/token, or the gateway answered 401/403 · 130 interrupted (after the partial report).`,
  examples: [
    `gw load -m chat-3.7-plus --concurrency 16 --duration 1m --slo 'ttft.p95<800ms,errors<1%'`,
    `gw load -m chat-3.7-plus --concurrency 256 --ramp-up 2s --warmup 1024 --requests 2048 --csv requests.csv`,
    `gw load -m chat-3.7-plus --rate 50 --arrival gamma:2 --duration 2m --out run.json`,
    `gw load -m chat-3.7-plus --sweep concurrency=1,2,4,8,16,32 --duration 20s --stop-on saturation`,
    `gw load merge a.json b.json --out all.json && gw load compare base.json all.json --tolerance 5%`,
  ],
  handler: () => import('./run.js'),
});

/** `gw load` with its `merge` and `compare`. */
export default function loadCommand(rt: Runtime): Command {
  return verbCommand(loadVerb, rt)
    .addCommand(verbCommand(loadMergeVerb, rt))
    .addCommand(verbCommand(loadCompareVerb, rt));
}
