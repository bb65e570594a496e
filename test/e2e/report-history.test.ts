/** `gw probe history --html` on runs recorded against the simulator; `--html` is refused with `--every`. */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';
import { useSim } from '../helpers/sim.js';

const dir = tempDir('gw-report-history-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kinds(html: string): string[] {
  return [...html.matchAll(/<svg class="plot" data-kind="(\w+)"/g)].map((m) => m[1] as string);
}

describe('gw probe history --html', () => {
  it('draws one uptime bar per check and model with a segment per run, and latency over time', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    for (let i = 0; i < 3; i++) {
      const run = await runGw(['probe', '--skip', 'video', '--quiet'], { env });
      expect(run.exitCode, run.stderr).toBe(0);
    }
    const file = join(dir, 'history.html');
    const r = await runGw(['probe', 'history', '--json', '--html', file], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const view = JSON.parse(r.stdout) as {
      runs: unknown[];
      series: { check: string; model: string; runs: number; points: unknown[] }[];
    };
    expect(view.runs).toHaveLength(3);
    const html = readFileSync(file, 'utf8');
    const ran = view.series.filter((s) => s.runs > 0);
    expect(kinds(html)).toEqual(['timeline', ...ran.map(() => 'line')]);
    const points = view.series.reduce((t, s) => t + s.points.length, 0);
    expect(html).toContain(`<g class="segs" data-n="${points}">`);
    for (const s of ran) expect(html).toContain(`>${s.model ? `${s.check} · ${s.model}` : s.check}</text>`);
    expect(html).toContain(sim.baseUrl);
    expect(html).not.toContain(sim.env.GW_TOKEN);
  });

  it('gw probe --every --html is refused (exit 2) before any request', async () => {
    const sim = await useSim();
    const r = await runGw(['probe', '--every', '1m', '--html', join(dir, 'x.html')], {
      env: { ...sim.env, ...isolatedDirs() },
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/html: not with --every/);
    expect(sim.requests).toEqual([]);
  });
});
