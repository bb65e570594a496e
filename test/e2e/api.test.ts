import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redactToken } from '../../src/ui/redact.js';
import { isolatedDirs, runBash, runGw, spawnGw } from '../helpers/gw.js';
import { closeAfterTest } from '../helpers/servers.js';
import { INSTANT, useSim } from '../helpers/sim.js';

const CHAT = { model: 'chat-3.7-plus', messages: [{ role: 'user', content: 'hi' }] };

describe('gw api: any route, as gh api', () => {
  it('GET prints the body unchanged, with the token and --header, fields as query', async () => {
    const sim = await useSim();
    const r = await runGw(
      ['-H', 'X-Route: blue', 'api', '-X', 'get', '/v1/models', '-f', 'a=1', '-F', 'b=true'],
      {
        env: sim.env,
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const q = sim.requests.at(-1);
    expect(q?.method).toBe('GET');
    expect(q?.path).toBe('/v1/models');
    expect(q?.headers['x-route']).toBe('blue');
    expect(q?.headers.authorization).toBe(`Bearer ${sim.env.GW_TOKEN}`);
    expect(q?.query).toBe('?a=1&b=true');
    // The gateway's bytes, not a re-serialisation.
    const direct = await fetch(`${sim.baseUrl}/v1/models`, {
      headers: { authorization: `Bearer ${sim.env.GW_TOKEN}` },
    });
    expect(r.stdout).toBe(await direct.text());
  });

  it('fields make a POST with a typed JSON body (-f strings, -F numbers, booleans, null, @file, nesting)', async () => {
    const sim = await useSim();
    const dir = isolatedDirs().HOME;
    const file = join(dir, 'prompt.txt');
    writeFileSync(file, 'from a file');
    const r = await runGw(
      [
        'api',
        '/v1/embeddings',
        '-f',
        'model=text-embedding-v4',
        '-f',
        'input[]=one',
        '-F',
        `input[]=@${file}`,
        '-F',
        'dimensions=64',
        '-F',
        'meta[flag]=false',
        '-F',
        'meta[none]=null',
        '-f',
        'meta[n]=7',
      ],
      { env: sim.env },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const q = sim.requests.at(-1);
    expect(q?.method).toBe('POST');
    expect(q?.headers['content-type']).toBe('application/json');
    expect(q?.body).toEqual({
      model: 'text-embedding-v4',
      input: ['one', 'from a file'],
      meta: { n: '7', flag: false, none: null },
      dimensions: 64,
    });
    expect(JSON.parse(r.stdout).data).toHaveLength(2);
  });

  it('--input - sends standard input as it is and prints an event stream as it arrives', async () => {
    const sim = await useSim();
    const body = JSON.stringify({ ...CHAT, stream: true });
    const r = await runGw(['api', '/v1/chat/completions', '--input', '-'], { env: sim.env, stdin: body });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(sim.requests.at(-1)?.body).toEqual(JSON.parse(body));
    expect(r.stdout).toMatch(/^data: \{/);
    expect(r.stdout.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('prints an event stream as it arrives: the first event is out before the gateway sends the next', async () => {
    let held: ServerResponse | undefined;
    const server = closeAfterTest(
      createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        held = res;
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const env = {
      GW_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      GW_TOKEN: 'sk-api-stream-0000',
    };
    const r = await spawnGw(['api', '/v1/anything'], {
      env,
      onSpawn: (child) => {
        // The gateway sends the rest only once gw has printed the first event.
        child.stdout?.once('data', () => held?.end('data: second\n\n'));
      },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('data: first\n\ndata: second\n\n');
  });

  it('refuses a URL, a path without /, a bad method, a bad field and --input with GET: exit 2, nothing sent', async () => {
    const sim = await useSim();
    const cases: [string[], RegExp][] = [
      [['api', `${sim.baseUrl}/v1/models`], /path: .* is a URL/],
      [['api', '//evil.example/v1/models'], /path: .* is a URL/],
      [['api', 'v1/models'], /path: "v1\/models" must start with \//],
      [['api', '-X', 'TRACE', '/v1/models'], /--method: must be one of/],
      [['api', '-f', 'novalue', '/v1/models'], /-f: "novalue" is not key=value/],
      [['api', '-F', 'a[]=1', '-F', 'a[b]=2', '/v1/models'], /-F: "a\[b\]" does not fit/],
      [['api', '-X', 'GET', '--input', '-', '/v1/models'], /--input: a GET request has no body/],
      [['api', '--paginate', '/v1/models'], /--paginate: GET \/v1\/models does not page/],
      [['api', '-F', 'x=@/nonexistent/file', '/v1/models'], /-F: .*no such file/i],
    ];
    for (const [argv, message] of cases) {
      const r = await runGw(argv, { env: sim.env, stdin: '{}' });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(sim.requests).toHaveLength(0);
  });

  it('retries GET but never POST; an error status exits as every command does', async () => {
    const sim = await useSim();
    sim.sim.addFault({ route: 'GET /v1/models', kind: 'status', status: 503, times: 1 });
    const ok = await runGw(['api', '/v1/models'], { env: sim.env });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(sim.requests.filter((q) => q.path === '/v1/models')).toHaveLength(2);

    sim.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'status', status: 503, times: 1 });
    const r = await runGw(['api', '/v1/chat/completions', '--input', '-'], {
      env: sim.env,
      stdin: JSON.stringify(CHAT),
    });
    expect(r.exitCode).toBe(1);
    expect(sim.requests.filter((q) => q.path === '/v1/chat/completions')).toHaveLength(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: /m);

    const bad = await runGw(['api', '/v1/models'], { env: { ...sim.env, GW_TOKEN: 'sk-wrong-token-0000' } });
    expect(bad.exitCode).toBe(3);
    expect(bad.stderr).not.toContain('sk-wrong-token-0000');
  });

  it('--paginate walks the beta task list by page_num and ListAssets by PageNumber', async () => {
    const sim = await useSim({ timings: INSTANT });
    for (let i = 0; i < 5; i++) {
      const c = await runGw(['beta', 'task', 'create', `cat ${i}`, '-m', 'gamma-video-2-0'], {
        env: sim.env,
      });
      expect(c.exitCode, c.stderr).toBe(0);
    }
    const r = await runGw(['api', '--paginate', '/beta/api/v3/contents/generations/tasks?page_size=2'], {
      env: sim.env,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const pages = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { items: { id: string }[] });
    expect(pages.map((p) => p.items.length)).toEqual([2, 2, 1]);
    expect(new Set(pages.flatMap((p) => p.items.map((t) => t.id))).size).toBe(5);
    const lists = sim.requests.filter((q) => q.method === 'GET' && q.path.endsWith('/tasks'));
    expect(lists.map((q) => new URLSearchParams(q.query).get('page_num'))).toEqual(['1', '2', '3']);

    const assets = await runGw(
      [
        'api',
        '--paginate',
        '/beta/?Action=ListAssets&Version=2024-01-01',
        '-f',
        'model=gamma-video-2-0',
        '-f',
        'Filter[GroupType]=AIGC',
        '-f',
        'Filter[GroupIds][]=g1',
      ],
      { env: sim.env },
    );
    expect(assets.exitCode, assets.stderr).toBe(0);
    expect(sim.requests.at(-1)?.body).toMatchObject({ model: 'gamma-video-2-0', PageNumber: 1 });
  });

  it('--paginate stops at a page of repeats (a server ignoring page_num) without printing it again', async () => {
    const asked: string[] = [];
    const server = closeAfterTest(
      createServer((req, res) => {
        asked.push(req.url ?? '');
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"items":[{"id":"a"},{"id":"b"}],"total":10}');
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const env = {
      GW_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      GW_TOKEN: 'sk-api-pages-0000',
    };
    const r = await runGw(['api', '--paginate', '/beta/api/v3/contents/generations/tasks'], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('{"items":[{"id":"a"},{"id":"b"}],"total":10}\n');
    expect(asked).toHaveLength(2);
  });

  it('-X POST --input - sends standard input byte for byte; -f fields then go into the query', async () => {
    const gw = await fakeGateway((res) => res.writeHead(200).end('{}'));
    const sent = Buffer.from([0x7b, 0xff, 0x00, 0xc3, 0x28, 0x80, 0x0a, 0x7d]);
    const r = await runGw(
      ['api', '-X', 'POST', '/v1/upload', '--input', '-', '-f', 'tag=x1', '-f', 'n[]=2'],
      {
        env: gw.env,
        stdin: Readable.from([sent]),
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(gw.seen).toHaveLength(1);
    expect(gw.seen[0]).toMatchObject({ method: 'POST', url: '/v1/upload?tag=x1&n%5B%5D=2' });
    expect(gw.seen[0]?.body).toEqual(sent);
  });

  it('never retries a POST, PUT or PATCH that met a 503; retries GET and DELETE', async () => {
    const gw = await fakeGateway((res, n) =>
      n === 1 ? res.writeHead(503, { 'retry-after': '0' }).end('{}') : res.writeHead(200).end('{}'),
    );
    const cases: Array<[string[], number]> = [
      [['-X', 'POST', '/a', '-f', 'k=v'], 1],
      [['-X', 'put', '/b', '--input', '-'], 1],
      [['-X', 'PATCH', '/c', '-F', 'n=1'], 1],
      [['-X', 'DELETE', '/d'], 2],
      [['/e'], 2],
    ];
    for (const [argv, attempts] of cases) {
      const r = await runGw(['api', ...argv], { env: gw.env, stdin: '{}' });
      const path = argv.find((a) => a.startsWith('/')) as string;
      expect(gw.seen.filter((q) => q.url === path).length, argv.join(' ')).toBe(attempts);
      expect(r.exitCode, argv.join(' ')).toBe(attempts === 1 ? 1 : 0);
    }
  });

  it('prints a binary answer to a pipe byte for byte, the token masked', async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const gw = await fakeGateway((res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.concat([bytes, Buffer.from(`key=${gw.env.GW_TOKEN.slice(0, 9)}`)]));
      res.end(Buffer.concat([Buffer.from(gw.env.GW_TOKEN.slice(9)), bytes]));
    });
    const out = join(isolatedDirs().HOME, 'answer.bin');
    const r = await runBash(`gw api /v1/blob > "${out}"`, { env: gw.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const masked = Buffer.from(`key=${redactToken(gw.env.GW_TOKEN)}`);
    expect(readFileSync(out)).toEqual(Buffer.concat([bytes, masked, bytes]));
  });

  it('shows a terminal UTF-8 text: controls as \\xNN, bytes that are not UTF-8 as U+FFFD', async () => {
    const gw = await fakeGateway((res) =>
      res.writeHead(200).end(Buffer.concat([Buffer.from('café \x1b[2J '), Buffer.from([0xff, 0x9b, 0x0a])])),
    );
    const r = await runGw(['api', '/v1/blob'], { env: gw.env, tty: true });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('café \\x1b[2J \uFFFD\uFFFD\n');
  });
});

/** A request as a fake gateway received it. */
interface Seen {
  method: string;
  url: string;
  body: Buffer;
}

/** A gateway on 127.0.0.1 that answers with `answer` (`n`: the how-many-th request to this URL) and keeps each. */
async function fakeGateway(
  answer: (res: ServerResponse, n: number) => void,
): Promise<{ env: { GW_BASE_URL: string; GW_TOKEN: string }; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = closeAfterTest(
    createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const url = req.url ?? '';
        seen.push({ method: req.method ?? '', url, body: Buffer.concat(parts) });
        answer(res, seen.filter((q) => q.url === url).length);
      });
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { env: { GW_BASE_URL: `http://127.0.0.1:${port}`, GW_TOKEN: 'sk-api-bytes-7f3e91' }, seen };
}
