/**
 * Behaviours of issue 15 ("commands that feel like gh"): every asset verb takes what another prints, one `-m`
 * rule, `--json` errors and streams, one JSON document per command, resume hints, tab-separated tables off a
 * terminal, prompts from stdin, and clear messages for help/profile/config mistakes.
 */
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gw-i15-'));
  dirs.push(d);
  return d;
}
const servers: Server[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** The only JSON document a run printed on `stream` (fails when there are several). */
function oneJson(stream: string): unknown {
  return JSON.parse(stream) as unknown;
}

async function uploadOne(env: Record<string, string>): Promise<string> {
  const up = await runGw(['beta', 'asset', 'upload', '--url', 'https://example.com/cat.png'], { env });
  expect(up.exitCode).toBe(0);
  const ref = up.stdout.trim();
  expect(ref).toMatch(/^asset:\/\/\S+$/);
  return ref;
}

describe('asset verbs take what another prints, with one -m rule', () => {
  it('get and wait accept asset://ID, Asset://ID and the bare id, without -m', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const ref = await uploadOne(env);
    const id = ref.slice('asset://'.length);
    for (const form of [ref, `Asset://${id}`, id]) {
      const g = await runGw(['beta', 'asset', 'get', form], { env });
      expect(g.stderr).toBe('');
      expect(g.exitCode).toBe(0);
      expect(g.stdout).toMatch(new RegExp(`^id:\\s+${id}$`, 'm'));
      const w = await runGw(['beta', 'asset', 'wait', form, '--json'], { env });
      expect(w.exitCode).toBe(0);
      expect(oneJson(w.stdout)).toMatchObject({ assets: [{ Id: id, Status: 'Active' }] });
    }
  });

  it('list, group create and create need no -m either (gamma-video-2-0, or the profile default)', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const group = await runGw(['beta', 'asset', 'group', 'create', '--name', 'g'], { env });
    expect(group.exitCode).toBe(0);
    const gid = group.stdout.trim();
    const c = await runGw(['beta', 'asset', 'create', '--group', gid, '--url', 'https://example.com/a.png'], {
      env,
    });
    expect(c.exitCode).toBe(0);
    const l = await runGw(['beta', 'asset', 'list', '--group', gid, '--json'], { env });
    expect(l.exitCode).toBe(0);
    const sent = sim.requests.filter((r) => r.path.startsWith('/beta'));
    expect(sent.length).toBe(3);
    for (const r of sent) expect(JSON.stringify(r)).toContain('gamma-video-2-0');
  });
});

describe('--json: every error is the {"error": …} document', () => {
  it.each([
    [['--json', 'video', 'create', 'x']],
    [['--json', 'nope']],
    [['--json', 'models', '--bogus']],
    [['chat', '--json', '--max-tokens']],
  ])('%j prints one JSON error on stderr, exit 2', async (argv) => {
    const r = await runGw(argv);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    const doc = JSON.parse(r.stderr) as { error: { code: string; message: string } };
    expect(doc.error.code).toBe('invalid_input');
    expect(doc.error.message.length).toBeGreaterThan(5);
  });

  it('--help with --json is still help on stdout', async () => {
    const r = await runGw(['--json', 'video', '--help']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('Usage: gw video');
  });
});

/** A gateway answering POST /v1/messages with a stream holding ping and an event name gw does not know. */
async function oddStreamServer(): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-odd' });
    const ev = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    res.end(
      ev('message_start', {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'm',
          content: [],
          stop_reason: null,
          usage: { input_tokens: 1, output_tokens: 0 },
        },
      }) +
        ev('ping', { type: 'ping' }) +
        ev('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        }) +
        ev('brand_new_event', { type: 'brand_new_event', detail: 42 }) +
        ev('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'hi' },
        }) +
        ev('content_block_stop', { type: 'content_block_stop', index: 0 }) +
        ev('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn' },
          usage: { output_tokens: 1 },
        }) +
        ev('message_stop', { type: 'message_stop' }),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  return `http://127.0.0.1:${addr.port}`;
}

describe('--json streams print every event the gateway sent, in order', () => {
  it('messages --stream --json keeps ping and unknown event names', async () => {
    const base = await oddStreamServer();
    const r = await runGw(['messages', '-m', 'm', '--max-tokens', '16', '--stream', '--json', 'hello'], {
      env: { GW_BASE_URL: base, GW_TOKEN: 'sk-test-000000000001' },
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const types = r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'brand_new_event',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('chat --stream --json prints each chunk as sent (no [DONE] line)', async () => {
    const sim = await useSim();
    const r = await runGw(['chat', '-m', 'chat-3.7-plus', '--stream', '--json', 'hi'], { env: sim.env });
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines) expect(() => JSON.parse(l) as unknown).not.toThrow();
  });
});

describe('one command, one JSON document; one download shape', () => {
  it('video create --download --json prints {id, video, download:{path, bytes, resumed}}', async () => {
    const sim = await useSim();
    const dir = tempDir();
    const file = join(dir, 'fox.mp4');
    const r = await runGw(
      ['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--seconds', '5', '--download', file, '--json'],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    const doc = oneJson(r.stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({
      video: { status: expect.any(String) as unknown },
      download: { path: file, bytes: expect.any(Number) as unknown, resumed: false },
    });
    expect(typeof doc.id).toBe('string');
  });

  it('beta task create --download --json uses the same download object (sha256 only when asked)', async () => {
    const sim = await useSim();
    const file = join(tempDir(), 'w.mp4');
    const r = await runGw(
      ['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0-fast', '--download', file, '--json'],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    const doc = oneJson(r.stdout) as { download: Record<string, unknown> };
    expect(Object.keys(doc.download).sort()).toEqual(['bytes', 'path', 'resumed']);
    expect(doc.download.path).toBe(file);
  });

  it('video download --json carries resumed too', async () => {
    const sim = await useSim();
    const created = await runGw(['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--wait'], {
      env: sim.env,
    });
    const id = created.stdout.trim();
    const file = join(tempDir(), 'f.mp4');
    const r = await runGw(['video', 'download', id, '-o', file, '--sha256', '--json'], { env: sim.env });
    expect(r.exitCode).toBe(0);
    expect(Object.keys(oneJson(r.stdout) as object).sort()).toEqual(['bytes', 'path', 'resumed', 'sha256']);
  });
});

describe('resume hints resume the whole job', () => {
  it('video create --download past --timeout names wait --download, not only wait', async () => {
    const sim = await useSim({ timings: { videoQueuedMs: 600_000 } });
    const file = join(tempDir(), 'fox.mp4');
    const r = await runGw(
      ['--timeout', '300ms', 'video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--download', file],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(4);
    const id = r.stdout.trim();
    expect(r.stderr).toContain(`resume with: gw video wait ${id} --download ${file}`);
  });

  it('beta task create --download past --timeout names wait and download', async () => {
    const sim = await useSim({ timings: { betaQueuedMs: 600_000 } });
    const file = join(tempDir(), 'w.mp4');
    const r = await runGw(
      [
        '--timeout',
        '300ms',
        'beta',
        'task',
        'create',
        'waves',
        '-m',
        'gamma-video-2-0-fast',
        '--download',
        file,
      ],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(4);
    const id = r.stdout.trim();
    expect(r.stderr).toContain(`gw beta task wait ${id} && gw beta task download ${id} -o ${file}`);
  });

  it('create --download onto an existing file does not suggest a --force that create lacks', async () => {
    const sim = await useSim();
    const file = join(tempDir(), 'exists.mp4');
    writeFileSync(file, 'x');
    for (const argv of [
      ['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--download', file],
      ['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0-fast', '--download', file],
    ]) {
      const r = await runGw(argv, { env: sim.env });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).not.toMatch(/pass --force/);
      expect(r.stderr).toContain('already exists');
    }
    expect(sim.requests.filter((q) => q.method === 'POST')).toEqual([]);
  });
});

describe('gw video wait: several ids, --download', () => {
  it('waits for several ids; --json prints {videos: [...]}', async () => {
    const sim = await useSim();
    const ids: string[] = [];
    for (const p of ['a', 'b']) {
      const c = await runGw(['video', 'create', p, '-m', 'clip-1.1-t2v'], { env: sim.env });
      ids.push(c.stdout.trim());
    }
    const r = await runGw(['video', 'wait', ...ids, '--json'], { env: sim.env });
    expect(r.exitCode).toBe(0);
    const doc = oneJson(r.stdout) as { videos: Array<{ video_id: string }> };
    expect(doc.videos.map((v) => v.video_id)).toEqual(ids);
  });

  it('--download waits then saves; two ids with --download is exit 2', async () => {
    const sim = await useSim();
    const id = (await runGw(['video', 'create', 'a', '-m', 'clip-1.1-t2v'], { env: sim.env })).stdout.trim();
    const file = join(tempDir(), 'v.mp4');
    const r = await runGw(['video', 'wait', id, '--download', file, '--json'], { env: sim.env });
    expect(r.exitCode).toBe(0);
    expect(oneJson(r.stdout)).toMatchObject({ id, download: { path: file, resumed: false } });
    const two = await runGw(['video', 'wait', id, id, '--download', join(tempDir(), 'x.mp4')], {
      env: sim.env,
    });
    expect(two.exitCode).toBe(2);
  });
});

describe('tables off a terminal', () => {
  it('gw models prints a header and tab-separated columns, no box characters', async () => {
    const sim = await useSim();
    const r = await runGw(['models'], { env: sim.env });
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('id\towned_by\tcreated');
    expect(lines.slice(1).every((l) => l.split('\t').length === 3)).toBe(true);
    expect(r.stdout).not.toMatch(/[─│┌┐└┘]/);
  });

  it('gw history --limit 0 prints a 120 000-entry journal', async () => {
    const dirsEnv = isolatedDirs();
    mkdirSync(dirsEnv.GW_STATE_DIR, { recursive: true });
    const lines: string[] = [];
    for (let i = 0; i < 120_000; i++) {
      lines.push(
        JSON.stringify({ op: 'create', kind: 'video', id: `video_${i}`, createdAt: '2026-01-01T00:00:00Z' }),
      );
    }
    writeFileSync(join(dirsEnv.GW_STATE_DIR, 'journal.jsonl'), `${lines.join('\n')}\n`);
    const r = await runGw(['history', '--limit', '0'], { env: dirsEnv });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(120_001);
  });
});

describe('prompts from standard input', () => {
  function lastChatPrompt(sim: Awaited<ReturnType<typeof useSim>>): unknown {
    const post = sim.requests.filter((q) => q.path === '/v1/chat/completions').at(-1);
    return (post?.body as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content;
  }

  it('`gw chat -` reads the prompt from stdin', async () => {
    const sim = await useSim();
    const r = await runGw(['chat', '-m', 'chat-3.7-plus', '--no-stream', '-'], {
      env: sim.env,
      stdin: 'from stdin\n',
    });
    expect(r.exitCode).toBe(0);
    expect(lastChatPrompt(sim)).toBe('from stdin');
  });

  it('an argument and piped stdin are both sent, argument first', async () => {
    const sim = await useSim();
    const r = await runGw(['chat', '-m', 'chat-3.7-plus', '--no-stream', 'summarise:'], {
      env: sim.env,
      stdin: 'the text\n',
    });
    expect(r.exitCode).toBe(0);
    expect(lastChatPrompt(sim)).toBe('summarise:\nthe text');
  });
});

describe('help, profiles and config say what is wrong', () => {
  it('gw help nope exits 2 with a message', async () => {
    const r = await runGw(['help', 'nope']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/"nope" is not a gw command/);
    expect((await runGw(['help', 'video'])).exitCode).toBe(0);
  });

  it('--profile typo is exit 3 naming the known profiles; config use refuses a missing profile', async () => {
    const env = isolatedDirs();
    await runGw(['--profile', 'prod', 'config', 'set', 'baseUrl', 'https://gw.example.com'], { env });
    const r = await runGw(['--profile', 'prdo', 'models'], { env: { ...env, GW_TOKEN: 'sk-x-00000001' } });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/profile "prdo".*does not exist; known profiles: prod/);
    const viaEnv = await runGw(['models'], { env: { ...env, GW_PROFILE: 'nope' } });
    expect(viaEnv.exitCode).toBe(3);
    const use = await runGw(['config', 'use', 'prd'], { env });
    expect(use.exitCode).toBe(3);
    expect(use.stderr).toMatch(/known profiles: prod/);
    expect((await runGw(['config', 'use', 'prod'], { env })).exitCode).toBe(0);
  });

  it('config get baseUrl explains a value that comes from the environment', async () => {
    const env = { ...isolatedDirs(), GW_BASE_URL: 'https://env.example.com' };
    const r = await runGw(['config', 'get', 'baseUrl'], { env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/baseUrl is not set in profile "default"/);
    expect(r.stderr).toContain('GW_BASE_URL=https://env.example.com');
  });

  it('login warns that a set GW_TOKEN overrides the saved token', async () => {
    const sim = await useSim();
    const env = { ...isolatedDirs(), GW_TOKEN: sim.env.GW_TOKEN };
    const r = await runGw(['login', '--base-url', sim.baseUrl, '--token-stdin'], {
      env,
      stdin: sim.env.GW_TOKEN,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/warning: GW_TOKEN is set in the environment and overrides the saved token/);
  });

  it('defaults.chat is used when -m is omitted', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    expect((await runGw(['config', 'set', 'defaults.chat', 'chat-3.7-plus'], { env })).exitCode).toBe(0);
    const r = await runGw(['chat', '--no-stream', 'hi'], { env });
    expect(r.exitCode).toBe(0);
    const post = sim.requests.filter((q) => q.path === '/v1/chat/completions').at(-1);
    expect((post?.body as { model: string }).model).toBe('chat-3.7-plus');
    const none = await runGw(['embed', 'x'], { env });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/defaults\.embed/);
  });
});

describe('one date format everywhere', () => {
  const LOCAL = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d/;
  it('video get, beta task get and asset get show times as local "YYYY-MM-DD HH:MM:SS ±HH:MM"', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const vid = (
      await runGw(['video', 'create', 'a', '-m', 'clip-1.1-t2v', '--wait'], { env })
    ).stdout.trim();
    expect((await runGw(['video', 'get', vid], { env })).stdout).toMatch(
      new RegExp(`^created:\\s+${LOCAL.source}`, 'm'),
    );
    const task = (
      await runGw(['beta', 'task', 'create', 'w', '-m', 'gamma-video-2-0-fast'], { env })
    ).stdout.trim();
    const tg = await runGw(['beta', 'task', 'get', task], { env });
    expect(tg.stdout).toMatch(new RegExp(`^created:\\s+${LOCAL.source}$`, 'm'));
    expect(tg.stdout).not.toMatch(/\d{4}-\d\d-\d\dT\d\d/);
    const ref = await uploadOne(env);
    const ag = await runGw(['beta', 'asset', 'get', ref], { env });
    expect(ag.stdout).toMatch(new RegExp(`^CreateTime:\\s+${LOCAL.source}$`, 'm'));
  });
});
