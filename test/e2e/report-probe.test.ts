/**
 * `gw probe --html`: the path is checked before any request, the file is written whole, and it carries gw's
 * version, the gateway (never the token) and the figures of `--json`.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProbeReport } from '../../src/probe/runner.js';
import { VERSION } from '../../src/cli/main.js';
import { runGw } from '../helpers/gw.js';
import { apiRequests, useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('gw-report-probe-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gw probe --html', () => {
  it('a missing directory is exit 2 before any request', async () => {
    const sim = await useSim();
    const r = await runGw(['probe', '--skip', 'video', '--html', join(dir, 'nope', 'r.html')], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--html .*nope.* does not exist/);
    expect(apiRequests(sim)).toEqual([]);
  });

  it('a directory as the file is exit 2 before any request', async () => {
    const sim = await useSim();
    const r = await runGw(['probe', '--skip', 'video', '--html', dir], { env: sim.env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/is a directory/);
    expect(apiRequests(sim)).toEqual([]);
  });

  it('writes one self-contained report with the JSON figures, version, gateway; no token; no temp file left', async () => {
    const sim = await useSim();
    const file = join(dir, 'probe.html');
    writeFileSync(file, 'an older report');
    const r = await runGw(['probe', '--skip', 'video', '--json', '--html', file], { env: sim.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as ProbeReport;
    const html = readFileSync(file, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    );
    expect(html).not.toMatch(/<script|<link|@import|url\((?!#)|src=/i);
    expect(html).toContain(`gw ${VERSION}`);
    expect(html).toContain(sim.baseUrl);
    expect(html).not.toContain(sim.env.GW_TOKEN);
    for (const c of report.checks) {
      if (c.status !== 'skip') expect(html).toContain(`>${c.id}</text>`); // its row in the chart
      if (c.requestId !== undefined) expect(html).toContain(c.requestId);
    }
    expect(html).toContain('OK: every check that ran passed');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('gw probe --junit', () => {
  it('creates missing directories before any request, and writes the whole report with no temporary file left', async () => {
    const sim = await useSim();
    const target = join(dir, 'ci', 'reports', 'probe.xml');
    const r = await runGw(['probe', '--skip', 'video', '--junit', target], { env: sim.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const xml = readFileSync(target, 'utf8');
    expect(xml).toMatch(/^<\?xml[\s\S]*<\/testsuites>\n$/);
    expect(readdirSync(join(dir, 'ci', 'reports'))).toEqual(['probe.xml']);
  });

  it('a path that cannot be made (under a file, a directory as the file) is exit 2 before any request', async () => {
    const sim = await useSim();
    const file = join(dir, 'plain-file');
    writeFileSync(file, 'x');
    const cases: Array<[string, RegExp]> = [
      [join(file, 'probe.xml'), /--junit .*plain-file is not a directory/],
      [dir, /--junit .*: is a directory; give a file name/],
    ];
    for (const [target, message] of cases) {
      const r = await runGw(['probe', '--skip', 'video', '--junit', target, '--json'], { env: sim.env });
      expect(r.exitCode, target).toBe(2);
      const e = (JSON.parse(r.stderr) as { error: { message: string; param: string } }).error;
      expect(e.message).toMatch(message);
      expect(e.param).toBe('--junit');
    }
    expect(apiRequests(sim)).toEqual([]);
  });

  it("a failed check's message appears once in the HTML detail and once in the JUnit <failure>", async () => {
    const sim = await useSim();
    sim.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'status', status: 500 });
    const html = join(dir, 'failed.html');
    const junit = join(dir, 'failed.xml');
    const r = await runGw(['probe', '--only', 'models,chat', '--html', html, '--junit', junit], {
      env: sim.env,
    });
    expect(r.exitCode, r.stderr).toBe(1);
    const count = (text: string): number => text.split('upstream failure (simulated)').length - 1;
    const row = /<tr class="fail">([\s\S]*?)<\/tr>/.exec(readFileSync(html, 'utf8'))?.[1] ?? '';
    expect(row).toContain('chat');
    expect(count(row)).toBe(1);
    const failure = /<failure [^>]*>([\s\S]*?)<\/failure>/.exec(readFileSync(junit, 'utf8'))?.[1] ?? '';
    expect(failure).toMatch(/request id: req-sim-/);
    expect(count(failure)).toBe(1);
  });
});
