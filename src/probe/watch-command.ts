/**
 * The `--every` side of `gw probe`: sets up the metrics (server and/or file), the webhook alerter and the per-run
 * output, then runs the watch loop until the signal. Loaded only with `--every`.
 */
import type { Context } from '../cli/context.js';
import { Alerter, publicAddress } from './alerts.js';
import { ProbeMetrics, serveMetrics, writeMetricsFile } from './metrics.js';
import { summaryLine } from './report.js';
import type { OperatorSettings } from './options.js';
import type { ProbeReport } from './runner.js';
import { watch } from './watch.js';

/** Runs the watch; returns the exit code (0: ended by Ctrl-C or SIGTERM after the final flush). */
export async function runWatch(
  ctx: Context,
  w: NonNullable<OperatorSettings['watch']>,
  gateway: string,
  runOnce: () => Promise<ProbeReport>,
  record: ((r: ProbeReport) => void) | undefined,
): Promise<number> {
  const metrics = w.metricsPort !== undefined || w.metricsFile !== undefined ? new ProbeMetrics() : undefined;
  const server =
    metrics !== undefined && w.metricsPort !== undefined
      ? await serveMetrics(metrics, w.metricsHost, w.metricsPort)
      : undefined;
  if (server !== undefined) ctx.out.note(`metrics: ${server.url}`);
  const alerter =
    w.webhook !== undefined
      ? new Alerter({
          url: w.webhook,
          after: w.alertAfter,
          gateway: publicAddress(gateway),
          redact: (t) => ctx.redactor.redact(t),
          warn: (t) => ctx.out.warn(t),
        })
      : undefined;
  try {
    const runs = await watch({
      intervalMs: w.intervalMs,
      signal: ctx.signal,
      runOnce,
      afterRun: (r) => {
        record?.(r);
        if (ctx.globals.json) {
          ctx.out.ndjson(r);
          return;
        }
        ctx.out.line(`${r.startedAt} ${summaryLine(r)}`);
        for (const c of r.checks) {
          if (c.status === 'fail') ctx.out.line(`  FAIL ${c.id}: ${c.detail}`);
        }
      },
      ...(metrics !== undefined ? { metrics } : {}),
      ...(w.metricsFile !== undefined ? { metricsFile: w.metricsFile, writeMetrics: writeMetricsFile } : {}),
      ...(alerter !== undefined ? { alerter } : {}),
      warn: (t) => ctx.out.warn(t),
      onStop: async () => server?.close(),
    });
    ctx.out.note(
      `probe: stopped after ${runs} run${runs === 1 ? '' : 's'}${alerter !== undefined ? `; webhook: ${alerter.delivered} delivered, ${alerter.dropped} dropped` : ''}`,
    );
    return 0;
  } finally {
    await server?.close().catch(() => undefined);
  }
}
