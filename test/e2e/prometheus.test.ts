/**
 * gw against a real Prometheus (Debian's 2.42 with promtool; .ci/run installs them): Prometheus scrapes
 * `gw probe --every --metrics-port` and receives `gw load --remote-write`, and its HTTP API answers with the values
 * gw's own JSON reported; promtool accepts gw's /metrics and the alert rules the docs ship.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/load/schema.js';
import type { ProbeReport } from '../../src/probe/runner.js';
import { BUCKETS_S } from '../../src/load/remote-write.js';
import { isolatedDirs, spawnGw } from '../helpers/gw.js';
import {
  listeningPorts,
  prometheusAvailable,
  promtool,
  startPrometheus,
  until,
} from '../helpers/prometheus.js';
import { useSim } from '../helpers/sim.js';

const available = prometheusAvailable();
const ROOT = join(import.meta.dirname, '..', '..');

describe.skipIf(!available)('gw and a real Prometheus', () => {
  it('Prometheus scrapes gw probe --every --metrics-port: the values of the probe JSON; promtool checks /metrics', async () => {
    const sim = await useSim({
      capacity: { maxConcurrent: 8, queue: 100, ttftMs: 30, tokensPerSecond: 2000 },
    });
    let child!: ChildProcess;
    let out = '';
    const done = spawnGw(
      [
        'probe',
        '--every',
        '1h',
        '--metrics-port',
        '0',
        '--json',
        '--only',
        'models,chat,chat-stream,model-not-found',
      ],
      {
        env: { ...sim.env, ...isolatedDirs() },
        onSpawn: (c) => {
          child = c;
          c.stdout?.on('data', (b: Buffer) => (out += b.toString('utf8')));
        },
      },
    );
    try {
      // The first run's report (one JSON document per line); the next run is an hour away.
      const report = await until('the first probe run', async () =>
        out.includes('\n') ? (JSON.parse(out.split('\n')[0] as string) as ProbeReport) : undefined,
      );
      const port = await until('the metrics port', async () => listeningPorts(child.pid as number)[0]);
      const prom = await startPrometheus(
        [
          'global: { scrape_interval: 1s, evaluation_interval: 1s }',
          'scrape_configs:',
          '  - job_name: gw_probe',
          `    static_configs: [{ targets: ['127.0.0.1:${port}'] }]`,
        ].join('\n'),
      );
      const success = await until('probe_success scraped', async () => {
        const r = await prom.query('probe_success{job="gw_probe"}');
        return r.length > 0 ? r : undefined;
      });
      expect(success[0]?.value[1]).toBe(report.summary.failed > 0 ? '0' : '1');
      const checks = await prom.query('gw_probe_check_success');
      const ran = report.checks.filter((c) => c.status !== 'skip');
      expect(checks).toHaveLength(ran.length);
      for (const c of ran) {
        const series = checks.find(
          (s) => s.metric.check === (c.check ?? c.id) && (s.metric.model ?? '') === (c.model ?? ''),
        );
        expect(series?.value[1], c.id).toBe(c.status === 'fail' ? '0' : '1');
      }
      const stream = ran.find((c) => c.id === 'chat-stream');
      expect(stream?.ttftMs).toBeGreaterThan(0);
      const ttft = await prom.query('gw_probe_ttft_seconds{check="chat-stream"}');
      expect(ttft).toHaveLength(1);
      expect(Number(ttft[0]?.value[1])).toBeCloseTo((stream?.ttftMs as number) / 1000, 9);

      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const checked = promtool(['check', 'metrics'], text);
      expect(checked.output).toBe('');
      expect(checked.status).toBe(0);
    } finally {
      process.kill(child.pid as number, 'SIGTERM');
    }
    const end = await done;
    expect(end.exitCode, end.stderr).toBe(0);
  }, 120_000);

  it('Prometheus receives gw load --remote-write: request count, errors by code and p95 of e2e match the report', async () => {
    const sim = await useSim({
      capacity: { maxConcurrent: 8, queue: 1000, ttftMs: 20, tokensPerSecond: 800 },
      faults: [{ route: 'POST /v1/chat/completions', kind: 'status', status: 503, times: 5 }],
    });
    const prom = await startPrometheus('global: { scrape_interval: 15s }\n', [
      '--web.enable-remote-write-receiver',
    ]);
    const r = await spawnGw(
      [
        'load',
        '-m',
        'chat-3.7-plus',
        '--concurrency',
        '8',
        '--requests',
        '300',
        '--max-tokens',
        '16',
        '--json',
        '--remote-write',
        `${prom.url}/api/v1/write`,
      ],
      { env: sim.env },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/remote write/);
    const report = JSON.parse(r.stdout) as RunReport;
    const st = report.steps[0] as RunReport['steps'][number];
    const run = /^00-([0-9a-f]{32})-/.exec(sim.requests[0]?.traceparent ?? '')?.[1] as string;
    const requests = await until('the request count received', async () => {
      const v = await prom.query(`sum(gw_load_requests_total{job="gw_load",run="${run}"})`);
      return v.length > 0 ? Number(v[0]?.value[1]) : undefined;
    });
    expect(requests).toBe(st.requests);
    expect(st.errors).toBe(5);
    const errors = await prom.query(`sum by (code) (gw_load_errors_total{run="${run}"})`);
    expect(Object.fromEntries(errors.map((e) => [e.metric.code, Number(e.value[1])]))).toEqual(
      st.errors_by_code,
    );
    const p95 = await prom.query(
      `histogram_quantile(0.95, sum by (le) (gw_load_e2e_seconds_bucket{run="${run}"}))`,
    );
    const fromPrometheus = Number(p95[0]?.value[1]);
    const own = st.latency_ms.e2e.p95 / 1000;
    // Within the histogram's precision: the bucket holding gw's p95, or one either side of it.
    const i = BUCKETS_S.findIndex((b) => b >= own);
    expect(fromPrometheus).toBeGreaterThan(BUCKETS_S[Math.max(0, i - 2)] as number);
    expect(fromPrometheus).toBeLessThanOrEqual(BUCKETS_S[i + 1] as number);
    const count = await prom.query(`sum(gw_load_e2e_seconds_count{run="${run}"})`);
    expect(Number(count[0]?.value[1])).toBe(st.ok);
    expect(await prom.query(`gw_load_in_flight{run="${run}"}`)).toHaveLength(1);
  }, 120_000);

  it('promtool check rules passes on the alert rules the docs ship', () => {
    const r = promtool(['check', 'rules', join(ROOT, 'docs', 'alerts.yml')]);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/SUCCESS: \d+ rules found/);
  });
});
