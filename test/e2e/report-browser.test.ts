/**
 * The HTML reports in a real browser (headless Chromium): each kind opens with charts that drew their data, no
 * console error, no request besides the document, no Content-Security-Policy violation, in light and dark mode
 * and in print. Screenshots are saved under test-artifacts/report/.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { page } from '../../src/report/page.js';
import { spawnGw } from '../helpers/gw.js';
import { browserAvailability, ReportBrowser, type Opened } from '../helpers/report-browser.js';

const availability = browserAvailability();
const dir = mkdtempSync(join(tmpdir(), 'gw-report-'));
let browser: ReportBrowser;

beforeAll(async () => {
  if (!availability.run) return;
  browser = new ReportBrowser();
  await browser.start();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a report, checks it is clean and drew its charts, saves screenshots; returns the chart facts. */
async function checkReport(
  file: string,
  name: string,
  expectKinds: string[],
  o: { serve?: boolean } = {},
): Promise<void> {
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
      expect(r.consoleErrors).toEqual([]);
      expect(r.requests).toEqual([]);
      expect(await r.cspViolations()).toEqual([]);
      // Dark mode really restyles the page (the background follows the system's scheme).
      const bg = await r.background();
      expect(bg).toBe(scheme === 'dark' ? 'rgb(17, 20, 24)' : 'rgb(255, 255, 255)');
      await r.screenshot(`${name}-${scheme}`);
      if (scheme === 'light') {
        await r.page.emulateMedia({ media: 'print', colorScheme: 'dark' });
        const printBg = await r.background();
        expect(printBg, 'print is black on white whatever the scheme').toBe('rgb(255, 255, 255)');
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
    const run = await spawnGw(['probe', '--sim', '--html', file]);
    expect(run.exitCode, run.stderr).toBe(0);
    await checkReport(file, 'probe', ['bars']);
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('chat-stream');
    expect(html).toMatch(/TTFT \d/);
  });
});
