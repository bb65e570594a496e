/**
 * The probe as a library (`import { runProbe } from 'gw'`): one options object in, the report out, against gw sim;
 * nothing printed, everything told through the sinks, the same request-id rule per check whether the caller hands
 * it a client (each check gets its own view sharing the connections) or a factory.
 */
import { describe, expect, it, vi } from 'vitest';
import { GatewayClient, exitCodeOf, runProbe, selectChecks, type CheckRecord } from '../../src/index.js';
import { useSim } from '../helpers/sim.js';

describe('runProbe (library)', () => {
  it('runs the base checklist with a client, reports through the sinks, prints nothing', async () => {
    // Tokens a few ms apart: a stream in one burst would only warn (a buffering proxy).
    const sim = await useSim({ timings: { streamDelayMs: 5 } });
    const client = new GatewayClient({ baseUrl: sim.env.GW_BASE_URL, token: sim.env.GW_TOKEN });
    const write = vi.spyOn(process.stdout, 'write');
    const finished: CheckRecord[] = [];
    const created: string[] = [];
    const notes: string[] = [];
    try {
      const report = await runProbe({
        client,
        videoPoll: { initialMs: 10, maxMs: 20 },
        sinks: {
          finish: (r) => finished.push(r),
          created: (_k, id) => created.push(id),
          note: (t) => notes.push(t),
        },
      });
      expect(report.gateway).toBe(client.baseUrl);
      expect(report.checks.map((c) => [c.id, c.status])).toEqual([
        ['models', 'pass'],
        ['chat', 'pass'],
        ['chat-stream', 'pass'],
        ['responses', 'pass'],
        ['messages', 'pass'],
        ['video', 'pass'],
      ]);
      expect(report.checks.every((c) => /^req-sim-/.test(c.requestId ?? ''))).toBe(true);
      expect(report.checks.find((c) => c.id === 'chat')?.model).toBe('chat-3.7-plus');
      expect(exitCodeOf(report)).toBe(0);
      expect(finished.map((r) => r.id).sort()).toEqual(report.checks.map((c) => c.id).sort());
      expect(created).toEqual([report.checks.find((c) => c.id === 'video')?.data?.videoId]);
      expect(notes.join('\n')).toMatch(/list price CNY/);
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
      await client.close();
    }
  });

  it('takes a client factory, a selection, SLO bounds and a clock', async () => {
    const sim = await useSim();
    const made: GatewayClient[] = [];
    let t = 0;
    const report = await runProbe({
      gateway: sim.env.GW_BASE_URL,
      client: (c) => {
        const client = new GatewayClient({ baseUrl: sim.env.GW_BASE_URL, token: sim.env.GW_TOKEN, ...c });
        made.push(client);
        return client;
      },
      selection: selectChecks({ extended: false, only: ['models', 'chat'], skip: [] }),
      // Every reading of the clock is 100 ms later: each check's latency is 100 ms, over the 50 ms bound.
      clock: { now: () => (t += 100), date: () => new Date(Date.UTC(2026, 0, 1)) },
      slo: { latency: 50 },
    });
    await Promise.all(made.map((c) => c.close()));
    expect(made.length).toBe(2);
    expect(report.startedAt).toBe('2026-01-01T00:00:00.000Z');
    expect(
      report.checks.filter((c) => c.status !== 'skip').map((c) => [c.id, c.status, c.slo?.verdict]),
    ).toEqual([
      ['models', 'fail', 'failed'],
      ['chat', 'fail', 'failed'],
    ]);
    expect(report.slo).toEqual({ fail: { latency: 50 } });
    expect(exitCodeOf(report)).toBe(1);
  });
});
