import type { CommandLike } from '../../report/index.js';
import type { Context } from '../../cli/context.js';
import type { probeHistoryFlags } from './history.js';
import type { Flags } from '../../cli/verb.js';
import { gatewayKey, viewHistory, type HistoryView } from '../../probe/history-view.js';
import { formatDuration } from '../../core/duration.js';
import { readHistory } from '../../probe/history.js';
import { stateDir } from '../../core/paths.js';

/** Uptime, percentiles and changes from the probe history. */
export default async function run(ctx: Context, opts: Flags<typeof probeHistoryFlags>): Promise<number> {
  const command = ctx.command as CommandLike;
  const parent = ctx.command?.parent;
  const sinceMs = opts.since ?? 7 * 24 * 3_600_000;
  // `gw probe --html f history`: a flag written before the subcommand's name is the parent's.
  const htmlFile = opts.html ?? parent?.opts<{ html?: string }>().html;
  // The HTML reports (their charts, hdr-histogram) load only for --html.
  const html = htmlFile !== undefined ? await import('../../report/index.js') : undefined;
  const writeHtml = html?.htmlReport(htmlFile as string, command, html.historyHtml, ctx.redactor);
  const all = readHistory(stateDir(ctx.io.env));
  const view = viewHistory(all, {
    now: Date.now(),
    sinceMs,
    check: opts.check,
    // `gw probe --model m history`: the parent's repeatable --model (as with --html above).
    model: opts.model ?? parent?.opts<{ model?: string[] }>().model?.[0],
    gateway: opts.gateway,
  });
  const gw = view.filters.gateway;
  const runs = gw !== undefined ? all.filter((r) => gatewayKey(r.gateway) === gw) : all;
  // The report names the gateways its runs probed (the history may hold several).
  await writeHtml?.(view, [...new Set(runs.map((r) => r.gateway))].join(', ') || 'none recorded');
  const empty = (): string => {
    if (all.length === 0) return 'no probe runs recorded yet (run `gw probe` or `gw probe --every 1m`)';
    const list = (xs: Iterable<string>): string => [...new Set(xs)].sort().join(', ');
    if (runs.length === 0) {
      return `no probe runs of ${gw ?? ''} recorded (gateways recorded: ${list(all.map((r) => r.gateway))})`;
    }
    const recorded = runs.flatMap((r) => r.checks);
    return (
      `no probe runs match the filters in the last ${formatDuration(sinceMs)} ` +
      `(checks recorded: ${list(recorded.map((c) => c.c))}; models: ${list(recorded.map((c) => c.m).filter(Boolean))})`
    );
  };
  await ctx.out.result(view, (v) => human(ctx, v, formatDuration, empty));
  return 0;
}

function human(
  ctx: Context,
  view: HistoryView,
  formatDuration: (ms: number) => string,
  empty: () => string,
): Promise<void> | void {
  if (view.series.length === 0) {
    ctx.out.aside(empty());
    return;
  }
  return table(ctx, view, formatDuration);
}

async function table(ctx: Context, view: HistoryView, formatDuration: (ms: number) => string): Promise<void> {
  const pct = (v: number | null | undefined): string =>
    v === null || v === undefined ? '-' : `${(Math.floor(v * 1000) / 10).toString()}%`;
  const ms = (v: number | undefined): string => (v === undefined ? '-' : formatDuration(v));
  await ctx.out.table(
    ['gateway', 'check', 'model', 'runs', '5m', '1h', '1d', '7d', 'p50', 'p90', 'p99', 'last'],
    view.series.map((s) => [
      s.gateway,
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
    // One gateway (the usual case) is named under the table, so the figures fit 80 columns.
    { keep: [1], once: [0] },
  );
  ctx.out.aside(`${view.runs.length} runs${view.since !== null ? ` since ${ctx.out.time(view.since)}` : ''}`);
  if (view.changes.length === 0) ctx.out.aside('no change since the previous run');
  else {
    ctx.out.aside('changes since the previous run (of each gateway):');
    const several = new Set(view.series.map((s) => s.gateway)).size > 1;
    for (const c of view.changes)
      ctx.out.aside(`  ${c.kind}: ${c.detail}${several ? ` (${c.gateway})` : ''}`);
  }
}
