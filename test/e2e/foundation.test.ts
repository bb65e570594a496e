import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedDirs, runGw, spawnGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';

describe('gw --help and --version', () => {
  it('lists the command groups and exits 0', async () => {
    const r = await runGw(['--help']);
    expect(r.exitCode).toBe(0);
    for (const group of [
      'probe',
      'models',
      'chat',
      'video',
      'alpha',
      'beta',
      'sim',
      'config',
      'login',
      'history',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^\\s+${group}\\b`, 'm'));
    }
    expect(r.stdout).toContain('gw probe --sim');
  });

  it('prints the version', async () => {
    const r = await runGw(['--version']);
    expect(r).toMatchObject({ exitCode: 0, stdout: '0.1.0\n' });
  });

  it('an unknown flag is a usage error (exit 2)', async () => {
    const r = await runGw(['models', '--bogus']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--bogus'/);
  });
});

describe('gw models', () => {
  it('prints a table of visible models', async () => {
    const sim = await useSim();
    const r = await runGw(['models'], { env: sim.env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/id\s+.*owned_by\s+.*created/);
    expect(r.stdout).toContain('clip-1.1-t2v');
    expect(r.stdout).toContain('gamma-video-2-0');
  });

  it('--json prints the gateway body unchanged', async () => {
    const sim = await useSim();
    const r = await runGw(['models', '--json'], { env: sim.env });
    expect(r.exitCode).toBe(0);
    const body = JSON.parse(r.stdout) as { object: string; data: Array<{ id: string }> };
    expect(body.object).toBe('list');
    expect(body.data.map((m) => m.id)).toContain('chat-3.7-plus');
  });

  it('shows only the models a restricted token sees', async () => {
    const sim = await useSim({ tokens: { 'sk-narrow-000001': { tenant: 't', models: ['chat-3.7-plus'] } } });
    const r = await runGw(['models', '--json'], {
      env: { GW_BASE_URL: sim.baseUrl, GW_TOKEN: 'sk-narrow-000001' },
    });
    expect((JSON.parse(r.stdout) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual([
      'chat-3.7-plus',
    ]);
  });

  it('an unknown token exits 3 with the request id and hint; --json prints the gateway error', async () => {
    const sim = await useSim();
    const env = { GW_BASE_URL: sim.baseUrl, GW_TOKEN: 'sk-unknown-token-1' };
    // The real binary: its exit status, and the error on stderr with nothing on stdout.
    const r = await spawnGw(['models'], { env });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: invalid_api_key: unknown token \(req-sim-\w+\)$/m);
    expect(r.stderr).toMatch(/^request id: req-sim-\w+$/m);
    expect(r.stderr).toMatch(/^hint: /m);
    const j = await runGw(['models', '--json'], { env });
    expect(JSON.parse(j.stderr)).toMatchObject({
      error: { code: 'invalid_api_key', type: 'authentication_error' },
    });
    expect(r.stderr + j.stderr).not.toContain('sk-unknown-token-1');
  });

  it('missing base URL or token is a configuration error (exit 3)', async () => {
    expect((await runGw(['models'])).exitCode).toBe(3);
    const r = await runGw(['models'], { env: { GW_BASE_URL: 'http://127.0.0.1:9' } });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('no gateway token');
  });

  it('--verbose prints one line per exchange on stderr, never the token', async () => {
    const sim = await useSim();
    const r = await runGw(['models', '--verbose'], { env: sim.env });
    expect(r.stderr).toMatch(/^GET \/v1\/models 200 \d+ms request-id req-sim-\w+$/m);
    expect(r.stderr + r.stdout).not.toContain(sim.env.GW_TOKEN);
  });
});

describe('gw config and login', () => {
  it('stores a token from stdin, lists it redacted, and the file is mode 0600', async () => {
    const dirs = isolatedDirs();
    const token = 'sk-config-secret-4321';
    expect(
      (await runGw(['config', 'set', 'baseUrl', 'https://gw.example.com'], { env: dirs })).exitCode,
    ).toBe(0);
    const set = await runGw(['config', 'set', 'token', '--token-stdin'], {
      env: dirs,
      stdin: `${token}\n`,
    });
    expect(set.exitCode).toBe(0);
    const list = await runGw(['config', 'list'], { env: dirs });
    expect(list.stdout).toContain('https://gw.example.com');
    expect(list.stdout).toContain('sk-…4321');
    expect(list.stdout + list.stderr + set.stderr).not.toContain(token);
    const json = await runGw(['config', 'list', '--json'], { env: dirs });
    expect(json.stdout).not.toContain(token);
    expect(
      JSON.parse(readFileSync(join(dirs.GW_CONFIG_DIR, 'config.json'), 'utf8')).profiles.default.token,
    ).toBe(token);
    expect(statSync(join(dirs.GW_CONFIG_DIR, 'config.json')).mode & 0o777).toBe(0o600);
    const get = await runGw(['config', 'get', 'token'], { env: dirs });
    expect(get.stdout).toBe('sk-…4321\n');
  });

  it('refuses a token given as an argument (exit 2)', async () => {
    const r = await runGw(['config', 'set', 'token', 'sk-in-history-0001']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--token-stdin');
    expect(r.stderr).not.toContain('sk-in-history-0001');
  });

  it('profiles: flag > environment > profile, and `config use` switches', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    await runGw(['--profile', 'local', 'config', 'set', 'baseUrl', sim.baseUrl], { env: dirs });
    await runGw(['--profile', 'local', 'config', 'set', 'token', '--token-stdin'], {
      env: dirs,
      stdin: sim.env.GW_TOKEN,
    });
    await runGw(['config', 'use', 'local'], { env: dirs });
    expect((await runGw(['models', '--json'], { env: dirs })).exitCode).toBe(0);
    // The environment wins over the profile: a wrong GW_BASE_URL breaks the call.
    const r = await runGw(['models', '--timeout', '2s'], {
      env: { ...dirs, GW_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(r.exitCode).toBe(1);
    // And the flag wins over the environment.
    const f = await runGw(['models', '--json', '--base-url', sim.baseUrl], {
      env: { ...dirs, GW_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(f.exitCode).toBe(0);
  });

  it('login without a terminal explains the non-interactive way and exits 2', async () => {
    const r = await runGw(['login']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('gw login --base-url <url> --token-stdin');
  });

  it('login --base-url --token-stdin checks GET /v1/models and saves the profile', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const r = await runGw(['login', '--base-url', `${sim.baseUrl}/v1`, '--token-stdin'], {
      env: dirs,
      stdin: sim.env.GW_TOKEN,
    });
    expect(r.exitCode).toBe(0);
    expect(sim.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /v1/models']);
    const saved = JSON.parse(readFileSync(join(dirs.GW_CONFIG_DIR, 'config.json'), 'utf8'));
    expect(saved.profiles.default.baseUrl).toBe(sim.baseUrl);
    expect((await runGw(['models', '--json'], { env: dirs })).exitCode).toBe(0);
  });

  it('login with a refused token saves nothing and exits 3', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const r = await runGw(['login', '--base-url', sim.baseUrl, '--token-stdin'], {
      env: dirs,
      stdin: 'sk-wrong-00000001',
    });
    expect(r.exitCode).toBe(3);
    expect((await runGw(['config', 'list', '--json'], { env: dirs })).stdout).not.toContain(sim.baseUrl);
  });
});

describe('gw in a pipeline', () => {
  it('stops quietly when the reader goes away (`gw … | head -1`)', async () => {
    const sim = await useSim({ streamChunks: 20_000 });
    const { execFile } = await import('node:child_process');
    const { GW_BIN } = await import('../helpers/gw.js');
    const script = `node "${GW_BIN}" chat --stream --json -m chat-3.7-plus hi 2>err.txt | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"; cat err.txt`;
    const dirs = isolatedDirs();
    const { promisify } = await import('node:util');
    const { stdout: out } = await promisify(execFile)('bash', ['-c', script], {
      cwd: dirs.HOME,
      env: { ...process.env, ...dirs, ...sim.env },
    });
    expect(out.trim()).toBe('0');
  });
});
