import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';
import { TIMING_GLOSSARY } from '../../load/glossary.js';
import { loadFlags } from './flags.js';
import { loadCompareVerb } from './compare.js';
import { loadImportVerb } from './import.js';
import { loadMergeVerb } from './merge.js';

export { loadFlags } from './flags.js';

/** `gw load`: latency and throughput of the gateway under load. */
export const loadVerb = defineVerb<typeof loadFlags>({
  name: 'load',
  description: 'latency and throughput of the gateway under load (closed or open loop, sweeps, SLOs)',
  flags: loadFlags,
  notes: `Closed loop (--concurrency n): n requests in flight, each sent when the previous one ended; latency is
measured from the moment the request is written on its connection (opening connections is --warmup's job, not a
latency). Open loop (--rate r): arrivals on a schedule whatever the answers do; every latency is measured from the
request's scheduled start (no coordinated omission) and a run whose client fell behind its schedule says so. At most
--connections requests (default 4096, a connection each) are in flight; a later arrival waits for one to end (its
wait counted as lag), and past 100000 waiting arrivals it is dropped: never sent, counted in the schedule figures,
so a gateway that stops answering costs memory in the connections, not in the rate. --warmup opens the connections
before measuring.

A step ends at its --duration: requests still in flight are aborted and counted as cancelled (a gateway that never
answers cannot hold the run), and arrivals still waiting are counted as dropped. Requests go through the same
connection settings as every command: --timeout (the wait for the answer's headers and each gap in its body),
--ca-file, HTTPS_PROXY/HTTP_PROXY/NO_PROXY, the token only to the gateway's origin, redirects never followed. A
request that fails before a byte is sent (no file descriptor left: ulimit -n) pauses its user, doubling up to
250 ms, and the report says "open-files limit reached".

Warm-up and ramp-up: in the closed loop, --warmup's requests are the first step's own first requests, sent by the
same users and left out of every figure; the step's clock (and --duration) starts with the first measured request.
--ramp-up <dur> starts user i at i × dur / n instead of all at once: n users starting in the same millisecond send
n requests in one burst, and against a gateway whose answers take about the same time they keep coming back in
bursts, where a first token waits in gw's own queue behind the others' work. With a --warmup that covers the ramp,
measuring starts once the users are spread. In the open loop the warm-up runs before the first step.

${TIMING_GLOSSARY}
A content event's time is taken when its bytes arrive, before any parsing; output tokens come from the gateway's
usage (chat streams ask for it with stream_options.include_usage), never from a guessing tokenizer. Failed
requests (an error status, a cut connection, a timeout, a stream with an error event or without its final event)
are counted by code and never dropped: every SLO counts them as misses, and goodput counts only successes meeting
every latency threshold of --slo.

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
created so far plus one would pass it (a finished video counts at the list price of the length it reports, a
create the gateway refused not at all); the report shows the estimated spend. Not with --rate, --sweep, --mix,
--slo, --stop-on, --csv, --baseline, --tolerance, --warmup, --ramp-up, --connections, --seed, --shard, --start-at.

Shards (--shard k/n, or auto: the scheduler's index and count, as gw batch run --help lists them; GW_SHARD=k/n
without the flag): n machines run one test. In the open loop shard k sends every n-th arrival of the one seeded
schedule (arrivals k-1, k-1+n, …; --requests counts the whole schedule), so the shards' union is what one machine
would have sent; in the closed loop it runs ⌊c/n⌋ of the users, one more on the first c mod n shards, and its
share of --requests the same way (each shard needs a user). --warmup is each machine's own. --start-at <RFC 3339
time | Unix ms> waits until that instant and starts the schedule there (within a few ms on an idle machine: a
timer, then turns of the event loop), so shards given one instant start together without talking; a machine that
starts more than 1 s late runs its schedule from its own start and warns. Each report records its shard, its run
(a hash of the gateway, the settings, the prompts, --start-at and n) and its late start (start_at.late_ms); CSV
start_ms counts from the instant. gw load merge joins the shards into one histogram of all their requests. Not
with --api video.

Replay (--replay <trace.jsonl>): one request per line, {"t_ms", "api", "model", "body"?, "input_words"?,
"max_tokens"?, "session"?}, in time order; api is chat, responses, messages, embeddings, images or video (alpha
and beta tasks are not replayed). Each line is sent at t_ms / --speed after the replay's start, whatever the
answers do; latency counts from that time and how late the request left is its schedule lag (per request in
--csv, percentiles in the report, and the open loop's warning when the run fell behind). A body is sent whole
(its model must be the line's), or synthesised from input_words (default 32) and max_tokens (default
--max-tokens), streamed unless --no-stream. The file is checked whole before anything is sent: a line that is
not JSON, breaks the line's schema or the contract, or whose t_ms is earlier than the line before (sort the file:
a trace is in time order) is exit 2 naming the line and field. Then it is streamed, read ahead by at most 4096
lines. Turns of a session go in order: a turn due while the previous one is in flight waits for its answer, and
its lag counts from that answer. Video lines are created, followed and downloaded as --api video does and need
--budget: no create is sent once the list price of the videos created plus one would pass it (the rest are
counted as not sent). The report has the usual figures, and per api and model (by_api_model). --connections caps
the requests in flight (default 4096). Before the trace's clock starts, a GET /v1/models checks the token and
opens a connection. --shard k/n splits the trace by session (every turn of a session on one shard, other lines by
their index), --start-at puts t_ms 0 at one instant on every shard, and gw load merge joins the shards' reports.
gw load import turns a --csv of an earlier run or a Mooncake trace into a trace.

Prices (--prices <prices.json>, with every mode): {"currency": "USD", "models": {"<model>": {"input_per_million",
"output_per_million", "cached_per_million", "per_image", "per_video_second", "currency"?}}} (CNY or USD; a model's
own currency overrides the file's; the file gw probe and gw batch run take). Each measured request is priced from
what its answer reported, never from a tokenizer: its usage (input tokens, those read from a cache at
cached_per_million, else at the input rate; output tokens), an images answer's images, a finished video's seconds;
a failed request counts when its answer reported them (a stream cut after its usage). Each request is rounded to a
millionth and a step adds them up exactly. The summary shows the step's tokens and spend, --json each step's
input_tokens, cached_tokens and spend {total, priced, unpriced, unpriced_models} and the run's spend, --html a
figure and a column, --csv four more columns (input_tokens, cached_tokens, spend, currency). A successful request
the file cannot price (its model is not in it, or it reported no usage) is counted as unpriced, named in a warning,
and left out of the spend, never counted as 0. --warmup's requests are left out as from every figure. gw load merge
adds the parts' spend and refuses parts priced with other files, or priced and not. A damaged file is exit 2 naming
the field, before anything is sent.
--budget with --prices (chat, responses, messages, embeddings; e.g. --budget 2USD): a request is sent only when its
upper bound (every byte of its body an input token at the dearer of the input and cached rates, plus --max-tokens
output tokens; embeddings their bytes) fits beside the spend of the requests that ended and the bounds of those in
flight, warm-ups included; when its answer ends, the spend its usage reports replaces the bound (an error answer
or a request never written counts 0; a cut stream or a timeout keeps the bound). A closed-loop user (or an
open-loop arrival, its wait counted as lag) waits while requests in flight may leave room; once no room can come the run stops sending (stopped: budget, a warning; exit 0
unless something else failed), the requests in flight finish, and the real spend never passes the budget. Every
request must have a bound in a currency given to --budget, and the budget must cover one: exit 2 before anything is
sent otherwise. Each shard keeps its own budget. With --replay, --budget counts the video lines only.

Sweep: one step per value, the throughput-latency curve, and the knee (the step with the highest successful
requests/s per median latency: where more load stops buying throughput).

Output: the latency table on stdout, with a summary per step beside it (on stdout on a terminal; off a terminal on
stderr, so a pipe gets only the TSV table); --json prints the report (schema gw.load.v1: counts, errors by code,
percentiles, CDF points, HdrHistogram histograms, a per-second timeline, the sweep and its knee). --slo shows each
term's measured value with its unit. --csv writes one row per request; a text cell that begins with =, +, -, @, a
tab or a CR gets a leading ' (OWASP's rule), so a spreadsheet never runs it as a formula.
Exit codes: 0 ok · 1 SLO missed, baseline regressed, or no request succeeded · 2 bad flags (nothing sent)
· 3 no base URL/token, or the gateway answered 401/403 · 130 interrupted (after the partial report).`,
  examples: [
    `gw load -m chat-3.7-plus --concurrency 16 --duration 1m --slo 'ttft.p95<800ms,errors<1%'`,
    `gw load -m chat-3.7-plus --concurrency 256 --ramp-up 2s --warmup 1024 --requests 2048 --csv requests.csv`,
    `gw load -m chat-3.7-plus --rate 50 --arrival gamma:2 --duration 2m --out run.json`,
    `gw load -m chat-3.7-plus --sweep concurrency=1,2,4,8,16,32 --duration 20s --stop-on saturation`,
    `gw load merge a.json b.json --out all.json && gw load compare base.json all.json --tolerance 5%`,
    `gw load -m chat-3.7-plus --rate 300 --duration 1m --shard auto --start-at "$START_AT" --out "run-$SLURM_ARRAY_TASK_ID.json"`,
    `gw load --replay trace.jsonl --speed 2 --budget 20CNY --csv requests.csv`,
    `gw load -m chat-3.7-plus --mix chat=3,embeddings@text-embedding-v4=1 --requests 500 --prices prices.json --csv requests.csv`,
  ],
  handler: () => import('./run.js'),
});

/** `gw load` with its `merge` and `compare`. */
export default function loadCommand(rt: Runtime): Command {
  return verbCommand(loadVerb, rt)
    .addCommand(verbCommand(loadMergeVerb, rt))
    .addCommand(verbCommand(loadCompareVerb, rt))
    .addCommand(verbCommand(loadImportVerb, rt));
}
