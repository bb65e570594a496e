/**
 * `gw probe --every <dur>`: a run at each interval, never two at once (a run longer than the interval is followed
 * by the next one at once), until the signal (Ctrl-C, SIGTERM) ends it. After each run: the metrics (served and/or
 * written atomically), the history line, the webhook alerts, and one line (or one JSON document) on stdout. On
 * the signal: the run in flight is abandoned, the metrics file is written a last time, queued webhook deliveries
 * get a few seconds, the metrics server closes, and the command exits 0. Collection is left to V8 (no forced
 * collection, no V8 flag): the resident set levels off once V8 has sized its heap for the run rate.
 */
import type { Alerter } from './alerts.js';
import type { ProbeMetrics } from './metrics.js';
import type { ProbeReport } from './runner.js';

/** What the watch loop needs. */
export interface WatchOptions {
  intervalMs: number;
  signal: AbortSignal;
  runOnce(): Promise<ProbeReport>;
  /** Called after every run (history, output). */
  afterRun(report: ProbeReport): void;
  metrics?: ProbeMetrics;
  metricsFile?: string;
  writeMetrics?(file: string, m: ProbeMetrics): Promise<void>;
  alerter?: Alerter;
  warn(text: string): void;
  /** Called once at the end, before the final flush (closes the metrics server). */
  onStop?(): Promise<void>;
  /** Longest the final flush waits for webhook deliveries, ms (default 5 s). */
  flushMs?: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Runs until the signal; returns the number of completed runs. */
export async function watch(o: WatchOptions): Promise<number> {
  let runs = 0;
  const now = (): number => Number(process.hrtime.bigint()) / 1e6;
  while (!o.signal.aborted) {
    const started = now();
    let report: ProbeReport | undefined;
    try {
      report = await o.runOnce();
    } catch (e) {
      if (o.signal.aborted) break;
      if (runs === 0) throw e;
      o.warn(`probe run failed: ${(e as Error).message}`);
    }
    if (report !== undefined && !o.signal.aborted) {
      runs++;
      o.metrics?.update(report);
      if (o.metrics !== undefined && o.metricsFile !== undefined) {
        await (o.writeMetrics as NonNullable<WatchOptions['writeMetrics']>)(o.metricsFile, o.metrics).catch(
          (e: unknown) => o.warn(`cannot write the metrics file ${o.metricsFile}: ${(e as Error).message}`),
        );
      }
      o.alerter?.observe(report);
      o.afterRun(report);
    }
    await sleep(Math.max(0, o.intervalMs - (now() - started)), o.signal);
  }
  // The final flush: the last figures on disk, the queued alerts out, the server closed.
  if (o.metrics !== undefined && o.metricsFile !== undefined && o.writeMetrics !== undefined) {
    await o.writeMetrics(o.metricsFile, o.metrics).catch(() => undefined);
  }
  await o.alerter?.flush(o.flushMs ?? 5_000);
  await o.onStop?.();
  return runs;
}
