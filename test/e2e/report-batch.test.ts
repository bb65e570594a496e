/** `gw batch status --html` on a batch run against the simulator (videos, one of which fails, and chats). */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';
import { useSim } from '../helpers/sim.js';

const dir = tempDir('gw-report-batch-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kinds(html: string): string[] {
  return [...html.matchAll(/<svg class="plot" data-kind="(\w+)"/g)].map((m) => m[1] as string);
}

const video = (id: string, prompt = `a fox ${id}`) => ({
  custom_id: id,
  method: 'POST',
  url: '/v1/videos',
  body: { model: 'clip-1.1-t2v', prompt, seconds: 3, resolution: '720p' },
});
const chat = (id: string) => ({
  custom_id: id,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'chat-3.7-plus', messages: [{ role: 'user', content: `hello ${id}` }] },
});

describe('gw batch status --html', () => {
  it('items by state over time, each item, spend with the budget, failures by code; the JSON figures', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const input = join(dir, 'jobs.jsonl');
    const lines = [video('v1'), video('v2'), video('v3', 'a fox [sim:fail]'), chat('c1'), chat('c2')];
    writeFileSync(input, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const out = join(dir, 'out');
    const run = await runGw(
      ['batch', 'run', input, '--out', out, '--no-download', '--budget', '20CNY', '--allow-unpriced'],
      {
        env,
      },
    );
    expect(run.exitCode, run.stderr).toBe(1); // one video failed
    const file = join(dir, 'batch.html');
    const r = await runGw(['batch', 'status', out, '--json', '--html', file], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      counts: { total: number; succeeded: number; failed: number };
      failures_by_code: Record<string, number>;
      spend: { estimated: Record<string, number> };
      budgets?: Record<string, number>;
    };
    expect(doc.counts).toMatchObject({ total: 5, succeeded: 4, failed: 1 });
    expect(doc.budgets).toEqual({ CNY: 20 });
    const html = readFileSync(file, 'utf8');
    expect(kinds(html)).toEqual(['stacked', 'timeline', 'line', 'bars']);
    expect(html).toContain(`<dt>items</dt><dd>${doc.counts.total}</dd>`);
    expect(html).toContain(`<dt>failed</dt><dd>${doc.counts.failed}</dd>`);
    for (const code of Object.keys(doc.failures_by_code)) expect(html).toContain(`>${code}</text>`);
    expect(html).toContain(`CNY ${doc.spend.estimated.CNY?.toFixed(2)}`);
    expect(html).toContain('budget CNY 20.00');
    for (const l of lines) expect(html).toContain(`>${l.custom_id}</text>`);
    expect(html).toContain(sim.baseUrl);
    expect(html).not.toContain(sim.env.GW_TOKEN);
  });

  it('a missing directory for --html is exit 2', async () => {
    const r = await runGw(['batch', 'status', dir, '--html', join(dir, 'no', 'x.html')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--html .* does not exist/);
  });
});
