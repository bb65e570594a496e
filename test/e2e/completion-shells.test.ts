/**
 * Completion candidates are inert in the real shells: model ids cached by `gw models` and ids in the journal are
 * text a gateway chose, and Tab must never run it, expand it or print its escape sequences. Each shell's completion
 * is driven without a terminal: bash through COMP_WORDS/COMP_CWORD and `_gw`, zsh by calling `_gw` with its
 * completion builtins stubbed to print what they were given, fish through `complete -C`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gwBinDir, isolatedDirs, runGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';

/** What a hostile gateway could make gw store: each would create a file named pwned* in the working directory. */
const HOSTILE = [
  'chat-$(touch${IFS}pwned1)',
  'chat-`touch${IFS}pwned2`',
  'chat-$(touch pwned3)',
  "chat-';touch pwned4;'",
  'chat-\u001b]0;owned\u0007',
  'chat-*',
  '-chat-flag',
];

interface Setup {
  env: Record<string, string>;
  cwd: string;
}

/** A state directory whose model cache and journal hold the hostile ids next to ordinary ones. */
function hostileState(): Setup {
  const env = { ...isolatedDirs(), NO_COLOR: '1' };
  mkdirSync(env.GW_STATE_DIR, { recursive: true });
  writeFileSync(
    join(env.GW_STATE_DIR, 'models-cache.json'),
    JSON.stringify({ baseUrl: 'http://127.0.0.1:1', ids: [...HOSTILE, 'chat-ok'] }),
  );
  const journal = ['video_ok', ...HOSTILE.map((h) => h.replace(/^chat-/, 'video_'))].map((id) =>
    JSON.stringify({ op: 'create', kind: 'video', id, createdAt: '2025-01-01T00:00:00.000Z' }),
  );
  writeFileSync(join(env.GW_STATE_DIR, 'journal.jsonl'), `${journal.join('\n')}\n`);
  const cwd = tempDir('gw-tab-');
  return { env: { ...env, PATH: `${gwBinDir()}:${process.env.PATH ?? ''}` }, cwd };
}

function shell(bin: string, args: string[], s: Setup): string[] {
  const out = execFileSync(bin, args, { encoding: 'utf8', env: s.env, cwd: s.cwd });
  return out.split('\n').filter((l) => l !== '');
}

/** The completion scripts, written once per file. */
const scripts = new Map<string, string>();
beforeAll(async () => {
  const dir = tempDir('gw-tab-scripts-');
  for (const name of ['bash', 'zsh', 'fish']) {
    const file = join(dir, `gw.${name}`);
    writeFileSync(file, (await runGw(['completion', name])).stdout);
    scripts.set(name, file);
  }
});

function script(name: string): string {
  return scripts.get(name) ?? '';
}

function bash(s: Setup, line: string[]): string[] {
  const file = script('bash');
  const words = line.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const body = `source "$1"; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _gw; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return shell('/usr/bin/bash', ['--noprofile', '--norc', '-c', body, 'bash', file], s);
}

/** zsh: compadd, _describe and _files stubbed (outside a completion widget they do not exist) to print the words. */
function zsh(s: Setup, line: string[]): string[] {
  const file = script('zsh');
  const harness = `compdef() { :; }
compadd() { local a; for a in "$@"; do [[ $a == -* ]] && continue; printf '%s\\n' "\${(P@)a}"; done; }
_describe() { printf '%s\\n' "\${(P@)4}"; }
_files() { :; }
source "$1"; shift
words=("$@"); CURRENT=$#
_gw`;
  return shell('/usr/bin/zsh', ['-f', '-c', harness, 'zsh', file, ...line], s);
}

function fish(s: Setup, line: string): string[] {
  const file = script('fish');
  const body = `source $argv[1]; complete -C ${JSON.stringify(line).replace(/\$/g, '\\$')}`;
  return shell('/usr/bin/fish', ['--no-config', '-c', body, file], s).map((l) => l.split('\t')[0] ?? '');
}

function expectInert(s: Setup, offered: string[]): void {
  expect(readdirSync(s.cwd).filter((f) => f.startsWith('pwned'))).toEqual([]);
  for (const w of offered) expect(w).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$/);
}

/**
 * A `gw` that answers every `__complete` with the hostile words unfiltered (as an older gw would): the scripts
 * must still run none of them, so the guarantee does not rest on the filter alone.
 */
function unfilteredGw(s: Setup): Setup {
  const dir = tempDir('gw-fake-bin-');
  writeFileSync(join(dir, 'gw'), `#!/bin/sh\ncat "${join(dir, 'words')}"\n`, { mode: 0o755 });
  writeFileSync(join(dir, 'words'), `${HOSTILE.join('\n')}\nchat-ok\n`);
  return { ...s, env: { ...s.env, PATH: `${dir}:${process.env.PATH ?? ''}` } };
}

describe('completion offers no gateway text a shell would run or a terminal would obey', () => {
  it('gw __complete drops every id outside the strict character set', async () => {
    const s = hostileState();
    const models = await runGw(['__complete', 'models'], { env: s.env });
    expect(models.stdout).toBe('chat-ok\n');
    const ids = await runGw(['__complete', 'ids', 'video'], { env: s.env });
    expect(ids.stdout).toBe('video_ok\n');
  });

  it('bash: Tab after -m and after `video get` runs nothing and offers only the plain ids', () => {
    const s = hostileState();
    expect(bash(s, ['gw', 'chat', '-m', 'chat-'])).toEqual(['chat-ok']);
    expect(bash(s, ['gw', 'video', 'get', 'video_'])).toEqual(['video_ok']);
    expect(bash(s, ['gw', 'video', 'get', ''])).toEqual(['video_ok']);
    expectInert(s, bash(s, ['gw', 'chat', '--model', '']));
  });

  it('zsh: the same lines run nothing and offer only the plain ids', () => {
    const s = hostileState();
    expect(zsh(s, ['gw', 'chat', '-m', 'chat-'])).toEqual(['chat-ok']);
    expect(zsh(s, ['gw', 'video', 'get', 'video_'])).toEqual(['video_ok']);
    expectInert(s, zsh(s, ['gw', 'chat', '--model', '']));
  });

  it('fish: complete -C runs nothing and offers only the plain ids', () => {
    const s = hostileState();
    expect(fish(s, 'gw chat -m chat-')).toEqual(['chat-ok']);
    expect(fish(s, 'gw video get video_')).toEqual(['video_ok']);
    expectInert(s, fish(s, 'gw chat --model '));
  });

  it('the scripts themselves expand nothing, even when handed unfiltered words', () => {
    const s = unfilteredGw(hostileState());
    bash(s, ['gw', 'chat', '-m', 'chat-']);
    bash(s, ['gw', 'video', 'get', '']);
    zsh(s, ['gw', 'chat', '-m', 'chat-']);
    zsh(s, ['gw', 'video', 'get', '']);
    fish(s, 'gw chat -m chat-');
    fish(s, 'gw video get ');
    expect(readdirSync(s.cwd).filter((f) => f.startsWith('pwned'))).toEqual([]);
  });
});
