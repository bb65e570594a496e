/**
 * The `--every` side of the probe: sets up the metrics (server and/or file) and the webhook alerter, then runs the
 * watch loop until the signal. It prints nothing itself: notes, warnings and each run go to the caller's sinks.
 * Loaded only with `--every`.
 */
import { Alerter } from './alerts.js';
import { ProbeMetrics, serveMetrics, writeMetricsFile } from './metrics.js';
import type { ProbeReport } from './runner.js';
import { watch } from './watch.js';

/** The settings of a watch (`--every` and its companions). */
export interface WatchSettings {
  intervalMs: number;
  metricsPort?: number;
  metricsHost: string;
  metricsFile?: string;
  webhook?: string;
  alertAfter: number;
}

/** What a watch needs from its caller. */
export interface WatchRun {
  settings: WatchSettings;
  /** The gateway the alerts name (user info and query removed). */
  gateway: string;
  /** Ends the watch (after the final flush). */
  signal: AbortSignal;
  runOnce(): Promise<ProbeReport>;
  /** After each run (history, output). */
  afterRun(report: ProbeReport): void;
  /** Masks secrets in what a webhook receives. */
  redact(text: string): string;
  note(text: string): void;
  warn(text: string): void;
}

/** How a watch ended: its runs, and the webhook deliveries when there was a webhook. */
export interface WatchEnd {
  runs: number;
  webhook?: { delivered: number; dropped: number };
}

/** Runs the watch until the signal (Ctrl-C, SIGTERM) and the final flush. */
export async function runWatch(o: WatchRun): Promise<WatchEnd> {
  const w = o.settings;
  const metrics = w.metricsPort !== undefined || w.metricsFile !== undefined ? new ProbeMetrics() : undefined;
  const server =
    metrics !== undefined && w.metricsPort !== undefined
      ? await serveMetrics(metrics, w.metricsHost, w.metricsPort)
      : undefined;
  if (server !== undefined) o.note(`metrics: ${server.url}`);
  const alerter =
    w.webhook !== undefined
      ? new Alerter({
          url: w.webhook,
          after: w.alertAfter,
          gateway: o.gateway,
          redact: (t) => o.redact(t),
          warn: (t) => o.warn(t),
        })
      : undefined;
  try {
    const runs = await watch({
      intervalMs: w.intervalMs,
      signal: o.signal,
      runOnce: () => o.runOnce(),
      afterRun: (r) => o.afterRun(r),
      ...(metrics !== undefined ? { metrics } : {}),
      ...(w.metricsFile !== undefined ? { metricsFile: w.metricsFile, writeMetrics: writeMetricsFile } : {}),
      ...(alerter !== undefined ? { alerter } : {}),
      warn: (t) => o.warn(t),
      onStop: async () => server?.close(),
    });
    return alerter !== undefined
      ? { runs, webhook: { delivered: alerter.delivered, dropped: alerter.dropped } }
      : { runs };
  } finally {
    await server?.close().catch(() => undefined);
  }
}
