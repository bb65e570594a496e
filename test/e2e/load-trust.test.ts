// gw load tried as an operator's network and an attacker would: proxies, a private CA, a redirect to another host,
// no file descriptors left, a gateway that never answers, damaged reports, gateway text bound for a spreadsheet,
// and pipes. The real bin/gw where memory, limits or signals matter; in-process runs elsewhere.
import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/load/schema.js';
import {
  assertNoStackTrace,
  GW_BIN,
  isolatedDirs,
  runGw,
  spawnGw,
  watchPeakRss,
  type GwResult,
} from '../helpers/gw.js';
import { NO_PROXY_ENV, startProxy } from '../helpers/proxy.js';
import { closeAfterTest } from '../helpers/servers.js';
import { useSim } from '../helpers/sim.js';
import { GATEWAY_CERT, startTlsFront } from '../helpers/tls-front.js';
import { tempDir } from '../helpers/tmp.js';

const M = ['load', '-m', 'chat-3.7-plus'];
const TOKEN = 'sk-load-trust-5150';

/** A loopback http server for this test. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const s: Server = createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  closeAfterTest(s);
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

function reportOf(r: GwResult): RunReport {
  try {
    return JSON.parse(r.stdout) as RunReport;
  } catch {
    throw new Error(`not one JSON document (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  }
}

/**
 * The real gw under bash (for `ulimit`; the script runs it as `"$GW_NODE" "$GW_JS"`), its peak memory sampled;
 * killed (as a hang) if it has not ended after `limitMs`, so a broken build cannot leave a spinning process behind.
 */
function bashGw(
  script: string,
  env: Record<string, string>,
  o: { limitMs: number; onSpawn?: (pid: number) => void },
): Promise<GwResult & { peakMb: number; hung: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      env: {
        PATH: process.env.PATH,
        NO_COLOR: '1',
        GW_NODE: process.execPath,
        GW_JS: GW_BIN,
        ...isolatedDirs(),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let hung = false;
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const peak = child.pid !== undefined ? watchPeakRss(child.pid) : () => 0;
    const kill = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, o.limitMs);
    child.on('error', reject);
    child.on('close', (code, sig) => {
      clearTimeout(kill);
      const r = { stdout: out, stderr: err, exitCode: code ?? (sig === 'SIGINT' ? 130 : 1) };
      resolve({ ...assertNoStackTrace(r), peakMb: peak(), hung });
    });
    if (child.pid !== undefined) o.onSpawn?.(child.pid);
  });
}

describe('gw load goes through the connection settings of every command', () => {
  it('https through a CONNECT proxy to a name only the proxy resolves, trusting a private CA; the token only inside TLS', async () => {
    const sim = await useSim();
    const front = await startTlsFront(sim.baseUrl);
    const proxy = await startProxy({ 'gateway.internal': '127.0.0.1' });
    const r = await runGw(
      ['--ca-file', GATEWAY_CERT, ...M, '--json', '--requests', '6', '--concurrency', '2'],
      {
        env: {
          ...NO_PROXY_ENV,
          HTTPS_PROXY: proxy.url,
          GW_BASE_URL: `https://gateway.internal:${front.port}`,
          GW_TOKEN: sim.env.GW_TOKEN,
        },
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(reportOf(r).steps[0]).toMatchObject({ requests: 6, ok: 6, errors: 0 });
    expect(new Set(proxy.connects)).toEqual(new Set([`gateway.internal:${front.port}`]));
    expect(proxy.forwards).toEqual([]);
    expect(front.authorizations).toEqual(Array(6).fill(`Bearer ${sim.env.GW_TOKEN}`));
    expect(Buffer.concat(proxy.tunnelBytes).includes(Buffer.from(sim.env.GW_TOKEN))).toBe(false);
  });

  it('plain http through HTTP_PROXY as forward requests', async () => {
    const sim = await useSim();
    const proxy = await startProxy({ 'gateway.internal': '127.0.0.1' });
    const port = new URL(sim.baseUrl).port;
    const r = await runGw([...M, '--json', '--requests', '4', '--concurrency', '2', '--no-stream'], {
      env: {
        ...NO_PROXY_ENV,
        http_proxy: proxy.url,
        GW_BASE_URL: `http://gateway.internal:${port}`,
        GW_TOKEN: sim.env.GW_TOKEN,
      },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(reportOf(r).steps[0]).toMatchObject({ requests: 4, ok: 4 });
    expect(proxy.forwards.map((f) => f.url)).toEqual(
      Array(4).fill(`http://gateway.internal:${port}/v1/chat/completions`),
    );
  });

  it('https straight to a gateway whose certificate only --ca-file trusts', async () => {
    const sim = await useSim();
    const front = await startTlsFront(sim.baseUrl);
    const env = {
      ...NO_PROXY_ENV,
      GW_BASE_URL: `https://127.0.0.1:${front.port}`,
      GW_TOKEN: sim.env.GW_TOKEN,
    };
    const trusted = await runGw(['--ca-file', GATEWAY_CERT, ...M, '--json', '--requests', '3'], { env });
    expect(trusted.exitCode, trusted.stderr).toBe(0);
    expect(reportOf(trusted).steps[0]?.ok).toBe(3);
    // Without it, the client's own error: tls_failed, every request.
    const refused = await runGw([...M, '--json', '--requests', '3'], { env });
    expect(refused.exitCode).toBe(1);
    expect(reportOf(refused).steps[0]?.errors_by_code).toEqual({ tls_failed: 3 });
  });

  it('a redirect to another host is counted as `redirect`, never followed: the other host sees no request, no token', async () => {
    const elsewhere: Array<string | undefined> = [];
    const other = await serve((req, res) => {
      elsewhere.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"usage":{"completion_tokens":1}}');
    });
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${other}/v1/chat/completions` }).end();
    });
    const r = await runGw([...M, '--json', '--requests', '3', '--no-stream'], {
      env: { ...NO_PROXY_ENV, GW_BASE_URL: base, GW_TOKEN: TOKEN },
    });
    expect(r.exitCode).toBe(1);
    expect(reportOf(r).steps[0]).toMatchObject({ requests: 3, errors: 3, errors_by_code: { redirect: 3 } });
    expect(elsewhere).toEqual([]);
  });
});

describe('gw load when requests fail before a byte is sent (ulimit -n)', () => {
  it('under ulimit -n 64 at --concurrency 256: ends at its duration, memory bounded, and says open-files limit reached', async () => {
    const sim = await useSim();
    const r = await bashGw(
      'ulimit -n 64; exec "$GW_NODE" "$GW_JS" load -m chat-3.7-plus --json --concurrency 256 --duration 2s --no-stream --max-tokens 2',
      sim.env,
      { limitMs: 25_000 },
    );
    expect(r.hung, 'gw load did not end by itself').toBe(false);
    expect(r.stderr).toMatch(
      /open-files limit reached \(ulimit -n 64\): \d+ requests failed before they were sent/,
    );
    const st = reportOf(r).steps[0];
    expect(st?.errors_by_code.connection_error).toBeGreaterThan(0);
    expect(r.peakMb).toBeLessThan(300);
  });

  it('and Ctrl-C ends it with the partial report, exit 130', async () => {
    const sim = await useSim();
    const r = await bashGw(
      'ulimit -n 64; exec "$GW_NODE" "$GW_JS" load -m chat-3.7-plus --json --concurrency 256 --duration 10m --no-stream --max-tokens 2',
      sim.env,
      {
        limitMs: 25_000,
        onSpawn: (pid) => {
          const t = setInterval(() => {
            if (sim.requests.length >= 5) {
              clearInterval(t);
              process.kill(pid, 'SIGINT');
            }
          }, 20);
        },
      },
    );
    expect(r.hung, 'Ctrl-C did not end gw load').toBe(false);
    expect(r.exitCode, r.stderr).toBe(130);
    expect(reportOf(r).interrupted).toBe(true);
  });
});

describe('gw load against a gateway that never answers', () => {
  /** A gateway that reads every request and never answers. */
  const silent = (): Promise<string> =>
    serve((req) => {
      req.resume();
    });

  it('--duration ends the run: requests in flight cancelled and counted (not waited for until --timeout)', async () => {
    const base = await silent();
    const r = await spawnGw([...M, '--json', '--concurrency', '4', '--duration', '1s', '--timeout', '60s'], {
      env: { ...NO_PROXY_ENV, GW_BASE_URL: base, GW_TOKEN: TOKEN },
    });
    const st = reportOf(r).steps[0];
    expect(st).toMatchObject({ requests: 0, cancelled: 4 });
    // The step ended at its duration, not at the 60 s timeout of the requests it was waiting for.
    expect(st?.duration_s).toBeLessThan(30);
  });

  it('the open loop: arrivals never sent are counted as dropped, and the run says the client fell behind', async () => {
    const base = await silent();
    const r = await spawnGw(
      [
        ...M,
        '--json',
        '--rate',
        '200',
        '--connections',
        '4',
        '--duration',
        '1s',
        '--timeout',
        '60s',
        '--no-stream',
      ],
      { env: { ...NO_PROXY_ENV, GW_BASE_URL: base, GW_TOKEN: TOKEN } },
    );
    const st = reportOf(r).steps[0];
    expect(st?.cancelled).toBe(4);
    // About 200 arrivals in the second: 4 sent, the rest waited for a connection that never came free.
    expect(st?.schedule.dropped).toBeGreaterThan(100);
    expect(st?.schedule.behind).toBe(true);
    expect(r.stderr).toMatch(/fell behind its schedule .*\d+ arrivals never sent/);
  });

  it('--rate 100000: arrivals past the waiting cap are dropped, never allocated; memory stays flat', async () => {
    const base = await silent();
    const r = await bashGw(
      'exec "$GW_NODE" "$GW_JS" load -m chat-3.7-plus --json --rate 100000 --connections 64 --duration 6s --timeout 2s --no-stream',
      { ...NO_PROXY_ENV, GW_BASE_URL: base, GW_TOKEN: TOKEN },
      { limitMs: 28_000 },
    );
    expect(r.hung).toBe(false);
    const st = reportOf(r).steps[0];
    expect(st?.schedule.dropped).toBeGreaterThan(100_000);
    expect(r.peakMb).toBeLessThan(200);
  });
});

describe('reports read back are checked field by field', () => {
  async function aReport(dir: string): Promise<string> {
    const sim = await useSim();
    const path = join(dir, 'run.json');
    const r = await runGw([...M, '--requests', '4', '--no-stream', '--out', path], { env: sim.env });
    expect(r.exitCode, r.stderr).toBe(0);
    return path;
  }

  function damaged(
    dir: string,
    from: string,
    name: string,
    change: (doc: Record<string, unknown>) => void,
  ): string {
    const doc = JSON.parse(readFileSync(from, 'utf8')) as Record<string, unknown>;
    change(doc);
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(doc));
    return path;
  }

  it('"requests": "a" or a missing field is exit 2 naming the file and the field, for compare, merge and --baseline', async () => {
    const dir = tempDir('gw-load-reports-');
    const good = await aReport(dir);
    const steps = (d: Record<string, unknown>) => d.steps as Array<Record<string, unknown>>;
    const text = damaged(
      dir,
      good,
      'text.json',
      (d) => ((steps(d)[0] as Record<string, unknown>).requests = 'a'),
    );
    const missing = damaged(
      dir,
      good,
      'missing.json',
      (d) => delete (steps(d)[0] as Record<string, unknown>).latency_ms,
    );
    const compared = await runGw(['load', 'compare', good, text]);
    expect(compared.exitCode).toBe(2);
    expect(compared.stderr).toMatch(/<new\.json>: .*text\.json: steps\[0\]\.requests: /);
    const cmpMissing = await runGw(['load', 'compare', missing, good]);
    expect(cmpMissing.exitCode).toBe(2);
    expect(cmpMissing.stderr).toMatch(/<base\.json>: .*missing\.json: steps\[0\]\.latency_ms: /);
    const merged = await runGw(['load', 'merge', good, missing]);
    expect(merged.exitCode).toBe(2);
    expect(merged.stderr).toMatch(/missing\.json: steps\[0\]\.latency_ms/);
    const sim = await useSim();
    const gated = await runGw([...M, '--requests', '2', '--baseline', text], { env: sim.env });
    expect(gated.exitCode).toBe(2);
    expect(gated.stderr).toMatch(/--baseline: .*text\.json: steps\[0\]\.requests/);
    expect(sim.requests).toHaveLength(0);
  });

  it('merge refuses the same report twice (the same file, or a copy) instead of counting it twice', async () => {
    const dir = tempDir('gw-load-reports-');
    const a = await aReport(dir);
    const twice = await runGw(['load', 'merge', a, a]);
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toMatch(
      /run\.json is given twice; merging it twice would count every request twice/,
    );
    const copy = join(dir, 'copy.json');
    copyFileSync(a, copy);
    const copied = await runGw(['load', 'merge', a, copy]);
    expect(copied.exitCode).toBe(2);
    expect(copied.stderr).toMatch(/run\.json and .*copy\.json are the same report/);
  });
});

describe('what gw load writes for other tools', () => {
  it('--csv: gateway text that a spreadsheet would run as a formula gets a leading quote', async () => {
    const base = await serve((req, res) => {
      req.resume();
      const body = JSON.stringify({ error: { code: '=HYPERLINK("http://evil.test","x")', message: 'no' } });
      res
        .writeHead(400, { 'content-type': 'application/json', 'x-gateway-request-id': '@SUM(1+1)' })
        .end(body);
    });
    const dir = tempDir('gw-load-csv-');
    const csv = join(dir, 'r.csv');
    const r = await runGw([...M, '--requests', '2', '--no-stream', '--csv', csv], {
      env: { ...NO_PROXY_ENV, GW_BASE_URL: base, GW_TOKEN: TOKEN },
    });
    expect(r.exitCode).toBe(1);
    const rows = readFileSync(csv, 'utf8').trim().split('\n').slice(1);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toContain(`"'=HYPERLINK(""http://evil.test"",""x"")"`);
      expect(row).toContain(",'@SUM(1+1),");
      expect(row).not.toMatch(/(^|,)[=@+-]/);
    }
  });

  it('off a terminal stdout is only the TSV table; the summary and --slo values (with units) go to stderr', async () => {
    const sim = await useSim();
    const r = await runGw(
      [...M, '--requests', '6', '--max-tokens', '4', '--slo', 'ttft.p95<30s,errors<50%,rps>0.01'],
      {
        env: sim.env,
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('metric\tcount\tp50\tp90\tp95\tp99\tmax');
    for (const line of lines) expect(line.split('\t')).toHaveLength(7);
    expect(r.stderr).toMatch(/^requests: +6 in /m);
    expect(r.stderr).toMatch(/ttft\.p95<30s ok \(\d+(\.\d+)?ms\)/);
    expect(r.stderr).toMatch(/errors<50% ok \(0%\)/);
    expect(r.stderr).toMatch(/rps>0\.01 ok \(\d+\.\d\d req\/s\)/);
  });

  it('compare in a pipe: a header naming every column, one row per figure, the verdict on stderr', async () => {
    const sim = await useSim();
    const dir = tempDir('gw-load-cmp-');
    const a = join(dir, 'a.json');
    expect(
      (await runGw([...M, '--requests', '4', '--no-stream', '--out', a], { env: sim.env })).exitCode,
    ).toBe(0);
    const r = await runGw(['load', 'compare', a, a]);
    expect(r.exitCode).toBe(0);
    const [head = '', ...rows] = r.stdout.trim().split('\n');
    const names = head.split('\t');
    expect(names).toEqual(['figure', 'baseline', 'new', 'change', 'verdict']);
    for (const row of rows) expect(row.split('\t')).toHaveLength(names.length);
    expect(r.stderr).toMatch(/no regression beyond 10%/);
  });

  it('`gw load merge --help` lists only the flags merge uses', async () => {
    const r = await runGw(['load', 'merge', '--help']);
    expect(r.stdout).toMatch(/--out <file\.json>/);
    expect(r.stdout).toMatch(/--html <file>/);
    expect(r.stdout).not.toMatch(/--seconds|--resolution|--poll-interval|--video-timeout/);
  });
});
