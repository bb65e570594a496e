/**
 * Sibling verbs agree (issue 29 item 5): one --dry-run shape for video, alpha and beta; one wait behaviour; `gw help
 * <group> <verb>`; completion offers exactly the values a verb accepts; a bad value names the flag as typed.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { INSTANT, useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const NO_GATEWAY = { GW_BASE_URL: '', GW_TOKEN: '' };

const DRY_RUNS: Array<[string, string[]]> = [
  ['/v1/videos', ['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--seconds', '5']],
  ['/alpha/v1/videos/image2video', ['alpha', 'i2v', '--image', 'https://example.com/a.png', '--prompt', 'x']],
  [
    '/beta/api/v3/contents/generations/tasks',
    ['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0-fast'],
  ],
];

describe('--dry-run has one shape in every family', () => {
  it.each(DRY_RUNS)(
    '%s: --json {method, path, body, price}; else request, body, price on stdout, notes on stderr',
    async (path, argv) => {
      const json = await runGw([...argv, '--dry-run', '--json'], { env: NO_GATEWAY });
      expect(json.exitCode, json.stderr).toBe(0);
      expect(json.stderr).toBe('');
      const doc = JSON.parse(json.stdout) as Record<string, unknown>;
      expect(Object.keys(doc)).toEqual(['method', 'path', 'body', 'price']);
      expect(doc).toMatchObject({ method: 'POST', path, price: { priced: expect.any(Boolean) as boolean } });

      const human = await runGw([...argv, '--dry-run'], { env: NO_GATEWAY });
      expect(human.exitCode).toBe(0);
      const lines = human.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe(`POST ${path}`);
      expect(JSON.parse(lines.slice(1, -1).join('\n'))).toEqual(doc.body);
      expect(lines.at(-1)).toMatch(/^price: /);
      expect(human.stderr).toMatch(/dry run: nothing was sent\n$/);
    },
  );
});

describe('every wait behaves the same way', () => {
  it('video, beta task and beta asset: nothing on stdout, "<id> <state>" on stderr, --json the record', async () => {
    const sim = await useSim({ timings: INSTANT });
    const env = { ...isolatedDirs(), ...sim.env };
    const create = async (argv: string[]): Promise<string> => (await runGw(argv, { env })).stdout.trim();
    const video = await create(['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--seconds', '5']);
    const task = await create(['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0-fast']);
    const group = await create(['beta', 'asset', 'group', 'create', '--name', 'g']);
    const asset = await create([
      'beta',
      'asset',
      'create',
      '--group',
      group,
      '--url',
      'https://example.com/cat.png',
      '--type',
      'Image',
    ]);
    const waits: Array<[string[], string, string]> = [
      [['video', 'wait', video], video, 'completed'],
      [['beta', 'task', 'wait', task], task, 'succeeded'],
      [['beta', 'asset', 'wait', asset], asset, 'Active'],
    ];
    for (const [argv, id, state] of waits) {
      const r = await runGw(argv, { env });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout, argv.join(' ')).toBe('');
      expect(r.stderr, argv.join(' ')).toBe(`${id} ${state}\n`);
      const j = await runGw([...argv, '--json'], { env });
      expect(j.stderr).toBe('');
      expect(JSON.stringify(JSON.parse(j.stdout))).toContain(id);
    }
  });
});

describe('gw help <group> <verb>', () => {
  it("prints the verb's help, as --help does", async () => {
    for (const words of [
      ['video', 'create'],
      ['beta', 'task', 'wait'],
      ['load', 'compare'],
    ]) {
      const viaHelp = await runGw(['help', ...words]);
      const viaFlag = await runGw([...words, '--help']);
      expect(viaHelp.exitCode).toBe(0);
      expect(viaHelp.stdout).toBe(viaFlag.stdout);
      expect(viaHelp.stdout.split('\n')[0]).toContain(`gw ${words.join(' ')}`);
    }
  });
});

describe('completion offers exactly the values each verb accepts', () => {
  let script = '';
  beforeAll(async () => {
    const file = join(tempDir('gw-sib-'), 'gw.bash');
    writeFileSync(file, (await runGw(['completion', 'bash'])).stdout);
    script = file;
  });
  const complete = (line: string[]): string[] => {
    const words = line.map((w) => `'${w}'`).join(' ');
    const out = execFileSync(
      '/usr/bin/bash',
      [
        '--norc',
        '-c',
        `source "$1"; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _gw; printf '%s\\n' "\${COMPREPLY[@]}"`,
        'bash',
        script,
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH } },
    );
    return out.split('\n').filter((l) => l !== '');
  };

  it('video create --resolution offers 720p and 1080p only; beta and alpha offer their own', () => {
    expect(complete(['gw', 'video', 'create', '--resolution', ''])).toEqual(['720p', '1080p']);
    expect(complete(['gw', 'beta', 'task', 'create', '--resolution', ''])).toEqual([
      '480p',
      '720p',
      '1080p',
      '4k',
    ]);
    expect(complete(['gw', 'alpha', 'i2v', '--mode', ''])).toEqual(['std', 'pro']);
    expect(complete(['gw', 'alpha', 'i2v', '--duration', ''])).toEqual(['5', '10']);
  });

  it('every offered value is accepted by the verb (--dry-run, exit 0)', async () => {
    const cases: Array<[string[], string]> = [
      [['video', 'create', 'a fox', '-m', 'clip-1.1-t2v'], '--resolution'],
      [['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0'], '--resolution'],
      [['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0'], '--ratio'],
      [['alpha', 'i2v', '--image', 'https://example.com/a.png'], '--mode'],
      [['alpha', 'i2v', '--image', 'https://example.com/a.png'], '--aspect-ratio'],
    ];
    for (const [argv, flag] of cases) {
      const values = complete(['gw', ...argv.slice(0, argv[0] === 'alpha' ? 2 : 3), flag, '']);
      expect(values.length, `${argv.join(' ')} ${flag}`).toBeGreaterThan(1);
      for (const v of values) {
        const r = await runGw([...argv, flag, v, '--dry-run'], { env: NO_GATEWAY });
        expect(r.exitCode, `${argv.join(' ')} ${flag} ${v}: ${r.stderr}`).toBe(0);
      }
    }
  });
});

describe('a bad value names the flag as typed, also when a contract rule catches it', () => {
  it('gw chat --image ./first.png says --image:, gw beta asset upload --group "" says --group:', async () => {
    const env = { GW_BASE_URL: 'http://127.0.0.1:9', GW_TOKEN: 'sk-siblings-0001' };
    const cases: Array<[string[], string, RegExp]> = [
      [
        ['chat', '-m', 'chat-1', '--image', './first.png', 'hi'],
        '--image',
        /^--image: must be a public https URL/,
      ],
      [
        ['beta', 'asset', 'upload', '--group', '', '--url', 'https://example.com/a.png'],
        '--group',
        /^--group: must not be empty/,
      ],
      [
        ['beta', 'asset', 'create', '--group', '', '--url', 'https://example.com/a.png'],
        '--group',
        /^--group: must not be empty/,
      ],
      [['chat', '-m', 'chat-1', '--max-tokens', '0', 'hi'], '--max-tokens', /^--max-tokens: /],
      [['video', 'create', 'x', '-m', 'clip-1.1-t2v', '--seconds', '20'], '--seconds', /^--seconds: /],
    ];
    for (const [argv, flag, message] of cases) {
      const r = await runGw([...argv, '--json'], { env });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
      const e = (JSON.parse(r.stderr) as { error: { message: string; param: string } }).error;
      expect(e.message, argv.join(' ')).toMatch(message);
      expect(e.param).toBe(flag);
    }
  });
});
