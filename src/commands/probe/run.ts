import type { Context } from '../../cli/context.js';
import type { CommandLike } from '../../report/index.js';
import type { Flags } from '../../cli/verb.js';
import type { probeFlags } from './index.js';
import type { CreatedKind, ProbeReport } from '../../probe/runner.js';
import type { OperatorFlags } from '../../probe/options.js';
import type { Exchange } from '../../client/gateway-client.js';

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

/** Runs the checklist (once, or every --every). */
export default async function run(ctx: Context, parsed: Flags<typeof probeFlags>): Promise<number> {
  // The schema leaves absent flags out (never `key: undefined`), which is what ProbeOptions means.
  const opts = parsed as ProbeOptions;
  const command = ctx.command as CommandLike;
  // The code the first check needs loads at once (the file reads overlap); nothing starts before the flags
  // are checked. ctx.client() imports the same client module.
  const simCode = opts.sim ? import('../../probe/sim.js').then((m) => m.loadProbeSim()) : undefined;
  const clientCode = import('../../client/gateway-client.js');
  // Awaited below; a bad flag (exit 2) must not leave them unhandled.
  for (const p of [simCode, clientCode]) p?.catch(() => {});
  const operator = OPERATOR_FLAGS.some((k) => opts[k] !== undefined);
  const [{ parseDuration }, runner, ops] = await Promise.all([
    import('../../core/duration.js'),
    import('../../probe/runner.js'),
    operator ? import('../../probe/options.js') : undefined,
  ]);
  const settings = ops?.parseOperatorFlags(opts) ?? {};
  if (settings.watch !== undefined && opts.junit !== undefined) {
    throw new (await import('../../core/errors.js')).UsageError(
      '--junit: not with --every (a watch reports through --metrics-* and --webhook)',
      { field: '--junit' },
    );
  }
  const allModels = settings.allModels;
  if (allModels !== undefined) {
    const clash = (['only', 'skip', 'extended'] as const).find((k) => opts[k] !== undefined);
    if (clash !== undefined) {
      throw new (await import('../../core/errors.js')).UsageError(
        `--${clash}: not with --all-models (it probes every listed model; use --kind and --skip-model)`,
        { field: `--${clash}` },
      );
    }
  }
  const selection = runner.selectChecks({
    extended: opts.extended === true,
    only: opts.only ?? [],
    skip: opts.skip ?? [],
  });
  // A watch would create a paid video every run: the video check runs in a watch only when --only names it.
  if (settings.watch !== undefined && selection.run.has('video') && opts.only?.includes('video') !== true) {
    selection.run.delete('video');
    selection.skipReason.set(
      'video',
      'skipped in a watch: each run would create a paid video (--only video to include it)',
    );
  }
  const videoTimeoutMs = parseDuration(opts.videoTimeout, '--video-timeout');
  const plan = runner.planModels(
    { models: opts.model, ...opts },
    ctx.settings().profile.probe,
    selection.run,
  );

  // The report's path is checked before any request (a missing directory is exit 2). A watch has no
  // single report to write: its history is `gw probe history --html`.
  if (settings.watch !== undefined && opts.html !== undefined) {
    throw new (await import('../../core/errors.js')).UsageError(
      '--html: not with --every (gw probe history --html draws the runs of a watch)',
      { field: '--html' },
    );
  }
  if (opts.junit !== undefined)
    (await import('../../report/output.js')).prepareReportPath(opts.junit, 'junit');
  const html = opts.html !== undefined ? await import('../../report/index.js') : undefined;
  const writeHtml = html?.htmlReport(opts.html as string, command, html.probeHtml, ctx.redactor);

  const sim =
    allModels !== undefined && opts.sim
      ? await (await import('../../probe/sim.js')).startFullProbeSim()
      : simCode
        ? await (await simCode).start()
        : undefined;
  try {
    const conn = sim ? { baseUrl: sim.baseUrl, tokenValue: sim.token } : {};
    // Fail on configuration (exit 3) before any check runs.
    const first = await ctx.client(conn);
    const videoPoll = opts.sim ? { initialMs: 150, maxMs: 400 } : { initialMs: 1000, maxMs: 15_000 };
    const onCreated = (kind: CreatedKind, id: string, model: string, requestId: string | undefined): void => {
      if (sim) return; // a simulator's videos vanish with it
      ctx.recordCreated(first, { kind, id, model, requestId });
    };
    const watching = settings.watch !== undefined;
    // A watch reuses its clients run after run (see src/probe/client-pool.ts); a single run makes its own.
    const pool = watching
      ? new (await import('../../probe/client-pool.js')).ClientPool((c) => ctx.client({ ...conn, ...c }))
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
          await import('../../probe/all-models.js')
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
      if (!sim) {
        // The journal keeps the last state of what the run created and followed (`gw history`).
        for (const c of report.checks) {
          const state = typeof c.data?.state === 'string' ? c.data.state : undefined;
          if (state === undefined) continue;
          if (typeof c.data?.videoId === 'string') ctx.journal().update('video', c.data.videoId, state);
          else if (typeof c.data?.taskId === 'string')
            ctx.journal().update('beta-task', c.data.taskId, state);
        }
      }
      if (settings.slo !== undefined || settings.warnSlo !== undefined) {
        (await import('../../probe/slo.js')).applySlo(report.checks, settings.slo, settings.warnSlo);
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
        await import('../../probe/watch-command.js')
      ).runWatch(ctx, settings.watch, first.baseUrl, () => runOnce(), record);
    }

    // The renderers are needed before the checks only for live lines; a --json run never loads them.
    const report =
      ctx.progress.enabled && allModels === undefined ? await import('../../probe/report.js') : undefined;
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

    const render = async () => report ?? import('../../probe/report.js');
    if (opts.junit !== undefined) await (await render()).writeJUnit(opts.junit, result);
    await writeHtml?.(result, result.gateway);
    await ctx.out.result(result, async (r) => (await render()).printTable(ctx.out, r));
    return runner.exitCodeOf(result);
  } finally {
    await sim?.close();
  }
}

/** Appends each run to the probe history (a failure to write is a warning: the probe's answer matters more). */
async function historyWriter(ctx: Context): Promise<(r: ProbeReport) => void> {
  const [{ appendHistory, toHistoryRun }, { stateDir }] = await Promise.all([
    import('../../probe/history.js'),
    import('../../core/paths.js'),
  ]);
  const dir = stateDir(ctx.io.env);
  return (r) => {
    const problem = appendHistory(dir, toHistoryRun(r));
    if (problem !== undefined) ctx.out.warn(problem);
  };
}
