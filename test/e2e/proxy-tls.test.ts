// Proxies (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) and extra CAs (--ca-file, GW_CA_FILE, NODE_EXTRA_CA_CERTS), driving the
// real bin/gw through real proxies on loopback. `gateway.internal` resolves only inside the proxy.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fastClock } from '../helpers/clock.js';
import { runGw, spawnGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';
import { NO_PROXY_ENV, startProxy, startSilentProxy } from '../helpers/proxy.js';
import { useSim } from '../helpers/sim.js';
import { GATEWAY_CERT, startTlsFront } from '../helpers/tls-front.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function port(url: string): string {
  return new URL(url).port;
}

describe('proxies', () => {
  it('reaches a plain-http gateway through HTTP_PROXY as forward requests, by a name only the proxy resolves', async () => {
    const sim = await useSim();
    const proxy = await startProxy({ 'gateway.internal': '127.0.0.1' });
    const r = await runGw(['models', '--json'], {
      env: {
        ...NO_PROXY_ENV,
        http_proxy: proxy.url,
        GW_BASE_URL: `http://gateway.internal:${port(sim.baseUrl)}`,
        GW_TOKEN: sim.env.GW_TOKEN,
      },
    });
    // The only note: the token crosses plain http (through the proxy too).
    expect(r.stderr.trim()).toMatch(
      /^warning: the token travels unencrypted over http to gateway\.internal:\d+; use https$/,
    );
    expect(r.exitCode).toBe(0);
    expect((JSON.parse(r.stdout) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    expect(proxy.forwards.map((f) => f.url)).toEqual([
      `http://gateway.internal:${port(sim.baseUrl)}/v1/models`,
    ]);
    expect(proxy.connects).toEqual([]);
  });

  it('goes direct for hosts in NO_PROXY', async () => {
    const sim = await useSim();
    const proxy = await startProxy();
    const r = await runGw(['models', '--json'], {
      env: { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url, NO_PROXY: 'localhost,127.0.0.1', ...sim.env },
    });
    expect(r.exitCode).toBe(0);
    expect(proxy.forwards).toEqual([]);
    expect(proxy.connects).toEqual([]);
  });

  it('downloads through the proxy too (the gateway and the redirect to the CDN origin)', async () => {
    // The simulator runs on the wait's clock, so 30 s of virtual polls cannot end before its video does.
    const clock = fastClock();
    const sim = await useSim({ now: clock.now });
    const proxy = await startProxy({ 'gateway.internal': '127.0.0.1' });
    const dir = tempDir('gw-proxy-dl-');
    dirs.push(dir);
    const env = {
      ...NO_PROXY_ENV,
      HTTP_PROXY: proxy.url,
      GW_BASE_URL: `http://gateway.internal:${port(sim.baseUrl)}`,
      GW_TOKEN: sim.env.GW_TOKEN,
      GW_STATE_DIR: join(dir, 'state'),
    };
    const created = await runGw(
      ['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--seconds', '3', '--resolution', '720p'],
      { env },
    );
    expect(created.exitCode).toBe(0);
    const id = created.stdout.trim();
    expect((await runGw(['video', 'wait', id, '--timeout', '30s'], { env, clock })).exitCode).toBe(0);
    const out = join(dir, 'fox.mp4');
    const dl = await runGw(['video', 'download', id, '-o', out], { env });
    // The only note: the token crosses plain http (through the proxy too).
    expect(dl.stderr.trim()).toMatch(
      /^warning: the token travels unencrypted over http to gateway\.internal:\d+; use https$/,
    );
    expect(dl.exitCode).toBe(0);
    expect(existsSync(out)).toBe(true);
    const urls = proxy.forwards.map((f) => f.url);
    expect(urls).toContain(`http://gateway.internal:${port(sim.baseUrl)}/v1/videos/${id}/content`);
    const cdn = proxy.forwards.find((f) => f.url.startsWith(sim.cdnUrl));
    expect(cdn).toBeDefined();
    // The token never goes to the CDN origin, proxy or not.
    expect(cdn?.headers.authorization).toBeUndefined();
    expect(readFileSync(out).length).toBeGreaterThan(0);
  });
});

describe('https through a CONNECT proxy, with an extra CA', () => {
  it('tunnels to a name only the proxy resolves; the token travels only inside TLS', async () => {
    const sim = await useSim();
    const front = await startTlsFront(sim.baseUrl);
    const proxy = await startProxy({ 'gateway.internal': '127.0.0.1' });
    const r = await runGw(['--ca-file', GATEWAY_CERT, 'models', '--json'], {
      env: {
        ...NO_PROXY_ENV,
        HTTPS_PROXY: proxy.url,
        GW_BASE_URL: `https://gateway.internal:${front.port}/v1`,
        GW_TOKEN: sim.env.GW_TOKEN,
      },
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(proxy.connects).toEqual([`gateway.internal:${front.port}`]);
    expect(proxy.forwards).toEqual([]);
    expect(front.authorizations).toEqual([`Bearer ${sim.env.GW_TOKEN}`]);
    const seen = Buffer.concat(proxy.tunnelBytes);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.includes(Buffer.from(sim.env.GW_TOKEN))).toBe(false);
    // A proxy written without a scheme (host:port) is http://host:port, as curl reads it.
    const bare = await runGw(['--ca-file', GATEWAY_CERT, 'models', '--json'], {
      env: {
        ...NO_PROXY_ENV,
        HTTPS_PROXY: proxy.url.replace(/^http:\/\//, ''),
        GW_BASE_URL: `https://gateway.internal:${front.port}`,
        GW_TOKEN: sim.env.GW_TOKEN,
      },
    });
    expect(bare.stderr).toBe('');
    expect(bare.exitCode).toBe(0);
    expect(proxy.connects).toEqual([`gateway.internal:${front.port}`, `gateway.internal:${front.port}`]);
  });

  it('refuses an untrusted certificate: tls_failed naming the host, a --ca-file hint, exit 3', async () => {
    const sim = await useSim();
    const front = await startTlsFront(sim.baseUrl);
    const r = await runGw(['models'], {
      env: { ...NO_PROXY_ENV, GW_BASE_URL: `https://127.0.0.1:${front.port}`, GW_TOKEN: sim.env.GW_TOKEN },
    });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(
      new RegExp(
        `^error: tls_failed: GET /v1/models: TLS to 127\\.0\\.0\\.1:${front.port} failed: .*self-signed`,
      ),
    );
    expect(r.stderr).toMatch(/hint: .*--ca-file/);
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
    expect(front.authorizations).toEqual([]);
  });

  it('trusts the CA from GW_CA_FILE and from NODE_EXTRA_CA_CERTS', async () => {
    const sim = await useSim();
    const front = await startTlsFront(sim.baseUrl);
    const base = {
      ...NO_PROXY_ENV,
      GW_BASE_URL: `https://localhost:${front.port}`,
      GW_TOKEN: sim.env.GW_TOKEN,
    };
    const viaEnv = await runGw(['models', '--json'], { env: { ...base, GW_CA_FILE: GATEWAY_CERT } });
    expect(viaEnv.stderr).toBe('');
    expect(viaEnv.exitCode).toBe(0);
    // Node reads NODE_EXTRA_CA_CERTS when a process starts: the real binary.
    const viaNode = await spawnGw(['models', '--json'], {
      env: { ...base, NODE_EXTRA_CA_CERTS: GATEWAY_CERT },
    });
    expect(viaNode.stderr).toBe('');
    expect(viaNode.exitCode).toBe(0);
  });

  it('an unreadable --ca-file is exit 2 before anything is sent', async () => {
    const sim = await useSim();
    const r = await runGw(['--ca-file', '/nonexistent/ca.pem', 'models'], {
      env: { ...NO_PROXY_ENV, ...sim.env },
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error: not_found: --ca-file: cannot read \/nonexistent\/ca.pem/);
    expect(sim.requests).toHaveLength(0);
  });
});

describe('a proxy that misbehaves, and proxy settings as curl reads them', () => {
  const https = { ...NO_PROXY_ENV, GW_BASE_URL: 'https://gateway.internal', GW_TOKEN: 'sk-proxy-test-0001' };

  it('a CONNECT never answered ends with --timeout (gw models, gw doctor): exit 4 / a failed check', async () => {
    const proxy = await startSilentProxy();
    const env = { ...https, HTTPS_PROXY: proxy.url };
    // The real binary: the process itself must end, not only the command.
    const models = await spawnGw(['--timeout', '1s', 'models'], { env });
    expect(models.exitCode).toBe(4);
    expect(models.stderr).toMatch(/^error: timeout: GET \/v1\/models: no answer within 1s/);
    const doctor = await spawnGw(['--timeout', '1s', 'doctor', '--json'], { env });
    expect(doctor.exitCode).toBe(1);
    const doc = JSON.parse(doctor.stdout) as {
      checks: Array<{ name: string; status: string; detail: string }>;
    };
    expect(doc.checks.find((c) => c.name === 'gateway')).toMatchObject({ status: 'fail' });
    await expect(proxy.asked).resolves.toBe('CONNECT gateway.internal:443 HTTP/1.1');
  });

  it('Ctrl-C while the proxy sits on CONNECT ends gw at once: exit 130', async () => {
    const proxy = await startSilentProxy();
    const r = await spawnGw(['models'], {
      env: { ...https, HTTPS_PROXY: proxy.url },
      onSpawn: (child) => void proxy.asked.then(() => child.kill('SIGINT')),
    });
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toMatch(/^error: interrupted/m);
  });

  it('407 to CONNECT is a proxy authentication error (exit 3), not an interruption', async () => {
    const proxy = await startProxy({}, { connectStatus: 407 });
    const r = await runGw(['models'], { env: { ...https, HTTPS_PROXY: proxy.url } });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(
      /^error: proxy_failed: GET \/v1\/models: the proxy requires authentication \(HTTP 407\), for the tunnel to gateway\.internal/,
    );
    expect(r.stderr).toMatch(/hint: .*http:\/\/user:password@proxy:port/);
    expect(r.stderr).not.toMatch(/interrupted/);
  });

  it('an HTTPS_PROXY that is no address is exit 3 naming the variable, without its text', async () => {
    const r = await runGw(['models'], { env: { ...https, HTTPS_PROXY: 'http://user:s3cret@' } });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/^error: proxy_failed: HTTPS_PROXY is not a proxy address/);
    expect(r.stderr).not.toContain('s3cret');
  });

  it('NO_PROXY address ranges (CIDR) go direct', async () => {
    const sim = await useSim();
    const proxy = await startProxy();
    for (const noProxy of ['127.0.0.0/8', '10.0.0.0/8 127.0.0.1/32', '::1/128,127.0.0.0/8']) {
      const r = await runGw(['models', '--json'], {
        env: { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url, NO_PROXY: noProxy, ...sim.env },
      });
      expect(r.exitCode).toBe(0);
    }
    expect(proxy.forwards).toEqual([]);
    const through = await runGw(['models', '--json'], {
      env: { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url, NO_PROXY: '10.0.0.0/8', ...sim.env },
    });
    expect(through.exitCode).toBe(0);
    expect(proxy.forwards).toHaveLength(1);
  });
});
