import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AuthenticationError,
  ConnectionError,
  GatewayError,
  ResponseShapeError,
  TimeoutError,
} from '../../../src/client/errors.js';
import { exitCodeOf } from '../../../src/core/error-map.js';
import { GatewayClient, type Exchange } from '../../../src/client/gateway-client.js';

const TOKEN = 'sk-test-abcdef123456';
const ORIGIN = 'http://gw.test';

function mock(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agent.enableCallHistory();
  return agent;
}

function client(agent: MockAgent, extra: Partial<ConstructorParameters<typeof GatewayClient>[0]> = {}) {
  const sleeps: number[] = [];
  const exchanges: Exchange[] = [];
  const c = new GatewayClient({
    baseUrl: ORIGIN,
    token: TOKEN,
    dispatcher: agent,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    onExchange: (x) => exchanges.push(x),
    ...extra,
  });
  return { c, sleeps, exchanges };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('GatewayClient.request', () => {
  it('sends the bearer token, keeps a base path prefix, and surfaces the request id', async () => {
    const agent = mock();
    agent
      .get(ORIGIN)
      .intercept({ path: '/prefix/v1/models', method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } })
      .reply(200, { object: 'list', data: [] }, { headers: { 'x-gateway-request-id': 'req-42' } });
    const { c } = client(agent, { baseUrl: `${ORIGIN}/prefix/` });
    const res = await c.request({ method: 'GET', path: '/v1/models' });
    expect(res.requestId).toBe('req-42');
    expect(res.data).toEqual({ object: 'list', data: [] });
  });

  it('retries a GET on 429, honouring Retry-After (fake clock)', async () => {
    const agent = mock();
    const pool = agent.get(ORIGIN);
    pool
      .intercept({ path: '/v1/videos/v1', method: 'GET' })
      .reply(
        429,
        { error: { code: 'rate_limit_exceeded', message: 'slow down' } },
        { headers: { 'retry-after': '7' } },
      );
    pool.intercept({ path: '/v1/videos/v1', method: 'GET' }).reply(200, { status: 'queued' });
    const { c, sleeps } = client(agent);
    const res = await c.request({ method: 'GET', path: '/v1/videos/v1' });
    expect(res.data).toEqual({ status: 'queued' });
    expect(sleeps).toEqual([7000]);
  });

  it('retries a GET on 503 with jittered backoff when there is no Retry-After', async () => {
    const agent = mock();
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/v1/models', method: 'GET' }).reply(503, 'busy');
    pool.intercept({ path: '/v1/models', method: 'GET' }).reply(503, 'busy');
    pool.intercept({ path: '/v1/models', method: 'GET' }).reply(200, { data: [] });
    const { c, sleeps } = client(agent);
    await c.request({ method: 'GET', path: '/v1/models' });
    expect(sleeps).toEqual([375, 750]); // 500·2^n scaled by 0.75 (random 0.5)
  });

  it('never retries a POST (a retried video create would bill twice)', async () => {
    const agent = mock();
    const pool = agent.get(ORIGIN);
    pool
      .intercept({ path: '/v1/videos', method: 'POST' })
      .reply(503, { error: { code: 'service_error', message: 'down' } }, { headers: { 'retry-after': '1' } });
    pool.intercept({ path: '/v1/videos', method: 'POST' }).reply(200, { video_id: 'should-not-be-reached' });
    const { c, sleeps } = client(agent);
    await expect(
      c.request({ method: 'POST', path: '/v1/videos', body: { model: 'm' } }),
    ).rejects.toMatchObject({ code: 'service_error', status: 503 });
    expect(sleeps).toEqual([]);
    expect(agent.getCallHistory()?.calls().length).toBe(1);
  });

  it('maps 401 to AuthenticationError (exit 3 in the CLI) with the request id', async () => {
    const agent = mock();
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1/models', method: 'GET' })
      .reply(401, { error: { code: 'invalid_api_key', message: 'bad token (r-1)', request_id: 'r-1' } });
    const { c } = client(agent);
    const e = await c.request({ method: 'GET', path: '/v1/models' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AuthenticationError);
    expect(exitCodeOf(e as AuthenticationError)).toBe(3);
    expect((e as AuthenticationError).requestId).toBe('r-1');
  });

  it('rejects malformed JSON and answers that do not match the schema with ResponseShapeError', async () => {
    const agent = mock();
    const pool = agent.get(ORIGIN);
    pool
      .intercept({ path: '/v1/models', method: 'GET' })
      .reply(200, '{"data": [', { headers: { 'x-gateway-request-id': 'r-9' } });
    pool.intercept({ path: '/v1/models', method: 'GET' }).reply(200, { data: 'nope' });
    const { c } = client(agent);
    const schema = z.object({ data: z.array(z.unknown()) });
    const e1 = await c.request({ method: 'GET', path: '/v1/models', schema }).catch((x: unknown) => x);
    expect(e1).toBeInstanceOf(ResponseShapeError);
    expect((e1 as ResponseShapeError).requestId).toBe('r-9');
    const e2 = await c.request({ method: 'GET', path: '/v1/models', schema }).catch((x: unknown) => x);
    expect(e2).toBeInstanceOf(ResponseShapeError);
    expect((e2 as Error).message).toMatch(/data/);
  });

  it('reports exchanges without the token', async () => {
    const agent = mock();
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1/models?x=1', method: 'GET' })
      .reply(200, {}, { headers: { 'x-gateway-request-id': 'r-5' } });
    const { c, exchanges } = client(agent);
    await c.request({ method: 'GET', path: '/v1/models', query: { x: 1 } });
    expect(exchanges).toMatchObject([
      { method: 'GET', path: '/v1/models?x=1', status: 200, requestId: 'r-5', attempt: 0 },
    ]);
    expect(JSON.stringify(exchanges)).not.toContain(TOKEN);
  });

  it('times out with TimeoutError (exit 4) when the gateway never answers', async () => {
    const base = await serve(() => {
      /* never answers */
    });
    const c = new GatewayClient({ baseUrl: base, token: TOKEN, timeoutMs: 150, maxRetries: 0 });
    const e = await c
      .request({ method: 'POST', path: '/v1/chat/completions', body: {} })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(exitCodeOf(e as TimeoutError)).toBe(4);
    await c.close();
  });

  it('maps a refused connection to ConnectionError', async () => {
    const base = await serve((_q, r) => r.end());
    servers[0]?.close();
    await new Promise((r) => setTimeout(r, 10));
    const c = new GatewayClient({ baseUrl: base, token: TOKEN, maxRetries: 0 });
    await expect(c.request({ method: 'GET', path: '/v1/models' })).rejects.toBeInstanceOf(ConnectionError);
    await c.close();
  });
});

describe('GatewayClient.raw (downloads)', () => {
  it('follows a cross-origin redirect without forwarding Authorization', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const cdn = await serve((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 3 }).end('abc');
    });
    const gw = await serve((req, res) => {
      seen.push(req.headers);
      res.writeHead(302, { location: `${cdn}/file.mp4`, 'x-gateway-request-id': 'r-1' }).end();
    });
    const c = new GatewayClient({ baseUrl: gw, token: TOKEN });
    const res = await c.raw({ path: '/v1/videos/v/content' });
    expect(await res.body.text()).toBe('abc');
    expect(seen[0]?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen[1]?.authorization).toBeUndefined();
    await c.close();
  });

  it('never sends the token to an absolute URL on another origin', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const cdn = await serve((req, res) => {
      seen.push(req.headers);
      res.end('x');
    });
    const c = new GatewayClient({ baseUrl: 'http://127.0.0.1:9', token: TOKEN });
    await (await c.raw({ path: `${cdn}/result.mp4` })).body.text();
    expect(seen[0]?.authorization).toBeUndefined();
    await c.close();
  });

  it("never sends the token to an origin whose port only starts like the gateway's", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const cdn = await serve((req, res) => {
      seen.push(req.headers);
      res.end('x');
    });
    // http://127.0.0.1:41235 → a gateway at http://127.0.0.1:4123: the CDN's URL starts with the gateway's origin.
    const c = new GatewayClient({ baseUrl: cdn.slice(0, -1), token: TOKEN });
    await (await c.raw({ path: `${cdn}/result.mp4` })).body.text();
    expect(seen[0]?.authorization).toBeUndefined();
    await c.close();
  });

  it('fails a redirect loop with a readable error instead of hanging', async () => {
    const loop: string[] = [];
    const base = await serve((req, res) => {
      loop.push(req.url ?? '');
      res.writeHead(302, { location: '/again' }).end();
    });
    const c = new GatewayClient({ baseUrl: base, token: TOKEN, maxRetries: 0 });
    const e = await c.raw({ path: '/v1/videos/v/content' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as Error).message).toMatch(/redirect/i);
    expect(loop.length).toBeLessThanOrEqual(7);
    await c.close();
  });

  it('surfaces a gateway error before the redirect', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json', 'x-gateway-request-id': 'r-nr' });
      res.end(
        JSON.stringify({
          error: { code: 'video_not_ready', message: 'not ready (r-nr)', request_id: 'r-nr' },
        }),
      );
    });
    const c = new GatewayClient({ baseUrl: base, token: TOKEN });
    const e = await c.raw({ path: '/v1/videos/v/content' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GatewayError);
    expect((e as GatewayError).requestId).toBe('r-nr');
    await c.close();
  });
});

describe('GatewayClient.stream', () => {
  it('decodes a stream sent in awkward slices and exposes the request id', async () => {
    const frames = ['data: {"a":"h\u00e9"}\r\n', '\r\n: keep-alive\n\n', 'data:[DONE]\n\n'];
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-gateway-request-id': 'r-s' });
      const bytes = Buffer.from(frames.join(''), 'utf8');
      let i = 0;
      const t = setInterval(() => {
        res.write(bytes.subarray(i, i + 3));
        i += 3;
        if (i >= bytes.length) {
          clearInterval(t);
          res.end();
        }
      }, 1);
    });
    const c = new GatewayClient({ baseUrl: base, token: TOKEN });
    const s = await c.stream({ method: 'POST', path: '/v1/chat/completions', body: { stream: true } });
    const data: string[] = [];
    for await (const e of s.events) data.push(e.data);
    expect(s.requestId).toBe('r-s');
    expect(data).toEqual(['{"a":"hé"}', '[DONE]']);
    await c.close();
  });

  it('turns an error status into a GatewayError before any event', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json', 'x-gateway-request-id': 'r-e' });
      res.end(
        JSON.stringify({ error: { code: 'model_not_found', message: 'no model (r-e)', request_id: 'r-e' } }),
      );
    });
    const c = new GatewayClient({ baseUrl: base, token: TOKEN });
    await expect(c.stream({ method: 'POST', path: '/v1/chat/completions', body: {} })).rejects.toMatchObject({
      code: 'model_not_found',
      requestId: 'r-e',
    });
    await c.close();
  });
});
