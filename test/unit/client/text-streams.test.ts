import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  GatewayError,
  RequestValidationError,
  ResponseShapeError,
} from '../../../src/client/errors.js';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import * as chat from '../../../src/client/resources/chat.js';
import * as embeddings from '../../../src/client/resources/embeddings.js';
import * as messages from '../../../src/client/resources/messages.js';
import * as responses from '../../../src/client/resources/responses.js';
import { exitCodeOf, hintOf } from '../../../src/core/error-map.js';
import { closeAfterTest } from '../../helpers/servers.js';

interface Seen {
  body: unknown;
  headers: IncomingMessage['headers'];
}

/** One scripted answer: raw SSE text written in the given slices (strings or byte arrays), with pauses. */
type Script = (res: ServerResponse, seen: Seen) => Promise<void> | void;

async function serve(script: Script): Promise<{ client: GatewayClient; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      const s = { body: text.length > 0 ? (JSON.parse(text) as unknown) : undefined, headers: req.headers };
      seen.push(s);
      void script(res, s);
    });
  });
  closeAfterTest(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    client: new GatewayClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't', maxRetries: 0 }),
    seen,
  };
}

const pause = (ms = 3): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Writes an SSE body in slices (each slice a separate write, a few ms apart), then ends. */
function sse(slices: Array<string | Buffer>, rid = 'rid-1'): Script {
  return async (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-gateway-request-id': rid });
    for (const s of slices) {
      res.write(s);
      await pause();
    }
    res.end();
  };
}

function json(status: number, body: string, rid = 'rid-1'): Script {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-gateway-request-id': rid });
    res.end(body);
  };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const chunk = (delta: object, finish: string | null = null, extra = ''): string =>
  `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":${JSON.stringify(finish)}}]${extra}}\n\n`;

const CHAT_BODY = { model: 'chat-3.7-plus', messages: [{ role: 'user', content: 'hi' }] };

describe('chat.stream', () => {
  it('yields typed chunks in awkward slices (CRLF, comments, split UTF-8) and stops at [DONE]', async () => {
    const fox = Buffer.from(chunk({ content: '世界 🦊' }), 'utf8');
    const cut = fox.indexOf(0xe4) + 1; // inside 世
    const { client, seen } = await serve(
      sse([
        ': keep-alive\r\n\r\n',
        chunk({ role: 'assistant', content: '' }).replace(/\n/g, '\r\n'),
        'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"hé',
        'llo "},"finish_reason":null}]}\n\n',
        fox.subarray(0, cut),
        fox.subarray(cut),
        chunk({}, 'stop'),
        'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":1}}}\n\n',
        'data: [DONE]\n\n',
        chunk({ content: 'after done is ignored' }),
      ]),
    );
    const s = await chat.stream(client, CHAT_BODY);
    expect(s.requestId).toBe('rid-1');
    const chunks = await collect(s.events);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('héllo 世界 🦊');
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)?.usage?.prompt_tokens_details?.cached_tokens).toBe(1);
    expect(seen[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('a frame with a top-level error throws a GatewayError with code, message and request id', async () => {
    const { client } = await serve(
      sse([
        chunk({ content: 'par' }),
        'data: {"error":{"message":"boom (rid-9)","type":"server_error","code":"upstream_error","request_id":"rid-9"}}\n\n',
      ]),
    );
    const s = await chat.stream(client, CHAT_BODY);
    const got: string[] = [];
    const err = await (async () => {
      for await (const c of s.events) got.push(c.choices[0]?.delta?.content ?? '');
    })().catch((e: unknown) => e);
    expect(got).toEqual(['par']);
    expect(err).toBeInstanceOf(GatewayError);
    const e = err as GatewayError;
    expect(e.code).toBe('upstream_error');
    expect(e.message).toBe('boom (rid-9)');
    expect(e.requestId).toBe('rid-9');
    expect(exitCodeOf(e)).toBe(1);
    expect(e.toJSON()).toEqual({
      error: { message: 'boom (rid-9)', type: 'server_error', code: 'upstream_error', request_id: 'rid-9' },
    });
  });

  it('an `event: error` frame throws; the request id falls back to the header', async () => {
    const { client } = await serve(
      sse(['event: error\ndata: {"message":"overloaded","code":"busy"}\n\n'], 'rid-h'),
    );
    const s = await chat.stream(client, CHAT_BODY);
    const err = (await collect(s.events).catch((e: unknown) => e)) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect([err.code, err.requestId]).toEqual(['busy', 'rid-h']);
  });

  it('a stream that ends without [DONE] is a ConnectionError, not a silent success', async () => {
    const { client } = await serve(sse([chunk({ content: 'cut' })]));
    const s = await chat.stream(client, CHAT_BODY);
    await expect(collect(s.events)).rejects.toBeInstanceOf(ConnectionError);
  });

  it('a chunk that is not JSON or not a chunk is a ResponseShapeError', async () => {
    const a = await serve(sse(['data: {not json\n\n']));
    await expect(collect((await chat.stream(a.client, CHAT_BODY)).events)).rejects.toBeInstanceOf(
      ResponseShapeError,
    );
    const b = await serve(sse(['data: {"choices":"nope"}\n\n']));
    await expect(collect((await chat.stream(b.client, CHAT_BODY)).events)).rejects.toThrow(/choices/);
  });

  it('an HTTP error before the stream is a GatewayError from the body', async () => {
    const { client } = await serve(
      json(
        404,
        '{"error":{"message":"no (r)","type":"invalid_request_error","code":"model_not_found","request_id":"r"}}',
      ),
    );
    const err = (await chat.stream(client, CHAT_BODY).catch((e: unknown) => e)) as GatewayError;
    expect(err.code).toBe('model_not_found');
    expect(hintOf(err)).toMatch(/gw models/);
  });
});

describe('chat.create and client-side validation', () => {
  it('returns the body unchanged (key order kept) and checks it', async () => {
    const body = '{"zeta":1,"choices":[{"message":{"content":"ok","role":"assistant"},"index":0}],"id":"x"}';
    const { client } = await serve(json(200, body));
    const r = await chat.create(client, CHAT_BODY);
    expect(JSON.stringify(r.data)).toBe(body);
    expect(chat.messageText(r.data)).toBe('ok');
    expect(r.requestId).toBe('rid-1');
  });

  it('a body that breaks a rule is a RequestValidationError and nothing is sent; validate:false sends it', async () => {
    const { client, seen } = await serve(json(200, '{"choices":[]}'));
    const bad = { model: 'chat-3.7-plus', messages: [] };
    const err = (await chat.create(client, bad).catch((e: unknown) => e)) as RequestValidationError;
    expect(err).toBeInstanceOf(RequestValidationError);
    expect(err.message).toMatch(/^messages: must hold at least one message/);
    expect(err).toMatchObject({ field: 'messages', param: 'messages', code: 'invalid_input' });
    expect(err.rule).toMatch(/^must hold at least one message/);
    expect(exitCodeOf(err)).toBe(2);
    expect(seen).toHaveLength(0);
    const loose = new GatewayClient({ baseUrl: client.baseUrl, token: 't', validate: false });
    await chat.create(loose, bad);
    expect(seen).toHaveLength(1);
  });

  it('an answer without choices is a ResponseShapeError', async () => {
    const { client } = await serve(json(200, '{"id":"x"}'));
    await expect(chat.create(client, CHAT_BODY)).rejects.toThrow(/unexpected answer at choices/);
  });
});

const rev = (type: string, fields: object, seq: number): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...fields })}\n\n`;
const RESP = (status: string, output: unknown[] = []): object => ({
  id: 'resp_1',
  object: 'response',
  status,
  output,
});
const RESP_BODY = {
  model: 'chat-3.7-plus',
  input: [{ role: 'user', content: [{ type: 'input_text' as const, text: 'hi' }] }],
};

describe('responses.stream', () => {
  const item = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there' }] };

  it('yields every event and ends after response.completed', async () => {
    const { client } = await serve(
      sse([
        rev('response.created', { response: RESP('in_progress') }, 0),
        rev('response.output_text.delta', { delta: 'Hi ' }, 1),
        rev('response.some_future_event', { x: 1 }, 2),
        rev('response.output_text.delta', { delta: 'there' }, 3),
        rev('response.completed', { response: RESP('completed', [item]) }, 4),
        rev('response.output_text.delta', { delta: 'ignored' }, 5),
      ]),
    );
    const evs = await collect((await responses.stream(client, RESP_BODY)).events);
    expect(evs.map((e) => e.type)).toEqual([
      'response.created',
      'response.output_text.delta',
      'response.some_future_event',
      'response.output_text.delta',
      'response.completed',
    ]);
    expect(evs.map((e) => e.delta ?? '').join('')).toBe('Hi there');
    const last = evs.at(-1)?.response;
    expect(last !== undefined && responses.outputText(last)).toBe('Hi there');
  });

  it('an error event throws with its code; response.failed is yielded and ends the stream', async () => {
    const a = await serve(
      sse([rev('error', { code: 'upstream_error', message: 'bad (rid-2)', param: null }, 0)], 'rid-2'),
    );
    const err = (await collect((await responses.stream(a.client, RESP_BODY)).events).catch(
      (e: unknown) => e,
    )) as GatewayError;
    expect([err.code, err.message, err.requestId]).toEqual(['upstream_error', 'bad (rid-2)', 'rid-2']);

    const failed = { ...RESP('failed'), error: { code: 'server_error', message: 'x' } };
    const b = await serve(sse([rev('response.failed', { response: failed }, 0)]));
    const evs = await collect((await responses.stream(b.client, RESP_BODY)).events);
    expect(evs.map((e) => e.type)).toEqual(['response.failed']);
  });

  it('tolerates [DONE]; a stream without a terminal event is a ConnectionError', async () => {
    const a = await serve(
      sse([rev('response.created', { response: RESP('in_progress') }, 0), 'data: [DONE]\n\n']),
    );
    expect(await collect((await responses.stream(a.client, RESP_BODY)).events)).toHaveLength(1);
    const b = await serve(sse([rev('response.created', { response: RESP('in_progress') }, 0)]));
    await expect(collect((await responses.stream(b.client, RESP_BODY)).events)).rejects.toBeInstanceOf(
      ConnectionError,
    );
  });

  it('outputText concatenates output_text parts of message items only', () => {
    expect(
      responses.outputText({
        id: 'r',
        output: [
          { type: 'reasoning', content: [{ type: 'output_text', text: 'no' }] },
          {
            type: 'message',
            content: [
              { type: 'output_text', text: 'a' },
              { type: 'refusal', refusal: 'r' },
            ],
          },
          { type: 'message', content: [{ type: 'output_text', text: 'b' }] },
        ],
      }),
    ).toBe('ab');
  });
});

const mev = (type: string, fields: object = {}): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
const MSG_BODY = { model: 'chat-3.7-plus', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

describe('messages.stream', () => {
  it('dispatches on event names, skips ping and unknown events, accumulates with cumulative usage', async () => {
    const { client, seen } = await serve(
      sse([
        mev('message_start', {
          message: {
            id: 'm',
            type: 'message',
            role: 'assistant',
            content: [],
            usage: { input_tokens: 5, output_tokens: 1 },
          },
        }),
        mev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        mev('ping'),
        mev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hel' } }),
        mev('future_event', { index: 0 }),
        mev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'lo' } }),
        mev('content_block_stop', { index: 0 }),
        mev('message_delta', {
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 2 },
        }),
        mev('message_delta', {
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 3 },
        }),
        mev('message_stop'),
        mev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'late' } }),
      ]),
    );
    const s = await messages.stream(client, MSG_BODY, { compatVersion: '2023-06-01', compatBeta: 'b1' });
    const evs = await collect(s.events);
    expect(evs.map((e) => e.type)).not.toContain('ping');
    expect(evs.at(-1)?.type).toBe('message_stop');
    let m: messages.MessageObject | undefined;
    for (const e of evs) m = messages.accumulate(m, e);
    expect(m !== undefined && messages.text(m)).toBe('Hello');
    // cumulative counters overwrite: 3, never 1 + 2 + 3
    expect(m?.usage).toMatchObject({ input_tokens: 5, output_tokens: 3 });
    expect(m?.stop_reason).toBe('end_turn');
    expect(seen[0]?.headers['x-compat-version']).toBe('2023-06-01');
    expect(seen[0]?.headers['x-compat-beta']).toBe('b1');
  });

  it('an error event throws a GatewayError with the type as code and the request id', async () => {
    const { client } = await serve(
      sse([
        mev('message_start', { message: { content: [] } }),
        mev('error', { error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: 'rid-m' }),
      ]),
    );
    const err = (await collect((await messages.stream(client, MSG_BODY)).events).catch(
      (e: unknown) => e,
    )) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect([err.code, err.message, err.requestId]).toEqual(['overloaded_error', 'Overloaded', 'rid-m']);
  });

  it('a stream that ends before message_stop is a ConnectionError', async () => {
    const { client } = await serve(sse([mev('message_start', { message: { content: [] } })]));
    await expect(collect((await messages.stream(client, MSG_BODY)).events)).rejects.toBeInstanceOf(
      ConnectionError,
    );
  });

  it('max_tokens is checked before sending', async () => {
    const { client, seen } = await serve(json(200, '{}'));
    await expect(messages.create(client, { ...MSG_BODY, max_tokens: 0 })).rejects.toThrow(
      /^max_tokens: must be an integer >= 1/,
    );
    expect(seen).toHaveLength(0);
  });
});

describe('embeddings', () => {
  it('decodes base64 little-endian float32 vectors', async () => {
    const b = Buffer.alloc(8);
    b.writeFloatLE(0.5, 0);
    b.writeFloatLE(-1.25, 4);
    const { client } = await serve(
      json(
        200,
        JSON.stringify({
          data: [
            { index: 1, embedding: [1, 2] },
            { index: 0, embedding: b.toString('base64') },
          ],
        }),
      ),
    );
    const r = await embeddings.create(client, { model: 'text-embedding-v4', input: ['a', 'b'] });
    expect(embeddings.vectors(r.data)).toEqual([
      [0.5, -1.25],
      [1, 2],
    ]);
  });
});
