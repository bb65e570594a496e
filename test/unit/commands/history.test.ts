import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGw } from '../../helpers/gw.js';
import { useSim } from '../../helpers/sim.js';
import { tempDir } from '../../helpers/tmp.js';

interface Entry {
  kind: string;
  id: string;
  state?: string;
  model?: string;
}

async function setup() {
  const sim = await useSim();
  const state = join(tempDir('gw-history-'), 'state');
  return { sim, env: { ...sim.env, GW_STATE_DIR: state }, journal: join(state, 'journal.jsonl') };
}

const list = async (argv: string[], env: Record<string, string>): Promise<Entry[]> =>
  JSON.parse((await runGw(['--json', 'history', ...argv], { env })).stdout) as Entry[];

describe('gw history', () => {
  it('lists newest first, filters by kind, limits, and refreshes videos, beta tasks and assets', async () => {
    const { env } = await setup();
    const v1 = (await runGw(['video', 'create', 'one', '-m', 'vid-2.7-t2v'], { env })).stdout.trim();
    const v2 = (
      await runGw(['video', 'create', 'two [sim:fail]', '-m', 'vid-2.7-t2v'], { env })
    ).stdout.trim();
    const t = await runGw(['beta', 'task', 'create', 'a fox', '-m', 'gamma-video-2-0'], { env });
    expect(t.exitCode).toBe(0);
    const task = t.stdout.trim();
    const m = ['-m', 'gamma-video-2-0'];
    const group = (
      await runGw(['beta', 'asset', 'group', 'create', '--name', 'g', ...m], { env })
    ).stdout.trim();
    const asset = await runGw(
      [
        'beta',
        'asset',
        'create',
        '--group',
        group,
        '--url',
        'https://example.com/a.png',
        '--type',
        'Image',
        '--name',
        'a',
        ...m,
      ],
      { env },
    );
    expect(asset.exitCode).toBe(0);
    const assetId = asset.stdout.trim();

    expect((await list([], env)).map((e) => e.id)).toEqual([assetId, group, task, v2, v1]);
    expect((await list(['--kind', 'video', '--limit', '1'], env)).map((e) => e.id)).toEqual([v2]);
    expect((await list(['--limit', '0'], env)).length).toBe(5);

    await new Promise((r) => setTimeout(r, 150)); // the simulator's fast timings finish every task
    const refreshed = await list(['--refresh'], env);
    expect(Object.fromEntries(refreshed.map((e) => [e.id, e.state]))).toEqual({
      [v1]: 'completed',
      [v2]: 'failed',
      [task]: 'succeeded',
      [group]: undefined, // an asset group has no documented state query
      [assetId]: 'Active',
    });
    // The refreshed states were written back to the journal.
    expect(Object.fromEntries((await list([], env)).map((e) => [e.id, e.state]))[v2]).toBe('failed');
  });

  it('does not ask about entries created against another gateway', async () => {
    const { env, journal } = await setup();
    await runGw(['video', 'create', 'one', '-m', 'vid-2.7-t2v'], { env });
    appendFileSync(
      journal,
      `${JSON.stringify({ op: 'create', kind: 'video', id: 'video_elsewhere', createdAt: new Date().toISOString(), baseUrl: 'https://other.example' })}\n`,
    );
    const r = await runGw(['history', '--refresh'], { env });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/1 entries were created on another gateway/);
    expect(r.stdout).toContain('video_elsewhere');
  });
});
