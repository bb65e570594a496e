import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/cli/main.js';
import { runGw, spawnGw } from '../helpers/gw.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('start-up paths', () => {
  it('the launcher answers --version without loading the program, with the same version', async () => {
    expect(VERSION).toBe(pkg.version);
    for (const flag of ['--version', '-V']) {
      const r = await spawnGw([flag]);
      expect(r).toEqual({ stdout: `${pkg.version}\n`, stderr: '', exitCode: 0 });
    }
    // Any other argument goes through the program (commander's own --version).
    const r = await spawnGw(['--no-color', '--version']);
    expect(r.stdout).toBe(`${VERSION}\n`);
    expect(r.exitCode).toBe(0);
  });

  it('the launcher serves the saved root help page exactly as the program prints it', async () => {
    const live = await runGw(['--help']);
    for (const flag of ['--help', '-h']) {
      const saved = await spawnGw([flag]);
      expect(saved).toEqual({ stdout: live.stdout, stderr: '', exitCode: 0 });
    }
  });

  it('help and errors work without a command having run (the context loads lazily)', async () => {
    const help = await runGw(['--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Usage: gw');
    const unknown = await runGw(['models', '--no-such-flag']);
    expect(unknown.exitCode).toBe(2);
    const config = await runGw(['--base-url', 'not a url', 'models']);
    expect(config.exitCode).toBe(3);
    expect(config.stderr).toMatch(/^error: config/m);
  });
});
