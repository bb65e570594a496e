/**
 * The HTML reports in a real browser (headless Chromium): each kind opens with charts that drew their data, no
 * console error, no request besides the document, no Content-Security-Policy violation, in light and dark mode
 * and in print. Screenshots are saved under test-artifacts/report/.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchHtml } from '../../src/report/batch.js';
import { historyHtml } from '../../src/report/history.js';
import { loadHtml } from '../../src/report/load.js';
import { page } from '../../src/report/page.js';
import { probeHtml } from '../../src/report/probe.js';
import { batchFixture, historyFixture, loadFixture, probeFixture } from '../helpers/report-fixtures.js';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';
import { useSim } from '../helpers/sim.js';
import { ARTIFACTS, browserAvailability, ReportBrowser, type Opened } from '../helpers/report-browser.js';

const availability = browserAvailability();
// Made only when the browser tests run: a skipped file runs no hooks, so a directory made regardless stays behind.
const dir = availability.run ? tempDir('gw-report-') : '';
let browser: ReportBrowser;

beforeAll(async () => {
  if (!availability.run) return;
  browser = new ReportBrowser();
  await browser.start();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** Opens a report, checks it is clean and drew its charts, saves screenshots; returns the chart facts. */
async function checkReport(
  file: string,
  name: string,
  expectKinds: string[],
  o: { serve?: boolean } = {},
): Promise<void> {
  // The report itself is an artefact too (open it to see what a failing assertion saw).
  mkdirSync(ARTIFACTS, { recursive: true });
  copyFileSync(file, join(ARTIFACTS, `${name}.html`));
  for (const scheme of ['light', 'dark'] as const) {
    const r: Opened = await browser.open(file, {
      scheme,
      ...(o.serve !== undefined ? { serve: o.serve } : {}),
    });
    try {
      const charts = await r.charts();
      expect(charts.map((c) => c.kind)).toEqual(expectKinds);
      for (const c of charts) {
        expect(c.marks, `chart "${c.title}" drew no data`).toBeGreaterThan(0);
        expect(c.width, `chart "${c.title}" has no width`).toBeGreaterThan(300);
        expect(c.height, `chart "${c.title}" has no height`).toBeGreaterThan(60);
      }
      expect(await r.layoutProblems(), `${name} (${scheme})`).toEqual([]);
      expect(r.consoleErrors).toEqual([]);
      expect(r.requests).toEqual([]);
      expect(await r.cspViolations()).toEqual([]);
      // Dark mode really restyles the page (the background follows the system's scheme).
      const bg = await r.background();
      expect(bg).toBe(scheme === 'dark' ? 'rgb(17, 20, 24)' : 'rgb(255, 255, 255)');
      await r.screenshot(`${name}-${scheme}`);
      // `npm run screenshots`: the README's pictures, from this very run.
      if (process.env.GW_REPORT_DOCS === '1' && (scheme === 'light' || name === 'probe')) {
        await r.docsScreenshot(`report-${name}${scheme === 'dark' ? '-dark' : ''}`);
      }
      if (scheme === 'light') {
        await r.page.emulateMedia({ media: 'print', colorScheme: 'dark' });
        const printBg = await r.background();
        expect(printBg, 'print is black on white whatever the scheme').toBe('rgb(255, 255, 255)');
        const printInk = await r.page.evaluate<string>(
          "getComputedStyle(document.documentElement).getPropertyValue('--c0').trim()",
        );
        expect(printInk, 'print uses the light palette').toBe('#0b6bb5');
        await r.screenshot(`${name}-print`);
      }
    } finally {
      await r.close();
    }
  }
}

describe.runIf(availability.run)('HTML reports in headless Chromium', () => {
  it('the harness catches a CSP violation, a console error and a request (reports that break the rules)', async () => {
    const meta = { command: 'gw test', version: '0', gateway: 'http://127.0.0.1', madeAt: new Date(0) };
    const good = page({ title: 'bad', meta, body: '<p>a report with an image it may not load</p>' });
    const withImage = good.replace('</main>', '<img src="http://127.0.0.1:9/x.png" alt=""></main>');
    // Under the report's CSP the image is refused before any request is made.
    const bad = join(dir, 'bad.html');
    writeFileSync(bad, withImage);
    const r = await browser.open(bad, { serve: true });
    try {
      expect((await r.cspViolations()).join()).toMatch(/img-src/);
      expect(r.consoleErrors.join('\n')).toMatch(/Content Security Policy/);
    } finally {
      await r.close();
    }
    // Without it, the request goes out (and is caught and aborted).
    const noCsp = join(dir, 'no-csp.html');
    writeFileSync(noCsp, withImage.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, ''));
    const r2 = await browser.open(noCsp);
    try {
      expect(r2.requests).toEqual(['http://127.0.0.1:9/x.png']);
    } finally {
      await r2.close();
    }
  });

  it('gw probe --sim --html: per check latency with TTFT; opens from a file', async () => {
    const file = join(dir, 'probe.html');
    const run = await runGw(['probe', '--sim', '--html', file]);
    expect(run.exitCode, run.stderr).toBe(0);
    await checkReport(file, 'probe', ['bars']);
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('chat-stream');
    expect(html).toMatch(/TTFT \d/);
  });

  const meta = (command: string) => ({
    command,
    version: '0.1.0',
    gateway: 'https://gateway.example.com',
    madeAt: new Date(Date.UTC(2026, 10, 23, 14, 0, 0)),
  });

  // Rendered from documents in the commands' --json shapes (see test/helpers/report-fixtures.ts).
  it('load (10 000 requests): CDFs, TTFT and inter-token histograms, requests/s, errors; served with the CSP header', async () => {
    const file = join(dir, 'load.html');
    writeFileSync(file, loadHtml(loadFixture({ requests: 10_000 }), meta('gw load')));
    await checkReport(file, 'load', ['line', 'line', 'line', 'histogram', 'histogram', 'line', 'bars'], {
      serve: true,
    });
  });

  it('load --sweep: the throughput-latency curve with its knee', async () => {
    const file = join(dir, 'load-sweep.html');
    const doc = loadFixture({
      requests: 600,
      sweep: [2, 4, 8, 16, 32, 64],
      slo: 'e2e.p95<3s,ttft.p95<600ms',
    });
    writeFileSync(file, loadHtml(doc, meta('gw load')));
    await checkReport(
      file,
      'load-sweep',
      ['line', 'line', 'line', 'line', 'histogram', 'histogram', 'line', 'bars'],
      {
        serve: true,
      },
    );
  });

  it('probe at a ~2 s scale, with a failure, a warning and the SLO bounds', async () => {
    const file = join(dir, 'probe-slow.html');
    writeFileSync(file, probeHtml(probeFixture(), meta('gw probe')));
    await checkReport(file, 'probe-slow', ['bars'], { serve: true });
  });

  it('probe history: uptime bars with the change flagged, latency over time', async () => {
    const file = join(dir, 'history.html');
    const view = historyFixture(6);
    // Made when the view was (the view's `generatedAt` is the report's now).
    writeFileSync(
      file,
      historyHtml(view, { ...meta('gw probe history'), madeAt: new Date(view.generatedAt) }),
    );
    await checkReport(file, 'history', ['timeline', ...Array<string>(6).fill('line')], { serve: true });
  });

  it('batch status: items by state over time, per item, spend with budget, failures by code', async () => {
    const file = join(dir, 'batch.html');
    writeFileSync(file, batchHtml(batchFixture(24), meta('gw batch status')));
    await checkReport(file, 'batch', ['stacked', 'timeline', 'line', 'bars'], { serve: true });
  });

  // The real commands against the simulator.
  it('gw load --sweep --html against the simulator', async () => {
    const sim = await useSim({
      capacity: { maxConcurrent: 2, queue: 1000, ttftMs: 30, tokensPerSecond: 2000 },
    });
    const file = join(dir, 'load-sim.html');
    const args = [
      'load',
      '-m',
      'chat-3.7-plus',
      '--sweep',
      'concurrency=1,2,4',
      '--requests',
      '12',
      '--max-tokens',
      '8',
    ];
    const run = await runGw([...args, '--html', file], { env: sim.env });
    expect(run.exitCode, run.stderr).toBe(0);
    await checkReport(file, 'load-sim', ['line', 'line', 'line', 'line', 'histogram', 'histogram', 'line'], {
      serve: true,
    });
  });

  it('gw batch status --html on a batch run against the simulator', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const input = join(dir, 'jobs.jsonl');
    const line = (id: string, prompt: string) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/videos',
        body: { model: 'clip-1.1-t2v', prompt, seconds: 3, resolution: '720p' },
      });
    writeFileSync(
      input,
      [line('v1', 'a fox'), line('v2', 'a fox [sim:fail]'), line('v3', 'an owl')].join('\n') + '\n',
    );
    const out = join(dir, 'batch-out');
    const run = await runGw(['batch', 'run', input, '--out', out, '--no-download'], { env });
    expect(run.exitCode, run.stderr).toBe(1);
    const file = join(dir, 'batch-sim.html');
    const r = await runGw(['batch', 'status', out, '--html', file], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    await checkReport(file, 'batch-sim', ['stacked', 'timeline', 'line', 'bars'], { serve: true });
  });
});
