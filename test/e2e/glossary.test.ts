/**
 * One glossary of gw load's timings (src/load/glossary.ts), word for word wherever it is shown: `gw load --help`,
 * the JSON report, the table's footnote, the HTML report, and docs/load-report.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TIMING_GLOSSARY } from '../../src/load/glossary.js';
import type { RunReport } from '../../src/load/schema.js';
import { runGw, spawnGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const ROOT = join(import.meta.dirname, '..', '..');
const RUN = ['load', '-m', 'chat-3.7-plus', '--concurrency', '2', '--requests', '4'];

function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

describe('the glossary of timings', () => {
  it('names the peers: vLLM, AIPerf and the OpenTelemetry GenAI metrics for ttft, itl, tpot and e2e', () => {
    for (const name of ['ttft', 'itl', 'tpot', 'e2e', 'vLLM TTFT', 'AIPerf ICL', 'vLLM TPOT', 'AIPerf ITL'])
      expect(TIMING_GLOSSARY).toContain(name);
    for (const m of ['duration', 'time_to_first_chunk', 'time_per_output_chunk'])
      expect(TIMING_GLOSSARY).toContain(`gen_ai.client.operation.${m}`);
  });

  it('is printed the same by --help, the JSON report, the table footnote, the HTML report and the docs', async () => {
    const help = await spawnGw(['load', '--help']);
    expect(help.stdout).toContain(TIMING_GLOSSARY);
    const sim = await useSim();
    const json = await runGw([...RUN, '--json'], { env: sim.env });
    expect(json.exitCode, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as RunReport).glossary).toBe(TIMING_GLOSSARY);
    const html = join(tempDir('gw-glossary-'), 'load.html');
    const human = await runGw([...RUN, '--html', html], { env: sim.env });
    expect(human.exitCode, human.stderr).toBe(0);
    // Off a terminal the footnote goes beside the table (stderr), as the summaries do: stdout stays TSV.
    expect(human.stderr).toContain(TIMING_GLOSSARY);
    expect(human.stdout).not.toContain('AIPerf');
    expect(readFileSync(html, 'utf8')).toContain(escapeHtml(TIMING_GLOSSARY));
    expect(readFileSync(join(ROOT, 'docs', 'load-report.md'), 'utf8')).toContain(TIMING_GLOSSARY);
  });
});
