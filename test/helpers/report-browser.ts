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
