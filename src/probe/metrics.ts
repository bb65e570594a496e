/**
 * Prometheus metrics of `gw probe --every`, with prom-client on a dedicated registry (never the global one).
 * Names follow the blackbox exporter (`probe_success`, `probe_duration_seconds`) plus `gw_probe_*` gauges labelled
 * by `check` and `model`. Every run replaces the labelled series: a model that vanished from the gateway stops
 * being exported instead of lingering with its last value.
 */
import { writeFileSync, renameSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, basename } from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import { GwError } from '../core/errors.js';
import type { ProbeReport } from './runner.js';

const LABELS = ['check', 'model'] as const;

type Label = (typeof LABELS)[number];

/** One registry's metric objects (prom-client renames a counter when it serialises OpenMetrics: one set each). */
/**
 * Milliseconds as seconds, to the microsecond: 10.2 ms is 0.0102, not the float 0.010199999999999999 that a plain
 * division prints (the reports' figures have 0.1 ms at most).
 */
export function seconds(ms: number): number {
  return Number((ms / 1000).toFixed(6));
}

class MetricSet {
  readonly success: Gauge;
  readonly duration: Gauge;
  readonly checkSuccess: Gauge<Label>;
  readonly checkDegraded: Gauge<Label>;
  readonly checkDuration: Gauge<Label>;
  readonly ttft: Gauge<Label>;
  readonly failing: Gauge<Label>;
  readonly lastRun: Gauge;
  readonly runs: Counter;
  readonly failedRuns: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    const gauge = (name: string, help: string): Gauge => new Gauge({ name, help, registers });
    const labelled = (name: string, help: string): Gauge<Label> =>
      new Gauge({ name, help, labelNames: LABELS, registers });
    this.success = gauge('probe_success', 'Whether the last probe run passed (every check passed or warned)');
    this.duration = gauge('probe_duration_seconds', 'How long the last probe run took, in seconds');
    this.checkSuccess = labelled(
      'gw_probe_check_success',
      'Whether the check passed or warned (1) or failed (0) in the last run',
    );
    this.checkDegraded = labelled(
      'gw_probe_check_degraded',
      'Whether the check passed but was degraded (warn: --warn-slo missed, buffered stream, rate limited)',
    );
    this.checkDuration = labelled(
      'gw_probe_check_duration_seconds',
      'Latency of the check in the last run, seconds',
    );
    this.ttft = labelled(
      'gw_probe_ttft_seconds',
      'Time to first token of the streaming check in the last run, seconds',
    );
    this.failing = labelled('gw_probe_check_consecutive_failures', 'Runs in a row the check has failed');
    this.lastRun = gauge(
      'gw_probe_last_run_timestamp_seconds',
      'When the last probe run started, unix seconds',
    );
    this.runs = new Counter({ name: 'gw_probe_runs_total', help: 'Probe runs since gw started', registers });
    this.failedRuns = new Counter({
      name: 'gw_probe_failed_runs_total',
      help: 'Probe runs with at least one failed check since gw started',
      registers,
    });
  }

  update(r: ProbeReport, streak: ReadonlyMap<string, number>): void {
    const failed = r.summary.failed > 0;
    this.success.set(failed ? 0 : 1);
    this.duration.set(seconds(r.durationMs));
    this.lastRun.set(seconds(Date.parse(r.startedAt)));
    this.runs.inc();
    if (failed) this.failedRuns.inc();
    // Replace, never accumulate, the labelled series: a vanished model or check leaves with its series.
    for (const g of [this.checkSuccess, this.checkDegraded, this.checkDuration, this.ttft, this.failing])
      g.reset();
    for (const c of r.checks) {
      if (c.status === 'skip') continue;
      const labels = { check: c.check ?? c.id, model: c.model ?? '' };
      this.checkSuccess.set(labels, c.status === 'fail' ? 0 : 1);
      this.checkDegraded.set(labels, c.status === 'warn' ? 1 : 0);
      this.checkDuration.set(labels, seconds(c.latencyMs));
      if (c.ttftMs !== undefined) this.ttft.set(labels, seconds(c.ttftMs));
      this.failing.set(labels, streak.get(`${labels.check}\u0000${labels.model}`) ?? 0);
    }
  }
}

/** The gauges and counters of a watch, in the Prometheus text and the OpenMetrics formats. */
export class ProbeMetrics {
  readonly registry = new Registry();
  readonly openMetrics = new Registry<'application/openmetrics-text; version=1.0.0; charset=utf-8'>();
  readonly #sets: MetricSet[];
  #streak = new Map<string, number>();

  constructor() {
    this.openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    this.#sets = [new MetricSet(this.registry), new MetricSet(this.openMetrics as unknown as Registry)];
  }

  /** Replaces every series with the figures of `r`. */
  update(r: ProbeReport): void {
    // Only the checks of this run are remembered: a vanished model's streak is forgotten with its series.
    const streak = new Map<string, number>();
    for (const c of r.checks) {
      if (c.status === 'skip') continue;
      const key = `${c.check ?? c.id}\u0000${c.model ?? ''}`;
      streak.set(key, c.status === 'fail' ? (this.#streak.get(key) ?? 0) + 1 : 0);
    }
    this.#streak = streak;
    for (const set of this.#sets) set.update(r, streak);
  }

  /** The Prometheus text exposition (what node_exporter's textfile collector reads). */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Writes the metrics atomically: a temporary file in the same directory, then a rename over `file`. */
export async function writeMetricsFile(file: string, metrics: ProbeMetrics): Promise<void> {
  const text = await metrics.text();
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  // node_exporter's textfile collector reads only *.prom: a temp name without that suffix is never read half-done.
  const tmp = join(dir, `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, text, { mode: 0o644 });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Serves `/metrics` on `host:port` (port 0 picks a free one); resolves once listening. */
export async function serveMetrics(
  metrics: ProbeMetrics,
  host: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('gw probe: metrics are at /metrics\n');
      return;
    }
    const open = (req.headers.accept ?? '').includes('application/openmetrics-text');
    const reg = open ? metrics.openMetrics : metrics.registry;
    reg.metrics().then(
      (body) => {
        res.writeHead(200, { 'content-type': reg.contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => res.writeHead(500).end(),
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new GwError(
          `cannot serve metrics on ${host}:${port}: ${e.code === 'EADDRINUSE' ? 'the port is in use' : e.message}`,
          {
            code: 'metrics_listen_failed',
            hint: 'choose another --metrics-port (0 picks a free one)',
          },
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${a.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
