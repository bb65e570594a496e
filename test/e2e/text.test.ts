/**
 * gw chat, responses, messages, embed and image against `gw sim` (issue 6): in-process runs of main() (no TTY unless
 * pretended), plus the real bin/gw where a real process matters (a pipe on standard input). Texts are compared exactly.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { runGw, spawnGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

type Sim = Awaited<ReturnType<typeof useSim>>;

const CHAT = 'chat-3.7-plus';
const REQ_ID = /^request id: req-sim-[0-9a-z]+$/m;

function body(sim: Sim, i = 0): Record<string, unknown> {
  return sim.requests[i]?.body as Record<string, unknown>;
}

function lines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as unknown);
}

/** Checks a PNG the way a decoder would: signature, chunk CRCs, IHDR, and IDAT inflating to the right size. */
function assertPng(bytes: Buffer, width: number, height: number): void {
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  let pos = 8;
  const types: string[] = [];
  const idat: Buffer[] = [];
  while (pos < bytes.length) {
    const len = bytes.readUInt32BE(pos);
    const type = bytes.subarray(pos + 4, pos + 8).toString('latin1');
    const data = bytes.subarray(pos + 8, pos + 8 + len);
    expect(bytes.readUInt32BE(pos + 8 + len)).toBe(crc32(bytes.subarray(pos + 4, pos + 8 + len)));
    types.push(type);
    if (type === 'IHDR') {
      expect(data.readUInt32BE(0)).toBe(width);
      expect(data.readUInt32BE(4)).toBe(height);
    }
    if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  expect(types[0]).toBe('IHDR');
  expect(types.at(-1)).toBe('IEND');
  expect(inflateSync(Buffer.concat(idat)).length).toBe(height * (1 + width * 3));
}

describe('gw chat', () => {
  it('plain (no TTY: not streamed), from arguments', async () => {
    const sim = await useSim();
    const r = await runGw(['chat', '-m', CHAT, 'hello', 'world'], { env: sim.env });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'Simulated reply to: hello world\n', stderr: '' });
    expect(body(sim)).toMatchObject({
      model: CHAT,
      stream: false,
      messages: [{ role: 'user', content: 'hello world' }],
    });
  });

  it('--stream prints the deltas and asks for the usage chunk', async () => {
    const sim = await useSim();
    const r = await runGw(['chat', '-m', CHAT, '--stream', 'stream me please'], { env: sim.env });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'Simulated reply to: stream me please\n' });
    expect(body(sim)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('reads the prompt from standard input (the real binary: a pipe on fd 0)', async () => {
    const sim = await useSim();
    const r = await spawnGw(['chat', '-m', CHAT], { env: sim.env, stdin: 'piped prompt\n' });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'Simulated reply to: piped prompt\n' });
    const s = await spawnGw(['chat', '-m', CHAT, '--stream'], { env: sim.env, stdin: 'piped again' });
    expect(s.stdout).toBe('Simulated reply to: piped again\n');
  });

  it('splits multi-byte UTF-8 across TCP writes and still prints it exactly', async () => {
    const sim = await useSim();
    const s = await runGw(['chat', '-m', CHAT, '--stream', '[sim:utf8]'], { env: sim.env });
    expect(s).toMatchObject({ exitCode: 0, stdout: 'héllo 世界 🦊\n' });
    const p = await runGw(['chat', '-m', CHAT, '[sim:utf8]'], { env: sim.env });
    expect(p.stdout).toBe('héllo 世界 🦊\n');
  });

  it('--json prints the body; --json --stream one chunk per line', async () => {
    const sim = await useSim();
    const r = await runGw(['chat', '--json', '-m', CHAT, 'hi'], { env: sim.env });
    const doc = JSON.parse(r.stdout) as { object: string; choices: Array<{ message: { content: string } }> };
    expect(doc.object).toBe('chat.completion');
    expect(doc.choices[0]?.message.content).toBe('Simulated reply to: hi');

    const s = await runGw(['--json', 'chat', '-m', CHAT, '--stream', 'hi'], { env: sim.env });
    expect(s.exitCode).toBe(0);
    const chunks = lines(s.stdout) as Array<{
      choices: Array<{ delta: { content?: string } }>;
      usage?: unknown;
    }>;
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Simulated reply to: hi');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 4 } });
  });

  it('an error event mid-stream: partial text, exit 1, code and request id', async () => {
    const sim = await useSim();
    const r = await runGw(['chat', '-m', CHAT, '--stream', 'break [sim:error]'], { env: sim.env });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('Simulated reply \n');
    expect(r.stderr).toMatch(/^error: upstream_error: the upstream stream failed .*\(req-sim-[0-9a-z]+\)$/m);
    expect(r.stderr).toMatch(REQ_ID);

    const j = await runGw(['--json', 'chat', '-m', CHAT, '--stream', 'break [sim:error]'], {
      env: sim.env,
    });
    expect(j.exitCode).toBe(1);
    const err = JSON.parse(j.stderr) as { error: { code: string; request_id: string } };
    expect(err.error.code).toBe('upstream_error');
    expect(err.error.request_id).toMatch(/^req-sim-/);
  });

  it('model_not_found shows the request id and the documented hint', async () => {
    const sim = await useSim({
      tokens: {
        [DEFAULT_SIM_TOKEN]: { tenant: 'default', models: '*' },
        'sk-narrow': { tenant: 't', models: ['text-embedding-v4'] },
      },
    });
    const env = { ...sim.env, GW_TOKEN: 'sk-narrow' };
    const r = await runGw(['chat', '-m', CHAT, 'hi'], { env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^error: model_not_found: .*not visible/m);
    expect(r.stderr).toMatch(REQ_ID);
    expect(r.stderr).toMatch(/^hint: run `gw models`/m);
    const s = await runGw(['chat', '-m', 'no-such-model', '--stream', 'hi'], { env: sim.env });
    expect(s.exitCode).toBe(1);
    expect(s.stderr).toMatch(/^hint: run `gw models`/m);
  });

  it('--usage prints counts and cache fields on stderr with the billing caution', async () => {
    const sim = await useSim();
    for (const mode of ['--no-stream', '--stream']) {
      const r = await runGw(['chat', '-m', CHAT, mode, '--usage', 'cached [sim:cache]'], { env: sim.env });
      expect(r.stdout).toBe('Simulated reply to: cached [sim:cache]\n');
      expect(r.stderr).toMatch(/^usage: prompt_tokens=\d+ completion_tokens=5 total_tokens=\d+$/m);
      expect(r.stderr).toMatch(
        /^cache: prompt_tokens_details\.cached_tokens=\d+ prompt_tokens_details\.cache_creation_input_tokens=\d+$/m,
      );
      expect(r.stderr).toMatch(/the charge is the gateway's log and bill$/m);
    }
  });

  it('--system, --image, --max-tokens and --temperature shape the body', async () => {
    const sim = await useSim();
    const r = await runGw(
      [
        'chat',
        '-m',
        'chat-3-vl-plus',
        '--system',
        'be brief',
        '--image',
        'https://example.com/a.png',
        '--image',
        'https://example.com/b.png',
        '--max-tokens',
        '3',
        '--temperature',
        '0.2',
        'what',
        'is',
        'this',
      ],
      { env: sim.env },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('Simulated reply to: \n');
    expect(r.stderr).toMatch(/^warning: the answer was cut at the token limit/m);
    expect(body(sim)).toMatchObject({
      max_tokens: 3,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            { type: 'image_url', image_url: { url: 'https://example.com/b.png' } },
          ],
        },
      ],
    });
  });

  it('streams by default when stdout is a terminal; --no-stream overrides', async () => {
    const sim = await useSim();
    const tty = await runGw(['chat', '-m', CHAT, 'hi'], { env: sim.env, tty: true });
    expect(tty.stdout).toBe('Simulated reply to: hi\n');
    expect(body(sim, 0).stream).toBe(true);
    await runGw(['chat', '-m', CHAT, '--no-stream', 'hi'], { env: sim.env, tty: true });
    expect(body(sim, 1).stream).toBe(false);
  });
});

describe('gw responses', () => {
  it('plain, stream and stdin send input_text parts and print the output text', async () => {
    const sim = await useSim();
    const a = await runGw(['responses', '-m', CHAT, 'resp', 'one'], { env: sim.env });
    expect(a).toMatchObject({ exitCode: 0, stdout: 'Simulated reply to: resp one\n' });
    expect(body(sim)).toMatchObject({
      stream: false,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'resp one' }] }],
    });
    const b = await runGw(['responses', '-m', CHAT, '--stream', '[sim:utf8]'], { env: sim.env });
    expect(b.stdout).toBe('héllo 世界 🦊\n');
    const c = await runGw(['responses', '-m', CHAT], { env: sim.env, stdin: 'from stdin\n' });
    expect(c.stdout).toBe('Simulated reply to: from stdin\n');
  });

  it('--json: the response object, or one event per line ending in response.completed', async () => {
    const sim = await useSim();
    const a = await runGw(['--json', 'responses', '-m', CHAT, 'x'], { env: sim.env });
    expect(JSON.parse(a.stdout)).toMatchObject({ object: 'response', status: 'completed' });
    const b = await runGw(['--json', 'responses', '-m', CHAT, '--stream', 'x'], { env: sim.env });
    const evs = lines(b.stdout) as Array<{ type: string; sequence_number: number }>;
    expect(evs[0]?.type).toBe('response.created');
    expect(evs.at(-1)?.type).toBe('response.completed');
    expect(evs.map((e) => e.sequence_number)).toEqual(evs.map((_, i) => i));
  });

  it('an error event mid-stream exits 1 with code and request id; --usage shows cache fields', async () => {
    const sim = await useSim();
    const r = await runGw(['responses', '-m', CHAT, '--stream', 'x [sim:error]'], { env: sim.env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^error: upstream_error: /m);
    expect(r.stderr).toMatch(REQ_ID);
    const u = await runGw(['responses', '-m', CHAT, '--usage', 'x [sim:cache]'], { env: sim.env });
    expect(u.stderr).toMatch(/^usage: input_tokens=\d+ output_tokens=\d+ total_tokens=\d+$/m);
    expect(u.stderr).toMatch(
      /^cache: input_tokens_details\.cached_tokens=\d+ input_tokens_details\.cache_write_tokens=\d+$/m,
    );
  });
});

describe('gw messages', () => {
  const M = ['messages', '-m', CHAT, '--max-tokens', '64'];

  it('plain, stream and stdin; --system sent', async () => {
    const sim = await useSim();
    const a = await runGw([...M, '--system', 'terse', 'hi', 'there'], { env: sim.env });
    expect(a).toMatchObject({ exitCode: 0, stdout: 'Simulated reply to: hi there\n' });
    expect(body(sim)).toMatchObject({ max_tokens: 64, system: 'terse', stream: false });
    const b = await runGw([...M, '--stream', '[sim:utf8]'], { env: sim.env });
    expect(b.stdout).toBe('héllo 世界 🦊\n');
    const c = await runGw(M, { env: sim.env, stdin: 'stdin words\n' });
    expect(c.stdout).toBe('Simulated reply to: stdin words\n');
  });

  it('--thinking and the compat headers; thinking goes to stderr', async () => {
    const sim = await useSim();
    const r = await runGw(
      [
        ...M,
        '--stream',
        '--max-tokens',
        '4096',
        '--thinking',
        '1024',
        '--compat-version',
        '2023-06-01',
        '--compat-beta',
        'b-1',
        'plan',
      ],
      { env: sim.env },
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: 'Simulated reply to: plan\n' });
    expect(r.stderr).toMatch(/^thinking: Considering the request: plan$/m);
    expect(body(sim)).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(sim.requests[0]?.headers['x-compat-version']).toBe('2023-06-01');
    expect(sim.requests[0]?.headers['x-compat-beta']).toBe('b-1');
  });

  it('--json events (ping included), error mid-stream, usage with cache fields', async () => {
    const sim = await useSim();
    const j = await runGw(['--json', ...M, '--stream', 'x'], { env: sim.env });
    const evs = lines(j.stdout) as Array<{ type: string }>;
    expect(evs.map((e) => e.type)).toContain('ping');
    expect(evs.at(-1)?.type).toBe('message_stop');
    const p = await runGw(['--json', ...M, 'x'], { env: sim.env });
    expect(JSON.parse(p.stdout)).toMatchObject({ type: 'message', content: [{ type: 'text' }] });

    const e = await runGw([...M, '--stream', 'x [sim:error]'], { env: sim.env });
    expect(e.exitCode).toBe(1);
    expect(e.stdout).toBe('Simulated reply \n');
    expect(e.stderr).toMatch(/^error: upstream_error: /m);
    expect(e.stderr).toMatch(REQ_ID);

    const u = await runGw([...M, '--stream', '--usage', 'x [sim:cache]'], { env: sim.env });
    expect(u.stderr).toMatch(/^usage: input_tokens=\d+ output_tokens=5$/m);
    expect(u.stderr).toMatch(/^cache: cache_read_input_tokens=\d+ cache_creation_input_tokens=\d+$/m);
  });
});

describe('gw embed', () => {
  it('table from arguments, --file and stdin; --json raw', async () => {
    const sim = await useSim();
    const a = await runGw(['embed', '-m', 'text-embedding-v4', 'first', 'second'], { env: sim.env });
    expect(a.exitCode).toBe(0);
    expect(a.stdout).toMatch(/^index\tdims\tfirst values$/m);
    expect(a.stdout).toMatch(/^0\t1024\t-?\d\.\d{4}, -?\d\.\d{4}, -?\d\.\d{4}, -?\d\.\d{4}, …$/m);
    expect(a.stdout).toMatch(/^1\t1024\t/m);
    expect(body(sim)).toEqual({ model: 'text-embedding-v4', input: ['first', 'second'] });

    const dir = tempDir('gw-embed-');
    writeFileSync(join(dir, 'in.txt'), 'one\n\ntwo\nthree\n');
    const f = await runGw(['embed', '-m', 'text-embedding-v4', '--file', join(dir, 'in.txt')], {
      env: sim.env,
    });
    expect(f.exitCode).toBe(0);
    expect(body(sim, 1)).toMatchObject({ input: ['one', 'two', 'three'] });

    const s = await runGw(['--json', 'embed', '-m', 'text-embedding-v4'], {
      env: sim.env,
      stdin: 'x\ny\n',
    });
    const doc = JSON.parse(s.stdout) as { object: string; data: Array<{ embedding: number[] }> };
    expect(doc.object).toBe('list');
    expect(doc.data.map((d) => d.embedding.length)).toEqual([1024, 1024]);
  });
});

describe('gw image', () => {
  it('generate: URLs one per line, serving real PNGs', async () => {
    const sim = await useSim();
    const r = await runGw(['image', 'generate', '-m', 'image-gen-1', '--size', '24x16', '-n', '2', 'a fox'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(0);
    const urls = r.stdout.trim().split('\n');
    expect(urls).toHaveLength(2);
    for (const u of urls) {
      expect(u.startsWith(sim.cdnUrl)).toBe(true);
      assertPng(Buffer.from(await (await fetch(u)).arrayBuffer()), 24, 16);
    }
    expect(body(sim)).toEqual({ model: 'image-gen-1', prompt: 'a fox', size: '24x16', n: 2 });
  });

  it('generate --format b64_json writes valid PNG files, never overwriting without --force', async () => {
    const sim = await useSim();
    const out = tempDir('gw-img-');
    const argv = [
      'image',
      'generate',
      '-m',
      'image-gen-1',
      '--size',
      '12x9',
      '--format',
      'b64_json',
      '--out',
      out,
      'fox',
    ];
    const a = await runGw(argv, { env: sim.env });
    expect(a.exitCode).toBe(0);
    const [first] = a.stdout.trim().split('\n');
    expect(first).toMatch(/image-\d+-1\.png$/);
    assertPng(readFileSync(first as string), 12, 9);

    writeFileSync(first as string, 'precious');
    const b = await runGw(argv, { env: sim.env });
    const second = b.stdout.trim();
    expect(second).not.toBe(first);
    expect(readFileSync(first as string, 'utf8')).toBe('precious');
    assertPng(readFileSync(second), 12, 9);

    const c = await runGw([...argv, '--force'], { env: sim.env });
    expect(c.exitCode).toBe(0);
    const forced = c.stdout.trim();
    expect(forced).toMatch(/-1\.png$/);
    assertPng(readFileSync(forced), 12, 9);
    expect(readdirSync(out).length).toBeGreaterThanOrEqual(2);
  });

  it('generate writes into the current directory by default; --json prints the body', async () => {
    const sim = await useSim();
    const cwd = tempDir('gw-cwd-');
    const r = await runGw(
      ['image', 'generate', '-m', 'image-gen-1', '--size', '4x4', '--format', 'b64_json', 'x'],
      {
        env: sim.env,
        cwd,
      },
    );
    expect(r.exitCode).toBe(0);
    assertPng(readFileSync(join(cwd, r.stdout.trim())), 4, 4);
    const j = await runGw(['--json', 'image', 'generate', '-m', 'image-gen-1', '--size', '4x4', 'x'], {
      env: sim.env,
      cwd,
    });
    expect(JSON.parse(j.stdout)).toMatchObject({
      data: [{ url: expect.stringMatching(/^http/) as unknown }],
    });
  });

  it('edit: https inputs; an empty product reports the documented meaning and exits 1', async () => {
    const sim = await useSim();
    const ok = await runGw(
      [
        'image',
        'edit',
        '-m',
        'image-edit-1',
        '--image',
        'https://example.com/in.png',
        '--size',
        '8x8',
        'blue',
      ],
      { env: sim.env },
    );
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout.trim().startsWith(sim.cdnUrl)).toBe(true);
    expect(body(sim)).toMatchObject({ images: [{ image_url: 'https://example.com/in.png' }] });

    const notEdit = await runGw(
      ['image', 'edit', '-m', 'image-gen-1', '--image', 'https://example.com/in.png', 'blue'],
      { env: sim.env },
    );
    expect(notEdit.exitCode).toBe(1);
    expect(notEdit.stderr).toMatch(/^error: no_product: the edit returned no image$/m);
    expect(notEdit.stderr).toMatch(REQ_ID);
    expect(notEdit.stderr).toMatch(/not publicly reachable or the model is not an edit model/);

    const priv = await runGw(
      ['--no-validate', 'image', 'edit', '-m', 'image-edit-1', '--image', 'http://10.0.0.8/in.png', 'blue'],
      { env: sim.env },
    );
    expect(priv.exitCode).toBe(1);
    expect(priv.stderr).toMatch(/no_product/);
    expect(sim.requests).toHaveLength(3);
  });
});

describe('client-side rules: exit 2, nothing sent', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['chat: no prompt', ['chat', '-m', CHAT], /prompt: give the prompt/],
    ['chat: model missing', ['chat', 'hi'], /model: give -m <model>.*defaults\.chat/],
    [
      'chat: http image',
      ['chat', '-m', CHAT, '--image', 'http://example.com/a.png', 'x'],
      /^error: invalid_input: --image: must be a public https URL/,
    ],
    [
      'chat: private image',
      ['chat', '-m', CHAT, '--image', 'https://127.0.0.1/a.png', 'x'],
      /must be a public https URL/,
    ],
    [
      'chat: max_tokens 0',
      ['chat', '-m', CHAT, '--max-tokens', '0', 'x'],
      /--max-tokens: must be an integer >= 1/,
    ],
    [
      'chat: max_tokens not a number',
      ['chat', '-m', CHAT, '--max-tokens', 'lots', 'x'],
      /--max-tokens: "lots" is not an integer/,
    ],
    [
      'chat: temperature not a number',
      ['chat', '-m', CHAT, '--temperature', 'warm', 'x'],
      /temperature: "warm" is not a number/,
    ],
    ['chat: empty model', ['chat', '-m', '', 'x'], /model: must not be empty/],
    ['responses: no prompt', ['responses', '-m', CHAT], /prompt: give the prompt/],
    ['messages: max-tokens missing', ['messages', '-m', CHAT, 'x'], /required option '--max-tokens <n>'/],
    [
      'messages: max_tokens 0',
      ['messages', '-m', CHAT, '--max-tokens', '0', 'x'],
      /--max-tokens: must be an integer >= 1/,
    ],
    [
      'messages: max_tokens fraction',
      ['messages', '-m', CHAT, '--max-tokens', '1.5', 'x'],
      /--max-tokens: "1\.5" is not an integer/,
    ],
    [
      'messages: thinking not a number',
      ['messages', '-m', CHAT, '--max-tokens', '9', '--thinking', 'deep', 'x'],
      /thinking: "deep" is not an integer/,
    ],
    ['embed: no input', ['embed', '-m', 'text-embedding-v4'], /input: give texts/],
    [
      'embed: unreadable file',
      ['embed', '-m', 'text-embedding-v4', '--file', '/nonexistent/in.txt'],
      /file: cannot read/,
    ],
    [
      'image: size not WxH',
      ['image', 'generate', '-m', 'image-gen-1', '--size', '1024', 'x'],
      /size: must be <width>x<height>/,
    ],
    [
      'image: size zero',
      ['image', 'generate', '-m', 'image-gen-1', '--size', '0x10', 'x'],
      /size: must be <width>x<height> with positive integers/,
    ],
    ['image: n 0', ['image', 'generate', '-m', 'image-gen-1', '-n', '0', 'x'], /n: must be an integer >= 1/],
    [
      'image: format',
      ['image', 'generate', '-m', 'image-gen-1', '--format', 'png', 'x'],
      /response_format: must be 'url' or 'b64_json'/,
    ],
    ['image: no prompt', ['image', 'generate', '-m', 'image-gen-1'], /prompt: give the prompt/],
    [
      'edit: image missing',
      ['image', 'edit', '-m', 'image-edit-1', 'x'],
      /required option '--image <https url>'/,
    ],
    [
      'edit: http image',
      ['image', 'edit', '-m', 'image-edit-1', '--image', 'http://example.com/a.png', 'x'],
      /images\[0\]\.image_url: must be a public https URL \(image edit input URLs/,
    ],
    [
      'edit: localhost image',
      ['image', 'edit', '-m', 'image-edit-1', '--image', 'https://localhost/a.png', 'x'],
      /must be a public https URL/,
    ],
  ];
  it.each(cases)('%s', async (_name, argv, message) => {
    const sim = await useSim();
    const r = await runGw(argv, { env: sim.env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    expect(sim.requests).toHaveLength(0);
  });

  it('--no-validate sends a rule-breaking body and shows the gateway rejection', async () => {
    const sim = await useSim();
    const r = await runGw(['--no-validate', 'messages', '-m', CHAT, '--max-tokens', '0', 'x'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^error: invalid_request: max_tokens: must be an integer >= 1 .*\(req-sim-[0-9a-z]+\)$/m,
    );
    expect(sim.requests).toHaveLength(1);
  });
});
