import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedDirs, spawnGw } from '../helpers/gw.js';
import { spawnPty, stripAnsi } from '../helpers/pty.js';
import { useSim } from '../helpers/sim.js';

/** `gw login` on a terminal against a simulator, answered up to its token prompt. */
async function atTokenPrompt(): Promise<{
  sim: Awaited<ReturnType<typeof useSim>>;
  dirs: ReturnType<typeof isolatedDirs>;
  s: ReturnType<typeof spawnPty>;
}> {
  const sim = await useSim();
  const dirs = isolatedDirs();
  const s = spawnPty(['login'], dirs);
  await s.expect('Gateway base URL');
  s.type(`${sim.baseUrl}\r`);
  await s.expect('Gateway token');
  return { sim, dirs, s };
}

describe('gw login on a terminal', () => {
  it('asks for base URL and a hidden token, checks GET /v1/models, and saves a 0600 profile', async () => {
    const { sim, dirs, s } = await atTokenPrompt();
    s.type(`${sim.env.GW_TOKEN}\r`);
    expect(await s.exited).toBe(0);
    const screen = stripAnsi(s.output());
    expect(screen).toMatch(/logged in: profile "default" sees \d+ models/);
    expect(screen).not.toContain(sim.env.GW_TOKEN);
    const file = join(dirs.GW_CONFIG_DIR, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default).toEqual({
      baseUrl: sim.baseUrl,
      token: sim.env.GW_TOKEN,
    });
    expect(sim.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models']);
    expect((await spawnGw(['models', '--json'], { env: dirs })).exitCode).toBe(0);
  });

  it('refuses a base URL that is not a URL and asks again', async () => {
    const sim = await useSim();
    const s = spawnPty(['login'], isolatedDirs());
    await s.expect('Gateway base URL');
    s.type('not a url\r');
    await s.expect('enter an http(s) URL');
    s.type('\x15'); // Ctrl-U clears the line
    s.type(`${sim.baseUrl}\r`);
    await s.expect('Gateway token');
    s.type(`${sim.env.GW_TOKEN}\r`);
    expect(await s.exited).toBe(0);
  });

  it('a token the gateway refuses is asked for again; the right one logs in', async () => {
    const { sim, dirs, s } = await atTokenPrompt();
    s.type('sk-wrong-token-000000\r');
    // One pattern for the warning and the prompt after it (they may arrive in one write).
    await s.expect(/the gateway refused this token \(401[\s\S]*Gateway token/);
    s.type(`${sim.env.GW_TOKEN}\r`);
    expect(await s.exited).toBe(0);
    const screen = stripAnsi(s.output());
    expect(screen).toMatch(/logged in: profile "default" sees \d+ models/);
    expect(screen).not.toContain('run `gw login`');
    expect(screen).not.toContain('sk-wrong-token-000000');
    expect(
      JSON.parse(readFileSync(join(dirs.GW_CONFIG_DIR, 'config.json'), 'utf8')).profiles.default.token,
    ).toBe(sim.env.GW_TOKEN);
  });
});
