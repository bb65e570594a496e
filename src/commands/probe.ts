import { Command, Option } from 'commander';
import type { Runtime } from './context.js';

const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

interface ProbeOptions {
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
}

const JSON_HELP = `
JSON report (--json), one document:
  {"gateway": "<base url>", "startedAt": "<iso>", "finishedAt": "<iso>", "durationMs": 1234,
   "checks": [{"id": "chat", "status": "pass|fail|warn|skip", "latencyMs": 210.5, "ttftMs": 40.1,
               "requestId": "…", "detail": "…", "error": {"code", "message", "status", "requestId", "hint"},
               "data": {…}}],
   "summary": {"passed": 6, "failed": 0, "warned": 0, "skipped": 0}}
  ttftMs only for streams; error only for failures; data holds extras (video: videoId, listPrice, state).

Checks: models, chat, chat-stream, responses, messages, video (common.md §4 rule 5);
  --extended adds model-not-found, invalid-duration, invalid-resolution (each also checks the common.md
  §2.4 error body: message ending with "(request id)", error.request_id equal to the header) and embeddings.
Exit: 0 every check that ran passed (warnings allowed) · 1 a check failed · 2 bad flags · 3 no base URL/token, 401

Examples:
  gw probe --sim
  gw probe --extended --junit probe.xml
  gw probe --model chat-3.7-plus --model clip-1.1-t2v --video-timeout 15m
  gw probe --skip video --json | jq '.summary'`;

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
    .addHelpText('after', JSON_HELP)
    .action(
      rt.action(async (ctx, opts: ProbeOptions) => {
        // The code the first check needs loads at once (the file reads overlap); nothing starts before the flags
        // are checked. ctx.client() imports the same client module.
        const simCode = opts.sim ? import('../probe/sim.js').then((m) => m.loadProbeSim()) : undefined;
        const clientCode = import('../client/gateway-client.js');
        // Awaited below; a bad flag (exit 2) must not leave them unhandled.
        for (const p of [simCode, clientCode]) p?.catch(() => {});
        const [{ parseDuration }, runner] = await Promise.all([
          import('../core/duration.js'),
          import('../probe/runner.js'),
        ]);
        const selection = runner.selectChecks({
          extended: opts.extended === true,
          only: opts.only ?? [],
          skip: opts.skip ?? [],
        });
        const videoTimeoutMs = parseDuration(opts.videoTimeout, 'video-timeout');
        const plan = runner.planModels(
          { models: opts.model, ...opts },
          ctx.settings().profile.probe,
          selection.run,
        );

        // The report's path is checked before any request (a missing directory is exit 2).
        const html = opts.html !== undefined ? await import('../report/index.js') : undefined;
        html?.checkReportPath(opts.html as string);

        const sim = simCode ? await (await simCode).start() : undefined;
        try {
          const conn = sim ? { baseUrl: sim.baseUrl, tokenValue: sim.token } : {};
          // Fail on configuration (exit 3) before any check runs.
          const first = await ctx.client(conn);
          // The renderers are needed before the checks only for live lines; a --json run never loads them.
          const report = ctx.progress.enabled ? await import('../probe/report.js') : undefined;
          const live = report
            ? new report.LiveLines(
                (s) => ctx.out.io.stderr.write(s),
                selection.listed.map((c) => c.id),
                ctx.out.io.stderr.columns,
              )
            : undefined;
          live?.start();
          const result = await runner
            .runProbe({
              gateway: first.baseUrl,
              selection,
              plan,
              signal: ctx.signal,
              videoTimeoutMs,
              videoPoll: opts.sim ? { initialMs: 150, maxMs: 400 } : { initialMs: 1000, maxMs: 15_000 },
              client: (c) => ctx.client({ ...conn, ...c }),
              prepare: async (c) => {
                if (sim && c.family !== undefined) await sim.ready(c.family);
              },
              note: (text) => (live ? live.log(text) : ctx.out.note(text)),
              onStart: (c) => live?.set(c.id, 'running'),
              onUpdate: (c, text) => live?.set(c.id, text),
              onFinish: (r) => live?.set(r.id, r.detail, r.status),
              onCreated: (kind, id, model, requestId) => {
                if (sim) return; // a simulator's videos vanish with it
                ctx.recordCreated(first, { kind, id, model, requestId });
              },
            })
            .finally(() => live?.stop());

          const render = async () => report ?? import('../probe/report.js');
          if (opts.junit !== undefined) await (await render()).writeJUnit(opts.junit, result);
          if (html && opts.html !== undefined) {
            const doc = html.probeHtml(result, html.reportMeta(command, result.gateway));
            await html.writeHtml(opts.html, doc, ctx.redactor);
          }
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
