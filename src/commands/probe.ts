import { Command, Option } from 'commander';
import type { Context, Runtime } from './context.js';
import type { ProbeReport } from '../probe/runner.js';
import type { OperatorFlags } from '../probe/options.js';
import type { Exchange } from '../client/gateway-client.js';
import historyCommand from './probe-history.js';

const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

/** The probe's flags; the operator flags' parsing (src/probe/options.ts) loads only when one is given. */
interface ProbeOptions extends OperatorFlags {
  model?: string[];
  chatModel?: string;
  messagesModel?: string;
  videoModel?: string;
  skip?: string[];
  only?: string[];
  extended?: boolean;
  junit?: string;
  html?: string;
  videoTimeout: string;
  sim?: boolean;
  history: boolean;
}

const OPERATOR_FLAGS = [
  'allModels',
  'kind',
  'skipModel',
  'bothStreamModes',
  'budget',
  'allowUnpriced',
  'probeImage',
  'modelTimeout',
  'slo',
  'warnSlo',
  'every',
  'metricsPort',
  'metricsHost',
  'metricsFile',
  'webhook',
  'alertAfter',
] as const;

const repeat = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const JSON_HELP = `
JSON report (--json), one document:
  {"gateway": "<base url>", "startedAt": "<iso>", "finishedAt": "<iso>", "durationMs": 1234,
   "checks": [{"id": "chat", "status": "pass|fail|warn|skip", "latencyMs": 210.5, "ttftMs": 40.1,
               "requestId": "…", "detail": "…", "error": {"code", "message", "status", "requestId", "hint"},
               "data": {…}}],
   "summary": {"passed": 6, "failed": 0, "warned": 0, "skipped": 0}}
  ttftMs only for streams; error only for failures; data holds extras (video: videoId, listPrice, state).

Checks: models, chat, chat-stream, responses, messages, video;
  --extended adds model-not-found, invalid-duration, invalid-resolution (each also checks the
  error body: message ending with "(request id)", error.request_id equal to the header) and embeddings.
Exit: 0 every check that ran passed (warnings allowed) · 1 a check failed · 2 bad flags · 3 no base URL/token, 401

Every model (--all-models): GET /v1/models, then each listed model gets the cheapest request of its kind
  (chat, responses, messages, embeddings, image, image-edit; video, alpha, beta only when named by --kind,
  with a --budget their list price is counted against). One row per model and mode: id "<check>:<model>",
  with "model", "kind" and, on failure, "class": auth, quota or rate-limit (not the model's fault; a rate
  limit only warns), timeout, model (the model is broken), unknown-kind (listed as not probed). At most
  3 requests in flight; each row is limited by --model-timeout (tasks by --video-timeout).
SLOs: --slo 'ttft<2s,latency<10s' fails a passing check that misses a bound; --warn-slo marks it degraded
  (status warn, "slo": {"verdict": "degraded", "missed": [...]}, exit 0; JUnit: passed, with the message).
  The bounds are in the report's "slo" (ms). Latency bounds skip task checks (video, alpha, beta).
Watch (--every <dur>): a run per interval, never two at once, until Ctrl-C or SIGTERM (exit 0 after the last
  metrics are written and queued webhooks sent). One summary line per run (--json: one report per line).
  The video check is skipped in a watch unless --only names it; --budget applies to each run.
  --metrics-port serves /metrics (Prometheus text, OpenMetrics on request) on 127.0.0.1 (--metrics-host);
  --metrics-file writes the same text atomically (temp file + rename: node_exporter's textfile collector).
  Metrics: probe_success, probe_duration_seconds, gw_probe_check_success{check,model},
  gw_probe_check_degraded, gw_probe_check_duration_seconds, gw_probe_ttft_seconds,
  gw_probe_check_consecutive_failures, gw_probe_last_run_timestamp_seconds, gw_probe_runs_total,
  gw_probe_failed_runs_total. --webhook <url> gets one JSON POST ({"text", "event": "alert"|"recovery",
  "check", "model", "gateway", "consecutiveFailures", "error", "detail", "requestId", "at"}; "text" suits
  Slack) when a check failed --alert-after runs in a row (default 3), and one when it passes again;
  retried with backoff; never the token or a request body.
History: every run (not --sim, not --no-history) is appended to probe-history.jsonl in the state directory
  (GW_STATE_DIR; rotated past 8 MiB); \`gw probe history\` shows uptime, percentiles and changes.

Examples:
  gw probe --sim
  gw probe --extended --junit probe.xml
  gw probe --model chat-3.7-plus --model clip-1.1-t2v --video-timeout 15m
  gw probe --skip video --json | jq '.summary'
  gw probe --all-models --both-stream-modes --skip-model 'gamma-*'
  gw probe --all-models --kind video --budget 10CNY
  gw probe --slo 'latency<10s' --warn-slo 'ttft<2s,latency<5s' --skip video
  gw probe --every 1m --skip video --metrics-port 9464 --webhook https://hooks.slack.com/services/…`;

/** `gw probe`: the acceptance checklist of common.md §4 rule 5 (CLI.md "gw probe"). */
export default function probeCommand(rt: Runtime): Command {
  const command: Command = new Command('probe')
    .description('run the acceptance checklist against the gateway (or an in-process simulator with --sim)')
    .option('--model <name>', 'a planned model the model list must contain (repeatable)', collect)
    .option('--chat-model <m>', 'model of the chat, chat-stream and responses checks')
    .option('--messages-model <m>', 'model of the messages check')
    .option('--video-model <m>', 'model of the video checks (default clip-1.1-t2v)')
    .option('--skip <check>', 'skip a check (repeatable)', collect)
    .option('--only <check>', 'run only these checks (repeatable)', collect)
    .option('--extended', 'add the contract checks that cost nothing (see below)')
    .option('--junit <file>', 'also write a JUnit XML report')
    .option('--html <file>', 'also write a self-contained HTML report (charts; opens offline)')
    .addOption(new Option('--video-timeout <dur>', 'limit for the video to end').default('10m'))
    .option('--sim', 'probe a simulator started in-process (no gateway or token needed)')
    .option('--no-history', 'do not append this run to the probe history')
    .option('--all-models', 'probe every listed model with the cheapest request of its kind')
    .option(
      '--kind <kinds>',
      'kinds --all-models probes (comma list; video, alpha, beta need --budget)',
      collect,
    )
    .option('--skip-model <glob>', 'do not probe models matching the glob (repeatable)', repeat)
    .option('--both-stream-modes', 'probe chat, responses and messages models streaming and not')
    .option(
      '--budget <amount><cur>',
      'cap on the list price of created tasks, e.g. 20CNY (repeatable)',
      repeat,
    )
    .option('--allow-unpriced', 'also create tasks whose list price the documents do not give')
    .option('--probe-image <url>', 'public https image for image edits and alpha (--sim: a stand-in)')
    .option('--model-timeout <dur>', 'time limit of one --all-models row (default 60s)')
    .option('--slo <expr>', "bounds a check must meet, e.g. 'ttft<2s,latency<10s' (missed: failed)")
    .option('--warn-slo <expr>', 'bounds below which a check is degraded (warn), not failed')
    .option('--every <dur>', 'run again at this interval until Ctrl-C or SIGTERM')
    .option('--metrics-port <port>', 'with --every: serve Prometheus metrics on /metrics (0: a free port)')
    .option('--metrics-host <host>', 'address of the metrics server (default 127.0.0.1)')
    .option('--metrics-file <path>', 'with --every: write the metrics atomically after each run')
    .option('--webhook <url>', 'with --every: POST alerts and recoveries as JSON')
    .option('--alert-after <n>', 'failed runs in a row before an alert (default 3)')
    .enablePositionalOptions()
    .addCommand(historyCommand(rt))
    .addHelpText('after', JSON_HELP)
    .action(
      rt.action(async (ctx, opts: ProbeOptions) => {
        // The code the first check needs loads at once (the file reads overlap); nothing starts before the flags
        // are checked. ctx.client() imports the same client module.
        const simCode = opts.sim ? import('../probe/sim.js').then((m) => m.loadProbeSim()) : undefined;
        const clientCode = import('../client/gateway-client.js');
        // Awaited below; a bad flag (exit 2) must not leave them unhandled.
        for (const p of [simCode, clientCode]) p?.catch(() => {});
        const operator = OPERATOR_FLAGS.some((k) => opts[k] !== undefined);
        const [{ parseDuration }, runner, ops] = await Promise.all([
          import('../core/duration.js'),
          import('../probe/runner.js'),
          operator ? import('../probe/options.js') : undefined,
        ]);
        const settings = ops?.parseOperatorFlags(opts) ?? {};
        if (settings.watch !== undefined && opts.junit !== undefined) {
          throw new (await import('../core/errors.js')).UsageError(
            'junit: not with --every (a watch reports through --metrics-* and --webhook)',
            { field: 'junit' },
          );
        }
        const allModels = settings.allModels;
        if (allModels !== undefined) {
          const clash = (['only', 'skip', 'extended'] as const).find((k) => opts[k] !== undefined);
          if (clash !== undefined) {
            throw new (await import('../core/errors.js')).UsageError(
              `${clash}: not with --all-models (it probes every listed model; use --kind and --skip-model)`,
              { field: clash },
            );
          }
        }
        const selection = runner.selectChecks({
          extended: opts.extended === true,
          only: opts.only ?? [],
          skip: opts.skip ?? [],
        });
        // A watch would create a paid video every run: the video check runs in a watch only when --only names it.
        if (
          settings.watch !== undefined &&
          selection.run.has('video') &&
          opts.only?.includes('video') !== true
        ) {
          selection.run.delete('video');
          selection.skipReason.set(
            'video',
            'skipped in a watch: each run would create a paid video (--only video to include it)',
          );
        }
        const videoTimeoutMs = parseDuration(opts.videoTimeout, 'video-timeout');
        const plan = runner.planModels(
          { models: opts.model, ...opts },
          ctx.settings().profile.probe,
          selection.run,
        );

        // The report's path is checked before any request (a missing directory is exit 2). A watch has no
        // single report to write: its history is `gw probe history --html`.
        if (settings.watch !== undefined && opts.html !== undefined) {
          throw new (await import('../core/errors.js')).UsageError(
            'html: not with --every (gw probe history --html draws the runs of a watch)',
            { field: 'html' },
          );
        }
        const html = opts.html !== undefined ? await import('../report/index.js') : undefined;
        const writeHtml = html?.htmlReport(opts.html as string, command, html.probeHtml, ctx.redactor);

        const sim =
          allModels !== undefined && opts.sim
            ? await (await import('../probe/sim.js')).startFullProbeSim()
            : simCode
              ? await (await simCode).start()
              : undefined;
        try {
          const conn = sim ? { baseUrl: sim.baseUrl, tokenValue: sim.token } : {};
          // Fail on configuration (exit 3) before any check runs.
          const first = await ctx.client(conn);
          const videoPoll = opts.sim ? { initialMs: 150, maxMs: 400 } : { initialMs: 1000, maxMs: 15_000 };
          const onCreated = (
            kind: 'video',
            id: string,
            model: string,
            requestId: string | undefined,
          ): void => {
            if (sim) return; // a simulator's videos vanish with it
            ctx.recordCreated(first, { kind, id, model, requestId });
          };
          const watching = settings.watch !== undefined;
          // A watch reuses its clients run after run (see src/probe/client-pool.ts); a single run makes its own.
          const pool = watching
            ? new (await import('../probe/client-pool.js')).ClientPool((c) => ctx.client({ ...conn, ...c }))
            : undefined;
          const clientFor = (c: { validate: boolean; onExchange: (x: Exchange) => void }) =>
            pool !== undefined ? pool.get(c) : ctx.client({ ...conn, ...c });
          // One run: the checklist or every model, then the SLOs. Live lines only for a single run on a terminal.
          const runChecks = async (live?: {
            set(id: string, t: string, s?: ProbeReport['checks'][number]['status']): void;
            log(t: string): void;
          }): Promise<ProbeReport> => {
            let report: ProbeReport;
            if (allModels !== undefined) {
              // On a terminal, one spinner line: rows done, and the last one finished.
              const spinner = watching ? undefined : await ctx.progress.spinner('probing the model list');
              let done = 0;
              report = await (
                await import('../probe/all-models.js')
              )
                .runAllModels({
                  onFinish: (r) => spinner?.update(`${++done} rows done; ${r.id}: ${r.status}`),
                  ...allModels,
                  gateway: first.baseUrl,
                  taskTimeoutMs: videoTimeoutMs,
                  videoPoll,
                  signal: ctx.signal,
                  client: clientFor,
                  note: (text) => ctx.out.note(text),
                  onCreated,
                })
                .finally(() => spinner?.stop());
            } else {
              report = await runner.runProbe({
                gateway: first.baseUrl,
                selection,
                plan,
                signal: ctx.signal,
                videoTimeoutMs,
                videoPoll,
                client: clientFor,
                prepare: async (c) => {
                  if (sim && c.family !== undefined) await sim.ready(c.family);
                },
                note: (text) => (live ? live.log(text) : watching ? undefined : ctx.out.note(text)),
                onStart: (c) => live?.set(c.id, 'running'),
                onUpdate: (c, text) => live?.set(c.id, text),
                onFinish: (r) => live?.set(r.id, r.detail, r.status),
                onCreated,
              });
              runner.labelModels(report, plan);
            }
            if (settings.slo !== undefined || settings.warnSlo !== undefined) {
              (await import('../probe/slo.js')).applySlo(report.checks, settings.slo, settings.warnSlo);
              report.summary = runner.summarize(report.checks);
              report.slo = {
                ...(settings.slo !== undefined ? { fail: settings.slo } : {}),
                ...(settings.warnSlo !== undefined ? { warn: settings.warnSlo } : {}),
              };
            }
            sim?.clearLog?.();
            return report;
          };
          const runOnce = async (live?: Parameters<typeof runChecks>[0]): Promise<ProbeReport> => {
            try {
              return await runChecks(live);
            } finally {
              pool?.release();
            }
          };
          const record = opts.history && !opts.sim ? await historyWriter(ctx) : undefined;

          if (settings.watch !== undefined) {
            return await (
              await import('../probe/watch-command.js')
            ).runWatch(ctx, settings.watch, first.baseUrl, () => runOnce(), record);
          }

          // The renderers are needed before the checks only for live lines; a --json run never loads them.
          const report =
            ctx.progress.enabled && allModels === undefined ? await import('../probe/report.js') : undefined;
          const live = report
            ? new report.LiveLines(
                (s) => ctx.out.io.stderr.write(s),
                selection.listed.map((c) => c.id),
                ctx.out.io.stderr.columns,
              )
            : undefined;
          live?.start();
          const result = await runOnce(live).finally(() => live?.stop());
          record?.(result);

          const render = async () => report ?? import('../probe/report.js');
          if (opts.junit !== undefined) await (await render()).writeJUnit(opts.junit, result);
          await writeHtml?.(result, result.gateway);
          if (ctx.globals.json) ctx.out.json(result);
          else await (await render()).printTable(ctx.out, result);
          return runner.exitCodeOf(result);
        } finally {
          await sim?.close();
        }
      }),
    );
  return command;
}

/** Appends each run to the probe history (a failure to write is a warning: the probe's answer matters more). */
async function historyWriter(ctx: Context): Promise<(r: ProbeReport) => void> {
  const [{ appendHistory, toHistoryRun }, { stateDir }] = await Promise.all([
    import('../probe/history.js'),
    import('../core/paths.js'),
  ]);
  const dir = stateDir(ctx.io.env);
  return (r) => {
    const problem = appendHistory(dir, toHistoryRun(r));
    if (problem !== undefined) ctx.out.warn(problem);
  };
}
