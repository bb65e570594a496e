/**
 * Acceptance after a deployment: the stream grammar of every model on every text API (`--all-models`), the
 * baseline diff (`--baseline`), the probe history per gateway, and spend from `--prices`.
 */
import { describe, expect, it } from 'vitest';
import type { ProbeReport } from '../../src/probe/runner.js';
import { runGw, type GwResult } from '../helpers/gw.js';
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
