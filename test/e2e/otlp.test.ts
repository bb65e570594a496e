/**
 * `--otlp`: the real bin/gw exports to a receiver that decodes OTLP with the official protobuf definitions. A span
 * per gateway request (the same trace and span ids the gateway saw in traceparent), the GenAI client metrics by
 * their semantic-convention names; a collector that refuses or hangs costs a warning, never the run.
 */
import { copyFileSync, linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/load/schema.js';
import { GW_EXE, spawnGw } from '../helpers/gw.js';
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp.js';
import { closedPort } from '../helpers/servers.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const GENAI = [
  'gen_ai.client.operation.duration',
  'gen_ai.client.operation.time_to_first_chunk',
  'gen_ai.client.operation.time_per_output_chunk',
  'gen_ai.client.token.usage',
];
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** The trace and span ids the simulator saw, from its log entries since `from`. */
function seen(
  sim: Awaited<ReturnType<typeof useSim>>,
  from: number,
): { traces: Set<string>; spans: string[] } {
  const ids = sim.requests.slice(from).map((q) => TRACEPARENT.exec(q.traceparent ?? ''));
  return { traces: new Set(ids.map((m) => m?.[1] ?? '')), spans: ids.map((m) => m?.[2] ?? '') };
}

function sorted(spans: ReceivedSpan[]): string[] {
  return spans.map((s) => s.spanId).sort();
}

describe('gw --otlp', () => {
  it('gw load: a span per request with the ids the gateway saw, and the GenAI metrics', async () => {
    const sim = await useSim({
      capacity: { maxConcurrent: 8, queue: 100, ttftMs: 5, tokensPerSecond: 5000 },
    });
    const otlp = await startOtlpReceiver();
    const r = await spawnGw(
      [
        'load',
        '-m',
        'chat-3.7-plus',
        '--concurrency',
        '3',
        '--requests',
        '12',
        '--max-tokens',
        '8',
        '--json',
        '--otlp',
        otlp.url,
      ],
      { env: sim.env },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/warning/);
    const report = JSON.parse(r.stdout) as RunReport;
    expect(report.steps[0]?.requests).toBe(12);
    const gateway = seen(sim, 0);
    expect(otlp.spans).toHaveLength(12);
    expect(new Set(otlp.spans.map((s) => s.traceId))).toEqual(gateway.traces);
    expect(sorted(otlp.spans)).toEqual([...gateway.spans].sort());
    const s = otlp.spans[0] as ReceivedSpan;
    expect(s.name).toBe('chat chat-3.7-plus');
    expect(s.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(s.endNs).toBeGreaterThan(s.startNs);
    expect(s.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.path': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'chat-3.7-plus',
      'server.address': '127.0.0.1',
    });
    const requestIds = new Set(sim.requests.map((q) => q.requestId));
    expect(otlp.spans.every((x) => requestIds.has(x.attributes['gw.request_id'] as string))).toBe(true);
    for (const name of GENAI) expect(otlp.metricNames).toContain(name);
    // Cumulative histograms: the last export holds every request.
    const last = otlp.points[otlp.points.length - 1] ?? [];
    const duration = last.filter((p) => p.name === 'gen_ai.client.operation.duration');
    expect(duration.reduce((n, p) => n + p.count, 0)).toBe(12);
    expect(duration[0]?.unit).toBe('s');
    const tokens = last.filter((p) => p.name === 'gen_ai.client.token.usage');
    expect(new Set(tokens.map((p) => p.attributes['gen_ai.token.type']))).toEqual(
      new Set(['input', 'output']),
    );
    // The traces and metrics went as OTLP/HTTP protobuf.
    expect(new Set(otlp.requests.map((q) => q.contentType))).toEqual(new Set(['application/x-protobuf']));
  }, 60_000);

  it('gw probe and gw batch (OTEL_EXPORTER_OTLP_ENDPOINT): one span per request, failures with their code', async () => {
    const sim = await useSim();
    const otlp = await startOtlpReceiver();
    const p = await spawnGw(
      ['probe', '--only', 'models,chat,chat-stream,model-not-found', '--no-history', '--otlp', otlp.url],
      {
        env: sim.env,
      },
    );
    expect(p.exitCode, p.stderr).toBe(0);
    const probe = seen(sim, 0);
    expect(sorted(otlp.spans)).toEqual([...probe.spans].sort());
    expect(new Set(otlp.spans.map((s) => s.traceId))).toEqual(probe.traces);
    const missing = otlp.spans.find((s) => s.attributes['http.response.status_code'] === 404);
    expect(missing?.status.code).toBe(2); // STATUS_CODE_ERROR
    expect(missing?.attributes['error.type']).toBe('model_not_found');
    const stream = otlp.spans.filter((s) => s.attributes['url.path'] === '/v1/chat/completions');
    expect(stream.length).toBeGreaterThanOrEqual(2);
    expect(otlp.metricNames).toContain('gen_ai.client.operation.time_to_first_chunk');

    const d = tempDir('gw-otlp-batch-');
    const file = join(d, 'jobs.jsonl');
    const line = (id: string): string =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'chat-3.7-plus', messages: [{ role: 'user', content: id }] },
      });
    writeFileSync(file, ['a', 'b', 'c', 'd'].map(line).join('\n') + '\n');
    const before = sim.requests.length;
    const spansBefore = otlp.spans.length;
    const b = await spawnGw(['batch', 'run', file, '--out', join(d, 'out')], {
      env: { ...sim.env, OTEL_EXPORTER_OTLP_ENDPOINT: `${otlp.url}/` },
    });
    expect(b.exitCode, b.stderr).toBe(0);
    const batch = seen(sim, before);
    expect(batch.spans).toHaveLength(4);
    expect(sorted(otlp.spans.slice(spansBefore))).toEqual([...batch.spans].sort());
    expect(batch.traces.size).toBe(1);
    expect(batch.traces.has(probe.traces.values().next().value as string)).toBe(false);
  }, 60_000);

  it('a collector that refuses, is not there, or never answers costs a warning, never the run', async () => {
    const sim = await useSim();
    const refusing = await startOtlpReceiver('refuse');
    const hanging = await startOtlpReceiver('hang');
    const absent = `http://127.0.0.1:${await closedPort()}`;
    for (const url of [refusing.url, absent, hanging.url]) {
      const r = await spawnGw(
        ['load', '-m', 'chat-3.7-plus', '--concurrency', '2', '--requests', '6', '--json', '--otlp', url],
        {
          env: sim.env,
        },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as RunReport).steps[0]?.ok).toBe(6);
      expect(r.stderr, url).toMatch(/^warning: telemetry: /m);
    }
    expect(refusing.requests.length).toBeGreaterThan(0);
    expect(hanging.requests.length).toBeGreaterThan(0);
  }, 90_000);

  it('refuses an --otlp or OTEL_EXPORTER_OTLP_ENDPOINT that is not an http(s) URL, before sending anything', async () => {
    const sim = await useSim();
    const flag = await spawnGw(
      ['load', '-m', 'chat-3.7-plus', '--requests', '2', '--otlp', 'grpc://collector:4317'],
      {
        env: sim.env,
      },
    );
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toMatch(/--otlp: "grpc:\/\/collector:4317" must be an http\(s\) URL/);
    const env = await spawnGw(['probe', '--only', 'models', '--no-history'], {
      env: { ...sim.env, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
    });
    expect(env.exitCode).toBe(2);
    expect(env.stderr).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318"/);
    expect(sim.requests).toHaveLength(0);
  });
});

/**
 * The executable as installed beside another build's files: <dir>/bin/gw with a <dir>/dist/otlp-worker.js that
 * does nothing (a hard link to GW_EXE, a copy across file systems).
 */
function exeBesideForeignWorker(exe: string): string {
  const dir = tempDir('gw-otlp-exe-');
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'dist'));
  writeFileSync(join(dir, 'dist', 'otlp-worker.js'), '// the worker of some other gw build\n');
  const copy = join(dir, 'bin', 'gw');
  try {
    linkSync(exe, copy);
  } catch {
    copyFileSync(exe, copy);
  }
  return copy;
}

describe.skipIf(GW_EXE === undefined)('gw --otlp in the single executable (GW_EXE)', () => {
  it('exports a span per request and the GenAI metrics from its main thread, whatever lies beside it', async () => {
    const sim = await useSim();
    const otlp = await startOtlpReceiver();
    const r = await spawnGw(
      ['probe', '--only', 'models,chat,chat-stream', '--no-history', '--otlp', otlp.url],
      {
        env: sim.env,
        exe: exeBesideForeignWorker(GW_EXE as string),
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/warning/);
    const gateway = seen(sim, 0);
    expect(gateway.spans.length).toBeGreaterThanOrEqual(3);
    expect(sorted(otlp.spans)).toEqual([...gateway.spans].sort());
    expect(new Set(otlp.spans.map((s) => s.traceId))).toEqual(gateway.traces);
    expect(otlp.spans.find((s) => s.attributes['url.path'] === '/v1/chat/completions')).toMatchObject({
      name: 'chat chat-3.7-plus',
      kind: 3,
    });
    for (const name of ['gen_ai.client.operation.duration', 'gen_ai.client.operation.time_to_first_chunk'])
      expect(otlp.metricNames).toContain(name);
    expect(new Set(otlp.requests.map((q) => q.contentType))).toEqual(new Set(['application/x-protobuf']));
  });
});
