import { Command } from 'commander';
import type { Runtime } from './context.js';

interface HistoryOptions {
  since?: string;
  check?: string;
  model?: string;
  gateway?: string;
  html?: string;
}

const HELP = `
Reads the probe history (probe-history.jsonl in the state directory, GW_STATE_DIR): every \`gw probe\` run
against a gateway (not --sim, not --no-history) and every run of \`gw probe --every\`.

Table: check, model, runs, uptime over 5m / 1h / 1d / 7d (share of runs that passed or warned; "-" when
none ran in that window), latency p50 / p90 / p99 of the runs that passed, the last status, then what changed
between the last two runs (a model that appeared or vanished, a check that started or stopped failing).

JSON (--json), one document:
  {"generatedAt", "since", "filters",
   "runs": [{"at", "durationMs", "ok", "passed", "failed", "warned"}],
   "series": [{"check", "model", "runs", "uptime": {"5m": 1, "1h": 0.98, "1d": null, "7d": …},
               "latencyMs": {"p50", "p90", "p99", "max"} | null, "ttftMs": … | null,
               "last": {"at", "status", "error", "class"}, "failingFor": 0,
               "points": [[<unix ms>, "pass|fail|warn|skip", <latency ms> | null], …]}],
   "changes": [{"kind": "appeared|vanished|started-failing|stopped-failing", "check", "model", "detail"}],
   "markers": [{"at", "kind", "check", "model", "detail"}]}   every change between consecutive runs

Examples:
  gw probe history
  gw probe history --since 1h --check chat-stream
  gw probe history --model chat-3.7-plus --json | jq '.series[].uptime'`;

/** `gw probe history`: uptime, latency percentiles and changes from the probe history. */
export default function probeHistoryCommand(rt: Runtime): Command {
  const command: Command = new Command('history')
    .description('uptime per check and model, latency percentiles, and what changed since the last run')
    .option('--since <dur>', 'only runs within this long (default 7d)')
    .option('--check <id>', 'only this check (e.g. chat, chat-stream, embeddings)')
    .option('--model <m>', 'only this model')
    .option('--html <file>', 'also write a self-contained HTML report (uptime bars, changes, latency)')
    .option('--gateway <url>', 'only runs against this gateway (the history keeps every gateway probed)')
    .addHelpText('after', HELP)
    .action(
      rt.action(async (ctx, opts: HistoryOptions) => {
        const [{ parseDuration, formatDuration }, { readHistory }, { viewHistory }, { stateDir }] =
          await Promise.all([
            import('../core/duration.js'),
            import('../probe/history.js'),
            import('../probe/history-view.js'),
            import('../core/paths.js'),
          ]);
        const sinceMs = parseDuration(
          (opts.since ?? '168h').replace(/^(\d+)d$/, (_, d: string) => `${Number(d) * 24}h`),
          'since',
        );
        // `gw probe history --html f`: commander hands a flag the parent also has to the parent.
        const htmlFile = opts.html ?? command.parent?.opts<{ html?: string }>().html;
        const html = htmlFile !== undefined ? await import('../report/index.js') : undefined;
        const writeHtml = html?.htmlReport(htmlFile as string, command, html.historyHtml, ctx.redactor);
        const all = readHistory(stateDir(ctx.io.env));
        const gw = opts.gateway?.replace(/\/+$/, '');
        const runs = gw !== undefined ? all.filter((r) => r.gateway.replace(/\/+$/, '') === gw) : all;
        const view = viewHistory(runs, {
          now: Date.now(),
          sinceMs,
          check: opts.check,
          // `gw probe history --model m`: the parent's repeatable --model takes the flag (as with --html above).
          model: opts.model ?? command.parent?.opts<{ model?: string[] }>().model?.[0],
        });
        // The report names the gateways its runs probed (the history may hold several).
        await writeHtml?.(view, [...new Set(runs.map((r) => r.gateway))].join(', ') || 'none recorded');
        if (ctx.globals.json) {
          ctx.out.json(view);
          return 0;
        }
        if (view.series.length === 0) {
          ctx.out.line('no probe runs recorded yet (run `gw probe` or `gw probe --every 1m`)');
          return 0;
        }
        const pct = (v: number | null | undefined): string =>
          v === null || v === undefined ? '-' : `${(Math.floor(v * 1000) / 10).toString()}%`;
        const ms = (v: number | undefined): string => (v === undefined ? '-' : formatDuration(v));
        await ctx.out.table(
          ['check', 'model', 'runs', '5m', '1h', '1d', '7d', 'p50', 'p90', 'p99', 'last'],
          view.series.map((s) => [
            s.check,
            s.model,
            String(s.runs),
            pct(s.uptime['5m']),
            pct(s.uptime['1h']),
            pct(s.uptime['1d']),
            pct(s.uptime['7d']),
            ms(s.latencyMs?.p50),
            ms(s.latencyMs?.p90),
            ms(s.latencyMs?.p99),
            `${s.last.status}${s.last.error !== undefined ? ` (${s.last.error})` : ''}${s.failingFor > 1 ? ` ×${s.failingFor}` : ''}`,
          ]),
        );
        ctx.out.line(`${view.runs.length} runs${view.since !== null ? ` since ${view.since}` : ''}`);
        if (view.changes.length === 0) ctx.out.line('no change since the previous run');
        else {
          ctx.out.line('changes since the previous run:');
          for (const c of view.changes) ctx.out.line(`  ${c.kind}: ${c.detail}`);
        }
        return 0;
      }),
    );
  return command;
}
