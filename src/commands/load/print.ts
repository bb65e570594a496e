/**
 * How `gw load` and its `merge` and `compare` print: the latency table on stdout; the summary of each step, the
 * sweep and the verdicts beside it (on stdout on a terminal, on stderr off one, so a pipe gets only the table).
 */
import type { Context } from '../../cli/context.js';
import { totalsText } from '../../contract/money.js';
import { comparisonTable, type Comparison } from '../../load/compare.js';
import { stepLines, tableRows } from '../../load/report.js';
import type { RunReport } from '../../load/schema.js';

/** The human report: a summary per step, the latency table, the sweep curve and knee, the SLO verdict. */
export async function printReport(ctx: Context, report: RunReport): Promise<void> {
  const out = ctx.out;
  for (const st of report.steps) {
    if (report.steps.length > 1) out.aside(st.label);
    out.keyValue(stepLines(st), { aside: true });
  }
  const t = tableRows(report);
  await out.table(t.head, t.rows);
  // The table's footnote: what its timings mean (beside it, like the summaries).
  if (report.glossary !== undefined) for (const line of report.glossary.split('\n')) out.aside(line);
  const sweep = report.sweep;
  if (sweep !== null) {
    const head = [sweep.parameter, 'ok req/s', 'e2e p50', 'e2e p95', 'ttft p95', 'errors'];
    const rows = sweep.points.map((p, i) => [
      `${p.value}${sweep.knee?.index === i ? ' (knee)' : ''}`,
      p.throughput_rps.toFixed(2),
      `${p.latency_p50_ms.toFixed(1)}ms`,
      `${p.latency_p95_ms.toFixed(1)}ms`,
      p.ttft_p95_ms > 0 ? `${p.ttft_p95_ms.toFixed(1)}ms` : '-',
      `${(p.error_rate * 100).toFixed(1)}%`,
    ]);
    // Off a terminal the sweep's curve is a summary beside the one table on stdout.
    if (ctx.io.stdout.isTTY === true) await out.table(head, rows);
    else for (const r of [head, ...rows]) out.aside(r.join('\t'));
    const k = sweep.knee;
    out.aside(
      k !== null ? `knee: ${sweep.parameter} ${k.value}` : 'knee: not found (needs 3 steps with successes)',
    );
    if (sweep.best_within_slo !== null)
      out.aside(`heaviest step meeting the SLO: ${sweep.parameter} ${sweep.best_within_slo.value}`);
  }
  if (report.spend !== undefined && report.steps.length > 1)
    out.aside(`spent at --prices, all steps: ${totalsText(report.spend, '0')}`);
  for (const line of shardLines(report)) out.aside(line);
  if (report.stopped !== null) out.aside(`stopped early: ${report.stopped}`);
  if (report.slo !== null) out.aside(`slo ${report.slo.expr}: ${report.slo.pass ? 'met' : 'MISSED'}`);
}

/** Which shard a report is, how late it started; or which shards a merge joined and which it lacks. */
function shardLines(report: RunReport): string[] {
  const out: string[] = [];
  if (report.shard !== undefined) out.push(`shard ${report.shard.shard} of run ${report.shard.run}`);
  if (report.start_at !== undefined) {
    const at = new Date(report.start_at.unix_ms).toISOString();
    out.push(`started ${report.start_at.late_ms.toFixed(3)}ms after --start-at ${at}`);
  }
  const m = report.shards;
  if (m !== undefined) {
    out.push(`shards merged: ${m.merged.join(', ')} of run ${m.run}`);
    if (m.missing.length > 0) out.push(`shards missing: ${m.missing.join(', ')}`);
    const late = Object.values(m.late_start_ms);
    if (late.length > 0) out.push(`latest start after --start-at: ${Math.max(...late).toFixed(3)}ms`);
  }
  return out;
}

/** A comparison as a table (or JSON with --json) and its verdict. */
export async function printComparison(ctx: Context, c: Comparison): Promise<void> {
  for (const note of c.notes) ctx.out.warn(note);
  await ctx.out.result(c, async () => {
    const t = comparisonTable(c);
    await ctx.out.table(t.head, t.rows);
    ctx.out.aside(t.verdict);
  });
}
