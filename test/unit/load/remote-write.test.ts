import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';
import snappy from 'snappyjs';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../../src/load/exchange.js';
import { BUCKETS_S, MAX_CODES, RemoteWrite } from '../../../src/load/remote-write.js';
import { closeAfterTest, closedPort } from '../../helpers/servers.js';

// The remote-write 1.0 messages, as a receiver reads them (prompb's types.proto and remote.proto).
const root = protobuf.parse(`
syntax = "proto3";
package prometheus;
message WriteRequest { repeated TimeSeries timeseries = 1; }
message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
message Label { string name = 1; string value = 2; }
message Sample { double value = 1; int64 timestamp = 2; }
`).root;
const WriteRequest = root.lookupType('prometheus.WriteRequest');

interface Push {
  headers: Record<string, string | string[] | undefined>;
  series: Array<{
    labels: Array<{ name: string; value: string }>;
    samples: Array<{ value: number; timestamp: string }>;
  }>;
}

async function receiver(status = 204): Promise<{ url: string; pushes: Push[] }> {
  const pushes: Push[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = snappy.uncompress(Buffer.concat(chunks));
      const msg = WriteRequest.toObject(WriteRequest.decode(body), { longs: String, defaults: true }) as {
        timeseries?: Push['series'];
      };
      pushes.push({ headers: req.headers, series: msg.timeseries ?? [] });
      res.writeHead(status).end(status >= 400 ? 'out of order sample\nmore' : undefined);
    });
  });
  closeAfterTest(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/write`, pushes };
}

const outcome = (o: Partial<Outcome>): Outcome => ({
  api: 'chat',
  stream: true,
  ok: true,
  status: 200,
  startMs: 0,
  lagMs: 0,
  e2eMs: 120,
  ttftMs: 30,
  itlMs: [5, 7],
  sent: true,
  ...o,
});

const value = (p: Push, name: string, extra: Record<string, string> = {}): number | undefined =>
  p.series.find(
    (s) =>
      s.labels.some((l) => l.name === '__name__' && l.value === name) &&
      Object.entries(extra).every(([k, v]) => s.labels.some((l) => l.name === k && l.value === v)),
  )?.samples[0]?.value;

describe('RemoteWrite', () => {
  it('pushes cumulative series while the run goes and once at the end, with the headers of remote write 1.0', async () => {
    const rx = await receiver();
    const warnings: string[] = [];
    const rw = new RemoteWrite({
      url: rx.url,
      labels: { job: 'gw_load', run: 'r1' },
      warn: (t) => warnings.push(t),
      intervalMs: 10,
    });
    rw.start();
    rw.request('concurrency=2', outcome({}));
    rw.progress(2);
    for (let i = 0; rx.pushes.length < 2 && i < 500; i++) await new Promise((r) => setTimeout(r, 10));
    expect(rx.pushes.length).toBeGreaterThanOrEqual(2);
    rw.request('concurrency=2', outcome({ ok: false, code: 'rate_limited', status: 429 }));
    rw.request('concurrency=2', outcome({ e2eMs: 2_000_000 }));
    await rw.close();
    expect(warnings).toEqual([]);
    const last = rx.pushes[rx.pushes.length - 1] as Push;
    expect(last.headers).toMatchObject({
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
    });
    const step = { step: 'concurrency=2', run: 'r1', job: 'gw_load' };
    expect(value(last, 'gw_load_requests_total', { ...step, api: 'chat' })).toBe(3);
    expect(value(last, 'gw_load_errors_total', { ...step, code: 'rate_limited' })).toBe(1);
    expect(value(last, 'gw_load_in_flight', { run: 'r1' })).toBe(2);
    expect(value(last, 'gw_load_e2e_seconds_count', step)).toBe(2);
    expect(value(last, 'gw_load_e2e_seconds_sum', step)).toBeCloseTo(2000.12, 6);
    // 120 ms is counted from the first bound at or above it; 2000 s only in +Inf.
    expect(value(last, 'gw_load_e2e_seconds_bucket', { ...step, le: '0.1' })).toBe(0);
    expect(value(last, 'gw_load_e2e_seconds_bucket', { ...step, le: '0.1258925' })).toBe(1);
    expect(value(last, 'gw_load_e2e_seconds_bucket', { ...step, le: '100' })).toBe(1);
    expect(value(last, 'gw_load_e2e_seconds_bucket', { ...step, le: '+Inf' })).toBe(2);
    expect(value(last, 'gw_load_itl_seconds_count', step)).toBe(4);
    for (const s of last.series) {
      const names = s.labels.map((l) => l.name);
      expect(names).toEqual([...names].sort());
    }
    // One sample per series and push, strictly later each push.
    const times = rx.pushes.map((p) => Number(p.series[0]?.samples[0]?.timestamp));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1] as number);
    expect(BUCKETS_S).toHaveLength(61);
  });

  it('a refusing or absent endpoint is one warning each (the last push too), never an error', async () => {
    const rx = await receiver(400);
    for (const url of [rx.url, `http://127.0.0.1:${await closedPort()}/api/v1/write`]) {
      const warnings: string[] = [];
      const rw = new RemoteWrite({
        url,
        labels: { job: 'gw_load' },
        warn: (t) => warnings.push(t),
        intervalMs: 10,
      });
      rw.start();
      rw.request('s', outcome({}));
      await rw.close();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        url === rx.url ? /answered 400: out of order sample$/ : /failed: ECONNREFUSED/,
      );
    }
  });

  it('keeps the error codes a hostile gateway invents to a bounded set of series', async () => {
    const rx = await receiver();
    const rw = new RemoteWrite({ url: rx.url, labels: { job: 'gw_load' }, warn: () => {} });
    for (let i = 0; i < 1000; i++)
      rw.request('s', outcome({ ok: false, code: `code_${i}_${'x'.repeat(200)}` }));
    await rw.close();
    const codes = (rx.pushes[0] as Push).series
      .filter((s) => s.labels.some((l) => l.value === 'gw_load_errors_total'))
      .map((s) => s.labels.find((l) => l.name === 'code')?.value ?? '');
    expect(codes).toHaveLength(MAX_CODES + 1);
    expect(Math.max(...codes.map((c) => c.length))).toBeLessThanOrEqual(64);
    expect(value(rx.pushes[0] as Push, 'gw_load_errors_total', { code: 'other' })).toBe(1000 - MAX_CODES);
  });
});
