import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnPty, type PtySession } from '../helpers/pty.js';
import { useSim } from '../helpers/sim.js';

const temps: string[] = [];
const sessions: PtySession[] = [];

afterEach(() => {
  for (const s of sessions.splice(0)) {
    try {
      s.pty.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('gw batch run on a terminal', () => {
  it('draws one live line on stderr: done, running, failed, in doubt, rate, spend', async () => {
    // The second create is held open, so the line is drawn while the batch is visibly running.
    const sim = await useSim({ faults: [{ route: 'POST /v1/videos', kind: 'slow', ms: 1000 }] });
    const d = mkdtempSync(join(tmpdir(), 'gw-batch-pty-'));
    temps.push(d);
    const file = join(d, 'jobs.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({
        custom_id: 'v1',
        method: 'POST',
        url: '/v1/videos',
        body: { model: 'clip-1.1-t2v', prompt: 'fox', seconds: 3, resolution: '720p' },
      })}\n`,
    );
    const s = spawnPty(['batch', 'run', file, '--out', join(d, 'out')], sim.env);
    sessions.push(s);
    await s.expect(/done 0\/1 · running 1 · failed 0 · in doubt 0 · [\d.]+\/s · CNY 2\.70/);
    s.pty.kill('SIGINT');
    expect(await s.exited).toBe(130);
    expect(s.output()).toContain('resume with: gw batch run');
  });
});
