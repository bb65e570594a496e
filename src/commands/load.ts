import { Command } from 'commander';
import type { Runtime } from './context.js';
import type { LoadFlags } from '../load/options.js';

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

/** `gw load`: latency and throughput of the gateway under load; `merge` and `compare` of its reports. */
export default function loadCommand(rt: Runtime): Command {
  const cmd = new Command('load')
    .description('latency and throughput of the gateway under load (closed or open loop, sweeps, SLOs)')
    .option('-m, --model <model>', 'model to load (see `gw models`)')
    .option('--api <api>', 'chat | responses | messages | embeddings (default chat) | video (needs --budget)')
    .option('--mix <spec>', 'several apis by weight: chat=3,messages=1,embeddings@text-embedding-v4=1')
    .option('--stream', 'stream answers (default; needed for time to first token)')
    .option('--no-stream', 'ask for whole answers')
    .option('--concurrency <n>', 'closed loop: n requests in flight (default 10)')
    .option('--rate <req/s>', 'open loop: arrivals per second, whatever the answers do')
    .option('--arrival <kind>', 'open-loop gaps: poisson (default) | constant | gamma:<cv>')
    .option('--duration <dur>', 'length of each step, e.g. 30s, 2m (default 30s)')
    .option('--requests <n>', 'end each step after n requests instead of a duration')
    .option('--sweep <spec>', 'one step per value: concurrency=1,2,4,8 or rate=10,20,40')
    .option('--warmup <n>', 'send n requests first and leave them out of every figure (default 0)')
    .option('--prompt-words <n>', 'words per generated prompt (default 32)')
    .option('--max-tokens <n>', 'output token limit per request (default 64)')
    .option('--prompts <file.jsonl>', 'prompts, one per line: "text" or {"prompt": "text", "max_tokens": n}')
    .option('--slo <expr>', "pass mark, e.g. 'ttft.p95<800ms,e2e.p99<10s,errors<1%' (exit 1 when missed)")
    .option('--stop-on <expr>', "end the run or sweep early, e.g. 'errors>5%' or saturation")
    .option('--budget <amount>', 'spending limit, e.g. 10USD (repeatable; --api video)', collect)
    .option('--seconds <n>', "--api video: length of each video (default: the model's minimum)")
    .option('--resolution <res>', '--api video: 720p (default) or 1080p')
    .option(
      '--poll-interval <dur>',
      '--api video: fixed poll interval, the queue wait resolution (default 500ms)',
    )
    .option('--video-timeout <dur>', '--api video: give up on a task after this long (default 30m)')
    .option('--out <file.json>', 'write the report (JSON, with histograms) to a file')
    .option('--csv <file>', 'write one CSV row per request (timings, status, error code, request id)')
    .option('--html <file>', 'write a self-contained HTML report (CDFs, histograms, requests/s, sweep curve)')
    .option('--baseline <file.json>', 'compare with an earlier report; exit 1 on a regression')
    .option('--tolerance <pct>', 'with --baseline: allowed regression (default 10%)')
    .option('--seed <n>', 'seed of the arrival schedule and the mix (default 1)')
    .addHelpText(
      'after',
      `
Closed loop (--concurrency n): n requests in flight, each sent when the previous one ended. Open loop (--rate r):
arrivals on a schedule whatever the answers do; every latency is measured from the request's scheduled start (no
coordinated omission) and a run whose client fell behind its schedule says so.

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
--slo, --stop-on, --csv, --baseline, --warmup.

Sweep: one step per value, the throughput-latency curve, and the knee (the step with the highest successful
requests/s per median latency: where more load stops buying throughput).

Output: a summary and latency table per step on stdout; --json prints the report (schema gw.load.v1: counts,
errors by code, percentiles, CDF points, HdrHistogram histograms, a per-second timeline, the sweep and its knee).
Exit codes: 0 ok · 1 SLO missed, baseline regressed, or no request succeeded · 2 bad flags (nothing sent)
· 3 no base URL/token, or the gateway answered 401/403 · 130 interrupted (after the partial report).

Examples:
  gw load -m chat-3.7-plus --concurrency 16 --duration 1m --slo 'ttft.p95<800ms,errors<1%'
  gw load -m chat-3.7-plus --rate 50 --arrival gamma:2 --duration 2m --out run.json
  gw load -m chat-3.7-plus --sweep concurrency=1,2,4,8,16,32 --duration 20s --stop-on saturation
  gw load merge a.json b.json --out all.json && gw load compare base.json all.json --tolerance 5%`,
    )
    .action(
      rt.action(async (ctx, flags: LoadFlags) => {
        if (flags.api === 'video') {
          const { runVideoLoad } = await import('../load/video.js');
          return runVideoLoad(ctx, flags);
        }
        const { parseLoadFlags } = await import('../load/options.js');
        const spec = parseLoadFlags(flags);
        const { runLoad } = await import('../load/run.js');
        const html = flags.html !== undefined ? await import('../report/index.js') : undefined;
        const write = html?.htmlReport(flags.html as string, cmd, html.loadHtml, ctx.redactor);
        return runLoad(ctx, spec, write && ((r) => write(r, r.target)));
      }),
    );

  const parentFlags = (): LoadFlags => cmd.opts<LoadFlags>();
  cmd
    .command('merge')
    .description('exact merge of reports of the same test run from several machines')
    .argument('<run.json...>', 'reports written by gw load --out')
    .option('--seconds <n>', "--api video: length of each video (default: the model's minimum)")
    .option('--resolution <res>', '--api video: 720p (default) or 1080p')
    .option(
      '--poll-interval <dur>',
      '--api video: fixed poll interval, the queue wait resolution (default 500ms)',
    )
    .option('--video-timeout <dur>', '--api video: give up on a task after this long (default 30m)')
    .option('--out <file.json>', 'write the merged report to a file')
    .option('--html <file>', 'write a self-contained HTML report of the merged run')
    .addHelpText(
      'after',
      `
Steps are matched by position and label; counts add up, histograms add bucket by bucket (percentiles of all
requests, not averages of percentiles), and each step's duration is the longest of its parts (the machines ran side
by side), so rates add up. Prints the merged summary (or the report with --json).`,
    )
    .action(
      rt.action(async (ctx, paths: string[], opts: { out?: string; html?: string }) => {
        const htmlFile = opts.html ?? parentFlags().html;
        const html = htmlFile !== undefined ? await import('../report/index.js') : undefined;
        const write = html?.htmlReport(htmlFile as string, cmd, html.loadHtml, ctx.redactor);
        const { readReport, writeAtomic, printReport } = await import('../load/run.js');
        const { mergeReports } = await import('../load/merge.js');
        const merged = mergeReports(paths.map((path) => ({ path, report: readReport(path, 'run.json') })));
        // `gw load merge a b --out f`: commander hands a flag the parent also has to the parent.
        const out = opts.out ?? parentFlags().out;
        if (out !== undefined) writeAtomic(out, `${JSON.stringify(merged)}\n`);
        await write?.(merged, merged.target);
        if (ctx.globals.json) ctx.out.json(merged);
        else await printReport(ctx, merged);
      }),
    );

  cmd
    .command('compare')
    .description('exit 1 when a percentile or the error rate regressed beyond --tolerance')
    .argument('<base.json>', 'the baseline report')
    .argument('<new.json>', 'the report to judge')
    .option('--tolerance <pct>', 'allowed regression (default 10%)')
    .addHelpText(
      'after',
      `
Compares p50/p90/p95/p99 of ttft, itl, tpot and e2e, step by step: a percentile regresses when it is more than the
tolerance (and at least 1 ms) above the baseline; the error rate when it rose by more than the tolerance and by at
least 0.1 percentage point. Exit 0 no regression, 1 regression, 2 unreadable report. --json prints
{tolerance, pass, rows, regressions, notes}.`,
    )
    .action(
      rt.action(async (ctx, basePath: string, newPath: string, opts: { tolerance?: string }) => {
        const { readReport } = await import('../load/run.js');
        const { parseTolerance } = await import('../load/options.js');
        const { compareReports, renderComparison } = await import('../load/compare.js');
        const tolerance = parseTolerance(opts.tolerance ?? parentFlags().tolerance);
        const c = compareReports(
          readReport(basePath, '<base.json>'),
          readReport(newPath, '<new.json>'),
          tolerance,
        );
        await renderComparison(ctx, c);
        return c.pass ? 0 : 1;
      }),
    );
  return cmd;
}
