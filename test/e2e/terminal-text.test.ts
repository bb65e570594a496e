/**
 * Gateway text never reaches a terminal raw: every line gw writes (stdout and stderr) has its control characters
 * made visible by the output layer, whatever command printed it. --json output stays exact JSON. A hostile server
 * answers with ids and messages carrying an OSC title sequence, BEL, a CSI screen clear and an 8-bit CSI.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { closeAfterTest } from '../helpers/servers.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

/** Text that would retitle the window, ring the bell and clear the screen if printed raw. */
const EVIL = 'x\u001b]0;pwned\u0007\u001b[2J\u009b2Jy';
/** Any raw control character but newline and tab. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

type Route = (req: IncomingMessage, body: string) => { status?: number; json: unknown } | undefined;

/** A gateway answering every request from `route`; counts requests. */
async function hostile(route: Route): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      hits++;
      const a = route(req, body) ?? { status: 404, json: { error: { message: 'no', code: 'nf' } } };
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json', 'x-gateway-request-id': 'req-1' });
      res.end(JSON.stringify(a.json));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closeAfterTest(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

const env = (url: string): Record<string, string> => ({
  ...isolatedDirs(),
  GW_BASE_URL: url,
  GW_TOKEN: 'sk-terminal-0001',
});

function expectInert(text: string): void {
  expect(text).not.toMatch(RAW);
}

describe('gateway text is neutralised at the output layer', () => {
  it('creates print the id with its escape sequences made visible; --json stays the exact document', async () => {
    const gw = await hostile((req) => {
      if (req.url === '/v1/videos') return { json: { id: EVIL, object: 'video', status: 'queued' } };
      if (req.url === '/beta/api/v3/contents/generations/tasks') return { json: { id: EVIL } };
      if (req.url === '/alpha/v1/videos/image2video')
        return { json: { code: 0, data: { task_id: EVIL, task_status: 'submitted' } } };
      return undefined;
    });
    const e = env(gw.url);
    const creates = [
      ['video', 'create', 'a fox', '-m', 'clip-1.1-t2v'],
      ['beta', 'task', 'create', 'a fox', '-m', 'gamma-video-2-0-fast'],
      ['alpha', 'i2v', '--image', 'https://example.com/a.png', '--prompt', 'a fox'],
    ];
    for (const argv of creates) {
      const r = await runGw(argv, { env: e });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
      expectInert(r.stdout + r.stderr);
      expect(r.stdout).toBe('x\\x1b]0;pwned\\x07\\x1b[2J\\x9b2Jy\n');
    }
    const json = await runGw(['--json', ...(creates[0] ?? [])], { env: e });
    expectInert(json.stdout);
    expect((JSON.parse(json.stdout) as { id: string }).id).toBe(EVIL);
  });

  it('gw probe --every failure lines and gw probe history changes', async () => {
    let fail = false;
    const gw = await hostile((req) => {
      if (req.url !== '/v1/models') return undefined;
      if (!fail) return { json: { object: 'list', data: [{ id: 'chat-1', object: 'model' }] } };
      return { status: 400, json: { error: { message: EVIL, code: `bad${EVIL}`, type: 'x' } } };
    });
    const e = env(gw.url);
    expect((await runGw(['probe', '--only', 'models'], { env: e })).exitCode).toBe(0);
    fail = true;
    const ac = new AbortController();
    const before = gw.hits();
    // The second request of the watch starts its second run: the first run's lines are printed by then.
    const poll = setInterval(() => gw.hits() >= before + 2 && ac.abort(), 5);
    const watch = await runGw(['probe', '--only', 'models', '--every', '10ms'], {
      env: e,
      signal: ac.signal,
    }).finally(() => clearInterval(poll));
    expect(watch.stdout).toContain('FAIL models:');
    expectInert(watch.stdout + watch.stderr);

    const history = await runGw(['probe', 'history'], { env: e });
    expect(history.stdout).toContain('\\x1b]0;pwned');
    expectInert(history.stdout + history.stderr);
  });

  it("gw batch status's in-doubt list", async () => {
    const sim = await useSim({ faults: [{ route: 'POST /v1/videos', kind: 'lost-answer', times: 1 }] });
    const dir = tempDir('gw-term-batch-');
    const id = `v${EVIL}`;
    const file = join(dir, 'jobs.jsonl');
    mkdirSync(dir, { recursive: true });
    const line = {
      custom_id: id,
      method: 'POST',
      url: '/v1/videos',
      body: { model: 'clip-1.1-t2v', prompt: 'p' },
    };
    writeFileSync(file, `${JSON.stringify(line)}\n`);
    const e = { ...isolatedDirs(), ...sim.env };
    const out = join(dir, 'out');
    const run = await runGw(['batch', 'run', file, '--out', out], { env: e });
    expect(run.exitCode).toBe(1);
    expectInert(run.stdout + run.stderr);
    const status = await runGw(['batch', 'status', out], { env: e });
    expect(status.stdout).toContain('in doubt');
    expect(status.stdout).toContain('vx\\x1b]0;pwned');
    expectInert(status.stdout + status.stderr);
  });

  it('streamed text: raw to a pipe (the payload as sent), made visible on a terminal', async () => {
    const sse = (text: string): string =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\ndata: [DONE]\n\n`;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse(EVIL));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closeAfterTest(server);
    const e = env(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const piped = await runGw(['chat', '--stream', '-m', 'chat-1', 'hi'], { env: e });
    expect(piped.stdout).toBe(`${EVIL}\n`);
    const tty = await runGw(['chat', '-m', 'chat-1', 'hi'], { env: e, tty: true });
    expect(tty.stdout).toBe('x\\x1b]0;pwned\\x07\\x1b[2J\\x9b2Jy\n');
  });
});
