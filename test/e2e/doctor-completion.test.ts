import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gwBinDir, isolatedDirs, runGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { closedPort } from '../helpers/servers.js';
import { tempDir } from '../helpers/tmp.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface DoctorDoc {
  ok: boolean;
  exit_code: number;
  settings: Record<string, { value: unknown; source: string }>;
  defaults: Record<string, string>;
  proxy: Record<string, string>;
  checks: Array<{ name: string; status: string; detail: string }>;
}

function doc(stdout: string): DoctorDoc {
  return JSON.parse(stdout) as DoctorDoc;
}

describe('gw doctor', () => {
  it('all good: exit 0, each setting with its source, gateway, token and clock checks', async () => {
    const sim = await useSim();
    const env = { ...isolatedDirs(), GW_TOKEN: sim.env.GW_TOKEN, HTTPS_PROXY: 'http://u:secret@proxy:3128' };
    await runGw(['config', 'set', 'baseUrl', sim.baseUrl], { env });
    await runGw(['config', 'set', 'defaults.chat', 'chat-3.7-plus'], { env });
    const r = await runGw(['doctor', '--json'], { env });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const d = doc(r.stdout);
    expect(d.ok).toBe(true);
    expect(d.settings.baseUrl).toEqual({ value: sim.baseUrl, source: 'profile' });
    expect(d.settings.token?.source).toBe('env');
    expect(JSON.stringify(d)).not.toContain(sim.env.GW_TOKEN);
    expect(d.settings.timeout?.source).toBe('default');
    expect(d.defaults).toEqual({ chat: 'chat-3.7-plus' });
    expect(d.proxy.HTTPS_PROXY).not.toContain('secret');
    const names = d.checks.map((c) => `${c.name}:${c.status}`);
    expect(names).toEqual(expect.arrayContaining(['node:ok', 'gateway:ok', 'token:ok', 'clock:ok']));

    const flag = await runGw(['--base-url', sim.baseUrl, 'doctor', '--json'], { env });
    expect(doc(flag.stdout).settings.baseUrl?.source).toBe('flag');
    const text = await runGw(['doctor'], { env });
    expect(text.stdout).toMatch(/^baseUrl:\s+\S+\s+\[profile\]$/m);
    expect(text.stdout).toMatch(/^ok\s+token: accepted/m);
  });

  it('no base URL is exit 3; a rejected token is exit 3; an unreachable gateway is exit 1', async () => {
    const none = await runGw(['doctor', '--json']);
    expect(none.exitCode).toBe(3);
    expect(doc(none.stdout).checks.find((c) => c.name === 'gateway')?.status).toBe('fail');

    const sim = await useSim();
    const bad = await runGw(['doctor', '--json'], {
      env: { GW_BASE_URL: sim.baseUrl, GW_TOKEN: 'sk-unknown-token-1' },
    });
    expect(bad.exitCode).toBe(3);
    expect(doc(bad.stdout).checks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'gateway', status: 'ok' }),
        expect.objectContaining({ name: 'token', status: 'fail' }),
      ]),
    );

    const port = await closedPort();
    const down = await runGw(['--timeout', '2s', 'doctor', '--json'], {
      env: { GW_BASE_URL: `http://127.0.0.1:${port}`, GW_TOKEN: 'sk-any-0000000001' },
    });
    expect(down.exitCode).toBe(1);
    expect(doc(down.stdout).checks.find((c) => c.name === 'gateway')?.status).toBe('fail');
  });

  it('an unknown --profile is a failed check (exit 3)', async () => {
    const r = await runGw(['--profile', 'nope', 'doctor', '--offline']);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toMatch(/FAIL\s+profile: profile "nope"/);
  });
});

/** Runs the bash completion function as readline would, with `gw` on PATH and the given state. */
function bashComplete(script: string, line: string[], env: Record<string, string>): string[] {
  const dir = tempDir('gw-compl-');
  dirs.push(dir);
  const file = join(dir, 'gw.bash');
  writeFileSync(file, script);
  const bin = gwBinDir();
  dirs.push(bin);
  const words = line.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const out = execFileSync(
    'bash',
    [
      '--noprofile',
      '--norc',
      '-c',
      `source "$1"; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _gw; printf '%s\\n' "\${COMPREPLY[@]}"`,
      'bash',
      file,
    ],
    { encoding: 'utf8', env: { PATH: `${bin}:${process.env.PATH ?? ''}`, NO_COLOR: '1', ...env } },
  );
  return out.split('\n').filter((l) => l !== '');
}

describe('shell completion offers profiles, cached models, choices and journal ids', () => {
  it('bash: --profile, -m, --resolution, --ratio and video ids', async () => {
    const sim = await useSim();
    const env = { ...isolatedDirs(), ...sim.env };
    await runGw(['--profile', 'staging', 'config', 'set', 'baseUrl', sim.baseUrl], { env });
    await runGw(['--profile', 'prod', 'config', 'set', 'baseUrl', sim.baseUrl], { env });
    expect((await runGw(['models'], { env })).exitCode).toBe(0); // fills the model cache
    const id = (await runGw(['video', 'create', 'a', '-m', 'clip-1.1-t2v'], { env })).stdout.trim();
    const script = (await runGw(['completion', 'bash'], { env })).stdout;

    expect(bashComplete(script, ['gw', '--profile', 'st'], env)).toEqual(['staging']);
    expect(bashComplete(script, ['gw', 'chat', '-m', 'chat-3.7-p'], env)).toEqual(['chat-3.7-plus']);
    expect(bashComplete(script, ['gw', 'video', 'create', '--resolution', '1'], env)).toEqual(['1080p']);
    expect(bashComplete(script, ['gw', 'beta', 'task', 'create', '--ratio', '16'], env)).toEqual(['16:9']);
    expect(bashComplete(script, ['gw', 'video', 'get', 'video_'], env)).toEqual([id]);
    expect(bashComplete(script, ['gw', 'beta', 'task', 'get', 'video_'], env)).toEqual([]);
  });

  it('zsh and fish scripts ask gw __complete; __complete never fails', async () => {
    const zsh = (await runGw(['completion', 'zsh'])).stdout;
    expect(zsh).toContain("'--profile') what='profiles'");
    expect(zsh).toContain("'video get') what='ids video'");
    const fish = (await runGw(['completion', 'fish'])).stdout;
    expect(fish).toContain("-l 'profile' -x -a '(gw __complete profiles 2>/dev/null)'");
    expect(fish).toContain('(gw __complete ids video 2>/dev/null)');
    const r = await runGw(['__complete', 'ids', 'video'], { env: { GW_STATE_DIR: '/nonexistent/x' } });
    expect(r).toEqual({ stdout: '', stderr: '', exitCode: 0 });
  });
});
