/**
 * Secrets that arrive in pieces or ride inside URLs: a token split across two streamed deltas, a password in the
 * base URL (refused wherever it comes from, never printed), a password in a webhook URL (masked in warnings), and
 * gateway text in a Slack `text` (escaped by Slack's rules).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Alerter } from '../../src/probe/alerts.js';
import type { ProbeReport } from '../../src/probe/runner.js';
import { GatewayClient } from '../../src/client/gateway-client.js';
import { isolatedDirs, runGw, spawnGw } from '../helpers/gw.js';
import { closeAfterTest } from '../helpers/servers.js';
import { useSim } from '../helpers/sim.js';

const TOKEN = 'sk-splitcanary-0123456789';

describe('a token split across two streamed deltas is masked', () => {
  it('the second half is sent only once the first is on stdout: the whole token never shows', async () => {
    let printed: () => void = () => undefined;
    const firstShown = new Promise<void>((resolve) => (printed = resolve));
    const event = (text: string): string =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event(`hello ${TOKEN.slice(0, 9)}`));
      void firstShown.then(() => res.end(`${event(`${TOKEN.slice(9)} bye`)}data: [DONE]\n\n`));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closeAfterTest(server);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let out = '';
    const r = await spawnGw(['chat', '--stream', '-m', 'chat-1', 'hi'], {
      env: { GW_BASE_URL: base, GW_TOKEN: TOKEN },
      onSpawn: (child) =>
        child.stdout?.on('data', (b: Buffer) => {
          out += b.toString('utf8');
          if (out.includes('hello')) printed();
        }),
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(TOKEN);
    expect(r.stdout).not.toContain('splitcanary');
    expect(r.stdout).toBe('hello sk-…6789 bye\n');
  });
});

describe('a password in the base URL is refused wherever it comes from, and never printed', () => {
  const URL_PW = 'https://ops:s3cretpw@gateway.example';

  it('flag (exit 2), GW_BASE_URL (exit 3), gw config set (exit 2), a saved profile (exit 3); nothing sent', async () => {
    const home = isolatedDirs();
    const flag = await runGw(['--base-url', URL_PW, 'models'], { env: { ...home, GW_TOKEN: TOKEN } });
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toMatch(
      /base URL "https:\/\/ops:\*\*\*@gateway\.example\/" holds a user name or password/,
    );
    const env = await runGw(['models'], { env: { ...home, GW_TOKEN: TOKEN, GW_BASE_URL: URL_PW } });
    expect(env.exitCode).toBe(3);
    expect(env.stderr).toMatch(/hint: set GW_BASE_URL to the address alone/);
    const set = await runGw(['config', 'set', 'baseUrl', URL_PW], { env: home });
    expect(set.exitCode).toBe(2);
    // A profile saved before this rule existed.
    mkdirSync(home.GW_CONFIG_DIR, { recursive: true });
    writeFileSync(
      join(home.GW_CONFIG_DIR, 'config.json'),
      JSON.stringify({ current: 'default', profiles: { default: { baseUrl: URL_PW, token: TOKEN } } }),
    );
    const profile = await runGw(['models'], { env: home });
    expect(profile.exitCode).toBe(3);
    expect(profile.stderr).toMatch(/gw config set baseUrl/);
    const doctor = await runGw(['doctor', '--json'], { env: home });
    const list = await runGw(['config', 'list'], { env: home });
    const verbose = await runGw(['--verbose', 'doctor'], { env: home });
    for (const r of [flag, env, set, profile, doctor, list, verbose]) {
      expect(r.stdout + r.stderr).not.toContain('s3cretpw');
    }
    expect(doctor.stdout).toContain('ops:***@gateway.example');
  });

  it('a scheme-less proxy value with a password is masked by gw doctor', async () => {
    const r = await runGw(['doctor', '--offline', '--json'], {
      env: { HTTPS_PROXY: 'ops:s3cretpw@proxy.example:3128' },
    });
    expect(r.stdout).not.toContain('s3cretpw');
    expect(r.stdout).toContain('ops:***@proxy.example:3128');
  });

  it('new GatewayClient({}) says a base URL is required (not a TypeError)', () => {
    expect(() => new GatewayClient({} as never)).toThrow(/^a base URL is required/);
    expect(() => new GatewayClient({ baseUrl: URL_PW, token: TOKEN })).toThrow(/ops:\*\*\*@/);
  });
});

function failing(detail: string): ProbeReport {
  return {
    startedAt: '2026-01-01T00:00:00.000Z',
    checks: [{ id: 'chat', check: 'chat', model: 'm', status: 'fail', detail, latencyMs: 1 }],
  } as unknown as ProbeReport;
}

describe('webhooks', () => {
  it('a webhook URL with a password is masked in the warning of a failed delivery', async () => {
    const warnings: string[] = [];
    const a = new Alerter({
      url: 'http://hook:s3cretpw@127.0.0.1:9/x',
      after: 1,
      gateway: 'https://gw.example',
      redact: (t) => t,
      warn: (t) => warnings.push(t),
      attempts: 1,
    });
    a.observe(failing('boom'));
    await a.flush(5_000);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).not.toContain('s3cretpw');
    expect(warnings[0]).toContain('hook:***@');
  });

  it('the Slack text escapes &, < and > from gateway text; the other fields keep it as sent', async () => {
    const sent: Array<{ text: string; detail: string }> = [];
    const a = new Alerter({
      url: 'https://hooks.example/x',
      after: 1,
      gateway: 'https://gw.example',
      redact: (t) => t,
      warn: () => undefined,
      deliver: (_url, body) => {
        sent.push(JSON.parse(body) as { text: string; detail: string });
        return Promise.resolve({ status: 200 });
      },
    });
    const evil = '<!channel> <https://evil.example|click here> & more';
    a.observe(failing(evil));
    await a.flush(5_000);
    expect(sent[0]?.text).toContain('&lt;!channel&gt; &lt;https://evil.example|click here&gt; &amp; more');
    expect(sent[0]?.text).not.toMatch(/[<>]/);
    expect(sent[0]?.detail).toBe(evil);
  });

  it('--metrics-host "" is refused (it would bind every interface): exit 2, nothing listens', async () => {
    const sim = await useSim();
    const r = await runGw(['probe', '--every', '1m', '--metrics-port', '0', '--metrics-host', '', '--json'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: { param: '--metrics-host' } });
    expect(sim.requests).toEqual([]);
  });
});
