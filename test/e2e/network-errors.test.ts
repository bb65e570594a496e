// Network failures explained (one line, the host, a hint, the documented exit code), base URL rules, and answers
// that would eat memory or time: the real bin/gw against small misbehaving servers on 127.0.0.1.
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isolatedDirs, runGw, spawnGw, watchPeakRss, type GwResult } from '../helpers/gw.js';
import { closedPort } from '../helpers/servers.js';
import { useSim } from '../helpers/sim.js';

const TOKEN = 'sk-test-network-0001';
const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** An http server on 127.0.0.1 (closed after the test); returns its base URL. */
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s: Server = createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    s.closeAllConnections();
    s.close();
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** Runs the real gw (its own process, so its memory is its own), sampling the child's peak RSS (VmHWM) until it exits; returns the result and the peak in MB. */
async function gwWithPeak(
  argv: string[],
  env: Record<string, string>,
): Promise<GwResult & { peakMb: number }> {
  let stop = (): number => 0;
  const r = await spawnGw(argv, {
    env,
    onSpawn: (child) => {
      if (child.pid !== undefined) stop = watchPeakRss(child.pid);
    },
  });
  return { ...r, peakMb: stop() };
}

const env = (base: string): Record<string, string> => ({ GW_BASE_URL: base, GW_TOKEN: TOKEN, NO_PROXY: '*' });

function lines(stderr: string): string[] {
  return stderr.trim().split('\n');
}

describe('network errors', () => {
  it('connection refused: the host, a --base-url hint, exit 1', async () => {
    const port = await closedPort();
    const r = await runGw(['models'], { env: env(`http://127.0.0.1:${port}`) });
    expect(r.exitCode).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `error: connection_refused: GET /v1/models: connection refused by 127.0.0.1:${port}`,
      expect.stringMatching(/^hint: .*--base-url.*HTTPS_PROXY/),
    ]);
  });

  it('https to a plain-http port: tls_failed (protocol), exit 3', async () => {
    const base = await serve((_q, s) => s.end('plain'));
    const r = await runGw(['models'], { env: env(base.replace('http:', 'https:')) });
    expect(r.exitCode).toBe(3);
    expect(lines(r.stderr)[0]).toMatch(
      /^error: tls_failed: GET \/v1\/models: TLS to 127\.0\.0\.1:\d+ failed: .*TLS/,
    );
    expect(lines(r.stderr)[1]).toMatch(/^hint: check the scheme in --base-url/);
    expect(lines(r.stderr)).toHaveLength(2);
  });

  it('a server that never answers: timeout, exit 4', async () => {
    const sockets: Socket[] = [];
    const s = createNetServer((sock) => sockets.push(sock));
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    closers.push(() => {
      for (const x of sockets) x.destroy();
      s.close();
    });
    const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const r = await runGw(['--timeout', '1s', 'models'], { env: env(base) });
    expect(r.exitCode).toBe(4);
    expect(lines(r.stderr)).toEqual([
      'error: timeout: GET /v1/models: no answer within 1s',
      expect.stringMatching(/^hint: raise --timeout/),
    ]);
  });

  it('a scheme other than http/https is exit 2, from the flag or the environment, nothing sent', async () => {
    const sim = await useSim();
    const flag = await runGw(['--base-url', 'ftp://127.0.0.1/', 'models'], { env: { GW_TOKEN: TOKEN } });
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toMatch(
      /^error: invalid_input: base URL "ftp:\/\/127.0.0.1\/" uses ftp; only http and https/,
    );
    const fromEnv = await runGw(['models'], { env: { GW_BASE_URL: 'file:///etc', GW_TOKEN: TOKEN } });
    expect(fromEnv.exitCode).toBe(2);
    expect(sim.requests).toHaveLength(0);
  });

  it('a trailing /v1 is dropped the same way from the flag, the environment and the config', async () => {
    const sim = await useSim();
    const viaFlag = await runGw(['--base-url', `${sim.baseUrl}/v1/`, 'models', '--json'], { env: sim.env });
    expect(viaFlag.exitCode).toBe(0);
    const viaEnv = await runGw(['models', '--json'], {
      env: { ...sim.env, GW_BASE_URL: `${sim.baseUrl}/v1` },
    });
    expect(viaEnv.exitCode).toBe(0);
    const dirs = isolatedDirs();
    const set = await runGw(['config', 'set', 'baseUrl', `${sim.baseUrl}/v1/`], { env: dirs });
    expect(set.exitCode).toBe(0);
    const got = await runGw(['config', 'get', 'baseUrl'], { env: dirs });
    expect(got.stdout.trim()).toBe(sim.baseUrl);
    expect(sim.requests.map((q) => q.path)).toEqual(['/v1/models', '/v1/models']);
  });
});

describe('answers that would eat memory or time', () => {
  it('a 500 MB /v1/models answer ends in response_too_large, memory bounded', async () => {
    const base = await serve((_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1 << 20, 0x20);
      let sent = 0;
      res.write('{"object":"list","data":[');
      const pump = (): void => {
        while (sent < 500 && res.write(chunk)) sent++;
        if (sent < 500) res.once('drain', pump);
        else res.end(']}');
      };
      pump();
    });
    const r = await gwWithPeak(['models', '--json'], env(base));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /"code":"response_too_large"|error: response_too_large: GET \/v1\/models: the answer is larger than 64 MiB/,
    );
    expect(r.peakMb).toBeGreaterThan(0);
    expect(r.peakMb).toBeLessThan(200);
  });

  it.each([
    // One line that never ends.
    ['an endless data: line', 'data: ', Buffer.alloc(1 << 16, 0x61), 'line'],
    // Every line ends, the event never does: the parser would join its data lines without bound.
    [
      'an event of endless data: lines (no blank line ever)',
      '',
      Buffer.from(`data: ${'b'.repeat(1000)}\n`.repeat(64)),
      'event',
    ],
  ])('%s ends in response_too_large, memory bounded', async (_what, head, chunk, cap) => {
    const base = await serve((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(head);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const r = await gwWithPeak(['chat', '--stream', '-m', 'chat-3.7-plus', 'hi'], env(base));
    expect(r.exitCode).toBe(1);
    expect(lines(r.stderr)[0]).toMatch(
      new RegExp(`^error: response_too_large: .*event-stream ${cap} is longer than`),
    );
    expect(r.peakMb).toBeLessThan(200);
  });

  it('a stream of keep-alive comments only still ends at --timeout (comments are not events)', async () => {
    const base = await serve((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const t = setInterval(() => res.write(': keepalive\n\n'), 100);
      res.on('close', () => clearInterval(t));
    });
    const r = await runGw(['--timeout', '1s', 'chat', '--stream', '-m', 'chat-3.7-plus', 'hi'], {
      env: env(base),
    });
    expect(r.exitCode).toBe(4);
    expect(lines(r.stderr)[0]).toMatch(/^error: timeout: POST \/v1\/chat\/completions: no answer within 1s/);
  });

  it('a redirect on a JSON route is reported as a redirect with its Location, not response_shape', async () => {
    const base = await serve((_q, res) => {
      res.writeHead(301, { location: 'https://gateway.example.com/v1/models' }).end();
    });
    const r = await runGw(['models'], { env: env(base) });
    expect(r.exitCode).toBe(1);
    expect(lines(r.stderr)[0]).toBe(
      'error: redirect: GET /v1/models: the gateway answered 301 redirect to https://gateway.example.com/v1/models; redirects are not followed on API calls',
    );
  });
});
