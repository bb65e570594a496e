/**
 * What real gateways send that gw sim does not: compressed answers, event streams framed in other ways, error
 * events inside a stream, a stream ended by closing, usage only in the last chunk.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runGw } from '../helpers/gw.js';
import { closeAfterTest } from '../helpers/servers.js';

const chunk = (delta: object, extra: object = {}): string =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  });
const FINISH = JSON.stringify({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
});
const USAGE = JSON.stringify({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
});
const COMPLETION = JSON.stringify({
  id: 'x',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'zipped hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A gateway on a loopback port that answers every request with `handler`; the requests' headers are kept. */
async function gateway(handler: Handler): Promise<{ env: Record<string, string>; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = closeAfterTest(
    createServer((req, res) => {
      seen.push(req);
      req.resume();
      req.on('end', () => handler(req, res));
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { env: { GW_BASE_URL: `http://127.0.0.1:${port}`, GW_TOKEN: 'sk-compat-test-0000' }, seen };
}

/** An event stream of these frames, as sent. */
const sse =
  (text: string): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(text);
  };

const chat = (env: Record<string, string>, ...flags: string[]) =>
  runGw(['chat', '-m', 'm', ...flags, 'hi'], { env });

describe('answers of real gateways', () => {
  it('decodes gzip and br JSON answers; asks for none unless told with --header', async () => {
    for (const [name, zip] of [
      ['gzip', gzipSync],
      ['br', brotliCompressSync],
    ] as const) {
      const gw = await gateway((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': name });
        res.end(zip(COMPLETION));
      });
      const r = await chat(gw.env, '--no-stream');
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe('zipped hello');
      expect(gw.seen[0]?.headers['accept-encoding']).toBeUndefined();
      const asked = await runGw(
        ['--header', `Accept-Encoding: ${name}`, '--header-override', 'api', '/v1/models'],
        { env: gw.env },
      );
      expect(asked.exitCode, asked.stderr).toBe(0);
      expect(gw.seen[1]?.headers['accept-encoding']).toBe(name);
      expect(asked.stdout).toBe(COMPLETION);
    }
  });

  it('refuses an encoding it cannot decode with a clear error, exit 1', async () => {
    const gw = await gateway((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' });
      res.end('xx');
    });
    const r = await chat(gw.env, '--no-stream');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/encoded as "zstd", which gw cannot decode/);
  });

  it('reads data: lines without a space and CRLF framing', async () => {
    const frames = [chunk({ content: 'Hello ' }), chunk({ content: 'world' }), FINISH, '[DONE]'];
    for (const text of [
      frames.map((f) => `data:${f}\n\n`).join(''),
      frames.map((f) => `data: ${f}\r\n\r\n`).join(''),
    ]) {
      const gw = await gateway(sse(text));
      const r = await chat(gw.env, '--stream');
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe('Hello world');
    }
  });

  it('an error event inside a stream (OpenAI data or Anthropic event: error) is an error, exit 1', async () => {
    const cases = [
      `data: {"error":{"message":"upstream overloaded","type":"server_error","code":"overloaded"}}\n\n`,
      `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
    ];
    for (const [i, tail] of cases.entries()) {
      const gw = await gateway(sse(`data: ${chunk({ content: 'Hello ' })}\n\n${tail}`));
      const r = await chat(gw.env, '--stream');
      expect(r.exitCode).toBe(1);
      expect(r.stdout.trim()).toBe('Hello');
      expect(r.stderr).toMatch(i === 0 ? /overloaded: upstream overloaded/ : /overloaded_error: Overloaded/);
    }
  });

  it('a stream closed after its finish chunk without [DONE] is whole; one closed before it is not', async () => {
    const whole = await gateway(
      sse(`data: ${chunk({ content: 'Hello' })}\n\ndata: ${FINISH}\n\ndata: ${USAGE}\n\n`),
    );
    const ok = await chat(whole.env, '--stream', '--usage');
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe('Hello');
    // usage came only in the last chunk (choices: [])
    expect(ok.stderr).toMatch(/prompt_tokens=5 completion_tokens=2 total_tokens=7/);

    const cut = await gateway(sse(`data: ${chunk({ content: 'Hel' })}\n\n`));
    const r = await chat(cut.env, '--stream');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/the stream ended before its final event/);
  });
});
