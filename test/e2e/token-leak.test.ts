import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { startSim, type SimHandle } from '../../src/sim/server.js';
import { type GwResult, runGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * The token-leak sweep: every command of the suite runs (the real bin/gw, as users run it) with a recognisable
 * token, with and without --verbose and --json, succeeding and failing; the token must never appear in stdout,
 * stderr, the journal, or the config listing. The token is only ever shown as `sk-…cdef`.
 */
const TOKEN = 'sk-LEAKCANARY-0123456789abcdef';
/** Any part of the token that a redacted form never shows. */
const MARKS = [TOKEN, 'LEAKCANARY', '0123456789ab'];

const dir = tempDir('gw-leak-');
const home = { HOME: dir, GW_CONFIG_DIR: join(dir, 'config'), GW_STATE_DIR: join(dir, 'state') };
let sim: SimHandle;
const runs: { argv: string[]; via: string; result: GwResult; mustSucceed: boolean }[] = [];
/** False while the sweep runs the failure cases (errors are swept too, but are expected). */
let succeeding = true;

function filesUnder(path: string): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch {
    return [];
  }
  for (const name of entries) {
    const p = join(path, name);
    out = statSync(p).isDirectory() ? out.concat(filesUnder(p)) : out.concat(p);
  }
  return out;
}

/** Runs gw with the token in GW_TOKEN (`env`) or from the saved profile (`profile`). */
async function gw(argv: string[], via: 'env' | 'profile' = 'env', stdin?: string): Promise<GwResult> {
  const env: Record<string, string> = { ...home, GW_BASE_URL: sim.baseUrl };
  if (via === 'env') env.GW_TOKEN = TOKEN;
  const result = await runGw(argv, { env, ...(stdin !== undefined ? { stdin } : {}) });
  runs.push({ argv, via, result, mustSucceed: succeeding });
  return result;
}

/** Runs a batch concurrently (two cores: keep it small). */
async function batch(list: string[][], via: 'env' | 'profile' = 'env'): Promise<GwResult[]> {
  const out: GwResult[] = [];
  for (let i = 0; i < list.length; i += 4) {
    out.push(...(await Promise.all(list.slice(i, i + 4).map((argv) => gw(argv, via)))));
  }
  return out;
}

/** The id a create command printed, or a placeholder when the command failed (its error is swept too). */
function idOf(r: GwResult | undefined, fallback: string): string {
  const line = r?.exitCode === 0 ? r.stdout.trim().split('\n').pop() : undefined;
  return line !== undefined && line !== '' ? line : fallback;
}

/** Each command with and without --verbose, and with --json. */
function variants(argv: string[]): string[][] {
  return [argv, ['--verbose', ...argv], ['--json', '--verbose', ...argv]];
}

beforeAll(async () => {
  sim = await startSim({
    port: 0,
    tokens: {
      [TOKEN]: { tenant: 'leak', models: '*' },
      [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' },
    },
    timings: {
      videoQueuedMs: 10,
      videoRunningMs: 20,
      betaQueuedMs: 10,
      betaRunningMs: 20,
      assetProcessingMs: 10,
      streamDelayMs: 0,
    },
  });
  const img = join(dir, 'frame.png');
  // 1x1 PNG for the alpha file input.
  writeFileSync(
    img,
    Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    ),
  );

  // Profiles: the token saved through --token-stdin, then listed and read back (redacted).
  await gw(['config', 'set', 'baseUrl', sim.baseUrl], 'profile');
  await gw(['config', 'set', 'token', '--token-stdin'], 'profile', `${TOKEN}\n`);
  await gw(['--profile', 'other', 'config', 'set', 'token', '--token-stdin'], 'profile', TOKEN);
  await batch(
    [
      ['config', 'list'],
      ['--json', 'config', 'list'],
      ['config', 'get', 'token'],
      ['--json', 'config', 'get', 'token'],
      ['--profile', 'other', 'config', 'get', 'token'],
      ['--verbose', 'config', 'list'],
    ],
    'profile',
  );

  // Reads and generation, from the environment and from the profile.
  const chat = ['chat', '-m', 'chat-3.7-plus', 'say hi'];
  await batch(
    [
      ...variants(['models']),
      ...variants(chat),
      ...variants([...chat, '--stream', '--usage']),
      ...variants(['responses', '-m', 'chat-3.7-plus', '--stream', 'hi']),
      ...variants(['messages', '-m', 'chat-3.7-plus', '--max-tokens', '32', 'hi']),
      ...variants(['messages', '-m', 'chat-3.7-plus', '--max-tokens', '32', '--stream', 'hi']),
      ...variants(['embed', '-m', 'text-embedding-v4', 'one', 'two']),
      ...variants(['image', 'generate', 'a cat', '-m', 'image-gen-1', '--out', join(dir, 'img')]),
      [
        '--verbose',
        'image',
        'edit',
        'make it blue',
        '-m',
        'image-edit-1',
        '--image',
        'https://example.com/a.png',
      ],
    ],
    'env',
  );
  await batch(
    [
      ['--verbose', 'models'],
      ['--verbose', ...chat],
      ['--verbose', 'history'],
    ],
    'profile',
  );

  // Tasks: create (ids go to the journal), then every verb on them.
  const [video, , betaTask, group] = await batch([
    ['--verbose', 'video', 'create', 'a cat', '-m', 'vid-2.7-t2v', '--seconds', '2'],
    ['--verbose', 'alpha', 'i2v', '--image', img, '--prompt', 'a cat'],
    ['--verbose', 'beta', 'task', 'create', 'a cat surfing', '-m', 'gamma-video-2-0', '--duration', '5'],
    ['--verbose', 'beta', 'asset', 'group', 'create', '--name', 'leak', '-m', 'gamma-video-2-0'],
  ]);
  const videoId = idOf(video, 'video_missing');
  const betaId = idOf(betaTask, 'cgt-missing');
  const groupId = idOf(group, 'group-missing');
  const [asset] = await batch([
    [
      '--verbose',
      'beta',
      'asset',
      'create',
      '--group',
      groupId,
      '--url',
      'https://example.com/cat.png',
      '--type',
      'Image',
      '--name',
      'cat',
      '-m',
      'gamma-video-2-0',
    ],
  ]);
  const assetId = idOf(asset, 'asset-missing');
  await batch([
    [
      '--verbose',
      'video',
      'create',
      'a cat',
      '-m',
      'vid-2.7-t2v',
      '--seconds',
      '2',
      '--wait',
      '--download',
      join(dir, 'w.mp4'),
    ],
    [
      '--verbose',
      'beta',
      'task',
      'create',
      'a dog',
      '-m',
      'gamma-video-2-0',
      '--wait',
      '--download',
      join(dir, 'w2.mp4'),
    ],
    [
      '--verbose',
      'beta',
      'asset',
      'upload',
      '-m',
      'gamma-video-2-0',
      '--group',
      groupId,
      '--url',
      'https://example.com/dog.png',
    ],
  ]);
  await batch([
    ...variants(['video', 'get', videoId]),
    ...variants(['video', 'wait', videoId, '--timeout', '20s']),
    ['--verbose', 'video', 'download', videoId, '-o', join(dir, 'v.mp4'), '--force'],
    ['--json', '--verbose', 'video', 'download', videoId, '-o', join(dir, 'v2.mp4'), '--force'],
    ...variants(['beta', 'task', 'get', betaId]),
    ...variants(['beta', 'task', 'wait', betaId, '--timeout', '20s']),
    ...variants(['beta', 'task', 'list']),
    ['--verbose', 'beta', 'task', 'download', betaId, '-o', join(dir, 'b.mp4')],
    ...variants(['beta', 'asset', 'get', assetId, '-m', 'gamma-video-2-0']),
    ...variants(['beta', 'asset', 'list', '--group', groupId, '-m', 'gamma-video-2-0']),
    ...variants(['beta', 'asset', 'wait', assetId, '-m', 'gamma-video-2-0', '--timeout', '20s']),
    ...variants(['history']),
    ...variants(['history', '--refresh']),
    ['--verbose', 'beta', 'task', 'delete', betaId],
  ]);

  // Failures: gateway errors, contract errors, a dead gateway, a 5xx on every route, a timeout.
  succeeding = false;
  await batch([
    ...variants(['chat', '-m', 'no-such-model', 'hi']),
    ...variants(['--no-validate', 'video', 'create', 'x', '-m', 'vid-2.7-t2v', '--seconds', '99']),
    ...variants(['video', 'get', 'video_does_not_exist']),
    ['--verbose', '--base-url', 'http://127.0.0.1:9', 'models'],
    ['--json', '--verbose', '--base-url', 'http://127.0.0.1:9', 'chat', '-m', 'chat-3.7-plus', 'hi'],
  ]);
  succeeding = true;
  await batch([
    ['--verbose', 'probe', '--skip', 'video'],
    ['--json', '--verbose', 'probe', '--skip', 'video'],
  ]);
  succeeding = false;
  sim.sim.addFault({ route: '*', kind: 'status', status: 503 });
  await batch([
    ['--verbose', 'models'],
    ['--json', '--verbose', 'models'],
    ['--verbose', 'video', 'get', videoId],
    ['--verbose', ...chat, '--stream'],
  ]);
  sim.sim.clearFaults();
  sim.sim.addFault({ route: '*', kind: 'slow', ms: 200 });
  await batch([['--verbose', '--timeout', '1s', 'models']]);
  sim.sim.clearFaults();
}, 240_000);

afterAll(async () => {
  await sim.close();
});

describe('token-leak sweep', () => {
  it('sent the token (the sweep is real) and every command meant to succeed did', () => {
    const sent = sim.requests.filter((r) => r.headers.authorization === `Bearer ${TOKEN}`);
    expect(sent.length).toBeGreaterThan(10);
    // Every command meant to succeed did (so its success output was swept, not just an early error).
    const failed = runs
      .filter((r) => r.mustSucceed && r.result.exitCode !== 0)
      .map((r) => `gw ${r.argv.join(' ')}: exit ${r.result.exitCode}: ${r.result.stderr.trim()}`);
    expect(failed).toEqual([]);
    expect(runs.filter((r) => r.mustSucceed).length).toBeGreaterThan(80);
    expect(runs.filter((r) => !r.mustSucceed).length).toBeGreaterThan(15);
  });

  it('never prints the token on stdout or stderr', () => {
    const leaks: string[] = [];
    for (const r of runs) {
      for (const [name, text] of [
        ['stdout', r.result.stdout],
        ['stderr', r.result.stderr],
      ] as const) {
        for (const m of MARKS) {
          if (text.includes(m))
            leaks.push(`gw ${r.argv.join(' ')} (token from ${r.via}): ${name} shows "${m}"`);
        }
      }
    }
    expect(leaks).toEqual([]);
  });

  it('shows the token redacted in the config listing', () => {
    const list = runs.find((r) => r.argv.join(' ') === 'config list');
    expect(list?.result.exitCode).toBe(0);
    expect(list?.result.stdout).toContain('sk-…cdef');
    const get = runs.find((r) => r.argv.join(' ') === 'config get token');
    expect(get?.result.stdout).toContain('sk-…cdef');
  });

  it('keeps the token out of the journal and every other state file', () => {
    const files = filesUnder(home.GW_STATE_DIR);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const m of MARKS) expect(text.includes(m), `${f} contains "${m}"`).toBe(false);
    }
  });

  it('stores the token only in the 0600 config file', () => {
    for (const f of filesUnder(home.GW_CONFIG_DIR)) {
      if (readFileSync(f, 'utf8').includes(TOKEN)) expect(statSync(f).mode & 0o077).toBe(0);
    }
    for (const f of filesUnder(dir)) {
      if (f.startsWith(home.GW_CONFIG_DIR)) continue;
      const text = readFileSync(f);
      expect(text.includes(TOKEN), `${f} contains the token`).toBe(false);
    }
  });
});
