/**
 * Acceptance after a deployment: the stream grammar of every model on every text API (`--all-models`), the
 * baseline diff (`--baseline`), the probe history per gateway, and spend from `--prices`.
 */
import { describe, expect, it } from 'vitest';
import type { HistoryView } from '../../src/probe/history-view.js';
import type { ProbeReport } from '../../src/probe/runner.js';
import { isolatedDirs, runGw, type GwResult } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';

function parse(r: GwResult): ProbeReport {
  try {
    return JSON.parse(r.stdout) as ProbeReport;
  } catch {
    throw new Error(`not one JSON document (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  }
}

function cell(report: ProbeReport, id: string): ProbeReport['checks'][number] {
  const c = report.checks.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no row ${id} in ${report.checks.map((x) => x.id).join(', ')}`);
  return c;
}

const TEXT = ['--all-models', '--kind', 'chat,responses,messages', '--both-stream-modes', '--json'];

describe('gw probe --all-models: the stream grammar of each model on each text API', () => {
  it('a cut stream, a missing terminal event and an event after it are failed cells with their reason', async () => {
    const sim = await useSim({
      extraModels: { 'sim-chat-a': 'chat', 'sim-chat-b': 'chat', 'sim-chat-c': 'chat' },
      faults: [
        { route: 'POST /v1/chat/completions', kind: 'drop', after: 2, model: 'sim-chat-a', stream: true },
        { route: 'POST /v1/responses', kind: 'no-terminal', model: 'sim-chat-b' },
        { route: 'POST /v1/messages', kind: 'after-terminal', model: 'sim-chat-c' },
      ],
    });
    const r = await runGw(['probe', ...TEXT], { env: sim.env });
    expect(r.exitCode, r.stderr).toBe(1);
    const report = parse(r);
    const failed = report.checks.filter((c) => c.status === 'fail');
    expect(failed.map((c) => [c.id, c.error?.code, c.class])).toEqual([
      ['chat-stream:sim-chat-a', 'stream_cut', 'model'],
      ['responses-stream:sim-chat-b', 'stream_no_terminal', 'model'],
      ['messages-stream:sim-chat-c', 'stream_after_terminal', 'model'],
    ]);
    expect(cell(report, 'chat-stream:sim-chat-a').detail).toMatch(
      /^stream grammar: the stream was cut after \d+ events/,
    );
    expect(cell(report, 'responses-stream:sim-chat-b').detail).toBe(
      'stream grammar: the stream ended after 16 events without its terminal event (response.completed)',
    );
    expect(cell(report, 'messages-stream:sim-chat-c').detail).toMatch(
      /^stream grammar: POST \/v1\/messages: an event after the final event \(message_stop\): event: message_delta, data: /,
    );
    // Every other cell of those models passed (or warned of a burst: the test simulator does not pace streams).
    for (const id of [
      'chat:sim-chat-a',
      'responses-stream:sim-chat-a',
      'chat-stream:sim-chat-b',
      'messages-stream:sim-chat-b',
      'chat-stream:sim-chat-c',
    ])
      expect(cell(report, id).status, id).not.toBe('fail');
    // One request per cell.
    const posts = sim.requests.filter((q) => q.method === 'POST');
    const rows = report.checks.filter((c) => c.id !== 'models' && c.status !== 'skip');
    expect(posts).toHaveLength(rows.length);
  });
});

describe('gw probe history per gateway', () => {
  it('names each run’s gateway, never averages two gateways, compares like with like', async () => {
    const a = await useSim({ extraModels: { 'sim-chat-a': 'chat' } });
    const b = await useSim();
    const env = { ...a.env, ...isolatedDirs() };
    const probeA = (args: string[]) =>
      runGw(['probe', ...args, '--json'], { env: { ...env, GW_BASE_URL: a.baseUrl } });
    const probeB = (args: string[]) =>
      runGw(['probe', ...args, '--json'], { env: { ...env, GW_BASE_URL: b.baseUrl } });
    const kinds = ['--all-models', '--kind', 'chat'];
    expect((await probeA(kinds)).exitCode).toBe(0);
    b.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'status', status: 500 });
    expect((await probeB(['--only', 'models,chat'])).exitCode).toBe(1);
    // A narrower run of gateway A (other kinds): sim-chat-a is not asked for, so it does not vanish.
    expect((await probeA(['--all-models', '--kind', 'embeddings'])).exitCode).toBe(0);
    const h = JSON.parse((await runGw(['probe', 'history', '--json'], { env })).stdout) as HistoryView;
    expect(new Set(h.runs.map((r) => r.gateway))).toEqual(new Set([a.baseUrl, b.baseUrl]));
    const chat = h.series.filter((s) => s.check === 'chat' && s.model === 'chat-3.7-plus');
    expect(chat.map((s) => [s.gateway, s.runs, s.uptime['5m']])).toEqual(
      [
        [a.baseUrl, 1, 1],
        [b.baseUrl, 1, 0],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    expect(h.changes).toEqual([]);
    // The same kinds again, with sim-chat-a gone: now it vanished, on gateway A only.
    a.sim.addFault({ route: '*', kind: 'vanish', model: 'sim-chat-a' });
    expect((await probeA(kinds)).exitCode).toBe(0);
    const h2 = JSON.parse(
      (await runGw(['probe', 'history', '--json', '--gateway', `${a.baseUrl}/v1`], { env })).stdout,
    ) as HistoryView;
    expect(h2.changes.map((c) => [c.kind, c.model, c.gateway])).toEqual([
      ['vanished', 'sim-chat-a', a.baseUrl],
    ]);
    expect(new Set(h2.runs.map((r) => r.gateway))).toEqual(new Set([a.baseUrl]));
    const text = await runGw(['probe', 'history'], { env });
    expect(text.stdout).toContain(`${b.baseUrl}\tchat\tchat-3.7-plus\t1\t0%`);
    expect(text.stdout).toContain(`${a.baseUrl}\tchat\tchat-3.7-plus\t2\t100%`);
  });
});
