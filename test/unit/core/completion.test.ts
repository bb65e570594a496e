import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGw } from '../../helpers/gw.js';
import { tempDir } from '../../helpers/tmp.js';

/** Sources the bash script in a real bash, sets COMP_WORDS/COMP_CWORD as readline would, runs _gw. */
function complete(script: string, line: string[]): string[] {
  const dir = tempDir('gw-completion-');
  const file = join(dir, 'gw.bash');
  writeFileSync(file, script);
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
    { encoding: 'utf8' },
  );
  return out.split('\n').filter((l) => l !== '');
}

describe('gw completion', () => {
  it('bash completes top-level and nested verbs and flags from the command tree', async () => {
    const r = await runGw(['completion', 'bash']);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    const script = r.stdout;
    expect(complete(script, ['gw', 'vid'])).toEqual(['video']);
    expect(complete(script, ['gw', 'co'])).toEqual(['config', 'completion']);
    expect(complete(script, ['gw', 'config', 's'])).toEqual(['set']);
    expect(complete(script, ['gw', 'config', 'set', '--tok'])).toEqual(['--token-stdin']);
    // Global flags and their values are skipped while walking to the command.
    expect(complete(script, ['gw', '--profile', 'staging', 'config', '--json', 'u'])).toEqual([
      'use',
      'unset',
    ]);
    // Global flags complete at any depth; an argument's choices are offered.
    expect(complete(script, ['gw', 'config', 'list', '--verb'])).toEqual(['--verbose']);
    expect(complete(script, ['gw', 'completion', '--hel'])).toEqual(['--help']);
    expect(complete(script, ['gw', 'completion', 'z'])).toEqual(['zsh']);
  });

  it('bash completes `gw beta asset w` to wait', async () => {
    const r = await runGw(['completion', 'bash']);
    expect(complete(r.stdout, ['gw', 'beta', 'asset', 'w'])).toEqual(['wait']);
    expect(complete(r.stdout, ['gw', 'beta', 't'])).toEqual(['task']);
    expect(complete(r.stdout, ['gw', 'beta', 'asset', 'group', 'c'])).toEqual(['create']);
    expect(complete(r.stdout, ['gw', 'video', 'create', '--reso'])).toEqual(['--resolution']);
    expect(complete(r.stdout, ['gw', 'video', 'download', 'v1', '--f'])).toEqual(['--force']);
    // A flag's choices follow the flag.
    expect(complete(r.stdout, ['gw', 'history', '--kind', 'beta-'])).toEqual(['beta-task', 'beta-asset']);
  });

  it('zsh and fish scripts carry the same tree', async () => {
    const zsh = await runGw(['completion', 'zsh']);
    expect(zsh.exitCode).toBe(0);
    expect(zsh.stdout.startsWith('#compdef gw\n')).toBe(true);
    expect(zsh.stdout).toContain(`'config') printf '%s\\n' 'set:`);
    expect(zsh.stdout).not.toMatch(/local[^\n]*\bpath=/);
    const fish = await runGw(['completion', 'fish']);
    expect(fish.exitCode).toBe(0);
    expect(fish.stdout).toContain(`complete -c gw -f -n '__gw_at \\'config\\'' -a 'set'`);
    expect(fish.stdout).toContain(`-l 'token-stdin'`);
  });

  it('rejects an unknown shell with exit 2', async () => {
    const r = await runGw(['completion', 'powershell']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/bash, zsh, fish/);
  });
});
