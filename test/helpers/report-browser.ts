/**
 * Opens HTML reports in headless Chromium (Debian's `chromium`, driven by playwright-core) and records what a
 * person's browser would do with them: console errors, network requests, Content-Security-Policy violations,
 * and what the charts drew. Screenshots go to test-artifacts/report/ (gitignored).
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPORT_CSP } from '../../src/report/page.js';
import { tempDir } from './tmp.js';

export const CHROMIUM = process.env.GW_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/report');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether the browser tests can run. Without Chromium they fail under CI=true (a CI machine must have it:
 * .ci/run installs it) and are skipped loudly on a developer's machine.
 */
export function browserAvailability(): { run: boolean; reason?: string } {
  if (existsSync(CHROMIUM)) return { run: true };
  const reason = `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set GW_CHROMIUM`;
  if (process.env.CI === 'true') throw new Error(`browser tests cannot run under CI=true: ${reason}`);
  console.warn(`\n*** SKIPPING the HTML report browser tests: ${reason} ***\n`);
  return { run: false, reason };
}

/** One browser (persistent context on an empty temporary profile) for a test file. */
export class ReportBrowser {
  #ctx: BrowserContext | undefined;
  #profile = tempDir('gw-chromium-');

  async start(): Promise<void> {
    this.#ctx = await chromium.launchPersistentContext(this.#profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1000, height: 900 },
    });
  }

  async close(): Promise<void> {
    await this.#ctx?.close();
    rmSync(this.#profile, { recursive: true, force: true });
  }

  /** Opens a report from a file:// URL, or served on 127.0.0.1 with the CSP as a header too. */
  async open(file: string, o: { serve?: boolean; scheme?: 'light' | 'dark' } = {}): Promise<Opened> {
    if (!this.#ctx) throw new Error('browser not started');
    let server: Server | undefined;
    let url = pathToFileURL(file).href;
    if (o.serve === true) {
      const body = readFileSync(file);
      server = createServer((req, res) => {
        if (req.url !== '/report.html') {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': REPORT_CSP,
        });
        res.end(body);
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/report.html`;
    }
    const page = await this.#ctx.newPage();
    const opened = new Opened(page, url, server);
    await page.emulateMedia({ colorScheme: o.scheme ?? 'light' });
    await opened.load();
    return opened;
  }
}

/** What a chart drew: its kind, how many data marks, its size on the page. */
export interface ChartFacts {
  kind: string;
  title: string;
  marks: number;
  width: number;
  height: number;
}

/** A report open in a page, with what happened while it loaded. */
export class Opened {
  readonly consoleErrors: string[] = [];
  /** Every request but the document's own (should stay empty). */
  readonly requests: string[] = [];

  constructor(
    readonly page: Page,
    readonly url: string,
    private readonly server: Server | undefined,
  ) {
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') this.consoleErrors.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => this.consoleErrors.push(`pageerror: ${e.message}`));
    page.on('request', (r) => {
      if (r.url() !== this.url) this.requests.push(r.url());
    });
  }

  async load(): Promise<void> {
    // Any request other than the document fails (and was recorded above).
    await this.page.route('**/*', (route) =>
      route.request().url() === this.url ? route.continue() : route.abort('blockedbyclient'),
    );
    // CSP violations are events in the page: collect them from before the document's first byte. (Browser-side
    // code is passed as text: the tests' TypeScript has no DOM types.)
    await this.page.addInitScript(
      `window.__cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`,
    );
    await this.page.goto(this.url, { waitUntil: 'load' });
  }

  /** CSP violations seen by the page. */
  async cspViolations(): Promise<string[]> {
    return this.page.evaluate<string[]>('window.__cspViolations');
  }

  /** The page's computed background colour (follows dark mode and print). */
  async background(): Promise<string> {
    return this.page.evaluate<string>('getComputedStyle(document.documentElement).backgroundColor');
  }

  /** Each chart's kind, title, data marks and rendered size. */
  async charts(): Promise<ChartFacts[]> {
    return this.page.evaluate<ChartFacts[]>(`[...document.querySelectorAll('svg.plot')].map((svg) => {
      const box = svg.getBoundingClientRect();
      const marks = svg.querySelectorAll(
        'path.line[data-n], .mk, rect.bar, rect[data-bar], rect[data-state], path.area').length;
      return { kind: svg.getAttribute('data-kind') ?? '', title: svg.querySelector('title')?.textContent ?? '',
        marks, width: box.width, height: box.height };
    })`);
  }

  /**
   * What reads wrong in the charts, as a person would see it: two text labels whose boxes overlap (axis labels
   * running together, a title over a rule's label), and axes that do not end at the data's end (an axis running
   * on past the last data point by more than one tick step, or data drawn past the axis).
   */
  async layoutProblems(): Promise<string[]> {
    return this.page.evaluate<string[]>(`(() => {
      const out = [];
      const inLegend = (el) => el.closest('g.legend') !== null;
      for (const svg of document.querySelectorAll('svg.plot')) {
        const name = svg.querySelector('title')?.textContent ?? '?';
        const texts = [...svg.querySelectorAll('text')].filter((t) => (t.textContent ?? '').trim() !== '');
        const boxes = texts.map((t) => ({ t: t.textContent, b: t.getBoundingClientRect() }));
        for (let i = 0; i < boxes.length; i++)
          for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i].b, b = boxes[j].b;
            const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (dx > 1 && dy > 1) out.push(name + ': "' + boxes[i].t + '" overlaps "' + boxes[j].t + '"');
          }
        // Data: lines, bars, segments, areas, rules (an SLO, a budget: a vertical one bounds x only, a horizontal
        // one y only); a marker counts by its centre.
        const marks = [...svg.querySelectorAll(
          'path.line[data-n], rect[data-bar], rect[data-state], path.area, rect.bar, g.rule path, .pts .mk')]
          .filter((m) => !inLegend(m))
          .map((m) => {
            const b = m.getBoundingClientRect();
            const rule = m.closest('g.rule') !== null;
            const axes = rule ? (b.width < 1 ? 'x' : 'y') : 'xy';
            if (!m.classList.contains('mk')) return { b, axes };
            const x = b.left + b.width / 2, y = b.top + b.height / 2;
            return { b: { left: x, right: x, top: y, bottom: y, width: 1, height: 1 }, axes };
          })
          .filter((m) => m.b.width > 0 || m.b.height > 0);
        if (marks.length === 0) continue;
        const xs = marks.filter((m) => m.axes.includes('x')).map((m) => m.b);
        const ys = marks.filter((m) => m.axes.includes('y')).map((m) => m.b);
        const domain = svg.querySelector('g.axis.x path.domain');
        const ticks = [...svg.querySelectorAll('g.axis.x path.tick')].map((t) => t.getBoundingClientRect().left);
        if (domain !== null && ticks.length >= 2 && xs.length > 0) {
          const end = domain.getBoundingClientRect().right;
          const step = Math.abs(ticks[ticks.length - 1] - ticks[ticks.length - 2]);
          const right = Math.max(...xs.map((b) => b.right));
          if (right > end + 4) out.push(name + ': data drawn ' + Math.round(right - end) + ' px past the x axis');
          if (end - right > step + 1)
            out.push(name + ': the x axis runs ' + Math.round(end - right) + ' px past the data (a tick step is ' + Math.round(step) + ' px)');
        }
        const grid = [...svg.querySelectorAll('g.axis.y path.grid')].map((g) => g.getBoundingClientRect().top).sort((a, b) => a - b);
        if (grid.length >= 2 && ys.length > 0) {
          const top = grid[0];
          const step = grid[1] - grid[0];
          const highest = Math.min(...ys.map((b) => b.top));
          if (highest < top - 4) out.push(name + ': data drawn ' + Math.round(top - highest) + ' px above the y axis');
          if (highest - top > step + 1)
            out.push(name + ': the y axis runs ' + Math.round(highest - top) + ' px above the data (a tick step is ' + Math.round(step) + ' px)');
        }
      }
      return out;
    })()`);
  }

  /** Saves a full-page screenshot as a test artefact; returns its path. */
  async screenshot(name: string): Promise<string> {
    mkdirSync(ARTIFACTS, { recursive: true });
    const path = join(ARTIFACTS, `${name}.png`);
    await this.page.screenshot({ path, fullPage: true });
    return path;
  }

  /** The top of the page (at most 1500 px) as docs/<name>.png, for the README. */
  async docsScreenshot(name: string): Promise<string> {
    const docs = resolve(import.meta.dirname, '../../docs');
    mkdirSync(docs, { recursive: true });
    const path = join(docs, `${name}.png`);
    const height = await this.page.evaluate<number>('document.documentElement.scrollHeight');
    await this.page.screenshot({
      path,
      fullPage: true,
      clip: { x: 0, y: 0, width: 1000, height: Math.min(height, 1500) },
    });
    return path;
  }

  async close(): Promise<void> {
    await this.page.close();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
