/** `gw load --html` against the simulator: the path is checked first; the report draws the run's JSON. */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/load/schema.js';
import { ms } from '../../src/report/svg.js';
import { runGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';
import { useSim } from '../helpers/sim.js';

const dir = tempDir('gw-report-load-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const capacity = { capacity: { maxConcurrent: 2, queue: 1000, ttftMs: 30, tokensPerSecond: 2000 } };

function kinds(html: string): string[] {
  return [...html.matchAll(/<svg class="plot" data-kind="(\w+)"/g)].map((m) => m[1] as string);
}

describe('gw load --html', () => {
  it('a missing directory is exit 2 before any request', async () => {
    const sim = await useSim(capacity);
    const r = await runGw(
      ['load', '-m', 'chat-3.7-plus', '--requests', '4', '--html', join(dir, 'no', 'x.html')],
      {
        env: sim.env,
      },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--html .* does not exist/);
    expect(sim.requests).toEqual([]);
  });

  it('a sweep: the curve with its knee, CDFs per step, TTFT and inter-token histograms, requests/s', async () => {
    const sim = await useSim(capacity);
    const file = join(dir, 'sweep.html');
    const r = await runGw(
      [
        'load',
        '-m',
        'chat-3.7-plus',
        '--sweep',
        'concurrency=1,2,4,8',
        '--requests',
        '16',
        '--max-tokens',
        '8',
        '--json',
        '--html',
        file,
      ],
      { env: sim.env },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as RunReport;
    const html = readFileSync(file, 'utf8');
    expect(kinds(html)).toEqual(['line', 'line', 'line', 'line', 'histogram', 'histogram', 'line']);
    expect(html).toContain('id="load-sweep"');
    if (report.sweep?.knee) expect(html).toContain(`knee c=${report.sweep.knee.value}`);
    // The figures are the JSON's.
    for (const st of report.steps) {
      expect(html).toContain(`<td class="nw">${st.label}</td><td class="num">${st.requests}</td>`);
      expect(html).toContain(`<td class="num">${ms(st.latency_ms.e2e.p95)}</td>`);
    }
    expect(html).toContain(report.target);
    expect(html).not.toContain(sim.env.GW_TOKEN);
  });
});
