// The one retry policy and the network-error classification, without a network (MockAgent, fake sleep).
import { MockAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import { normalizeBaseUrl } from '../../../src/client/base-url.js';
import { InternalServerError, RateLimitError } from '../../../src/client/errors.js';
import { GatewayClient, MAX_RETRY_AFTER_MS } from '../../../src/client/gateway-client.js';
import { describeNetworkError } from '../../../src/client/network-errors.js';
import { proxySettings } from '../../../src/client/transport.js';
import { exitCodeOf, hintOf } from '../../../src/core/error-map.js';
import { ConnectionError } from '../../../src/client/errors.js';

const ORIGIN = 'http://gw.test';

function setup(now = 1_000_000): { agent: MockAgent; c: GatewayClient; sleeps: number[] } {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const sleeps: number[] = [];
  const c = new GatewayClient({
    baseUrl: ORIGIN,
    token: 't',
    dispatcher: agent,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    now: () => now,
  });
  return { agent, c, sleeps };
}

describe('retry policy', () => {
  it('waits out a Retry-After up to the cap; a longer one ends the call at once with the value, capped', async () => {
    const { agent, c, sleeps } = setup();
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1/models', method: 'GET' })
      .reply(
        503,
        { error: { code: 'service_error', message: 'down' } },
        { headers: { 'retry-after': '1000000000' } },
      );
    const e = await c.request({ method: 'GET', path: '/v1/models' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InternalServerError);
    expect(sleeps).toEqual([]);
    // Carried for a caller's own scheduling, but a sane number (never 1e9 s, never a timer overflow).
    expect((e as InternalServerError).retryAfterMs).toBeLessThanOrEqual(24 * 3_600_000);
    expect(MAX_RETRY_AFTER_MS).toBe(60_000);
  });

  it('never sleeps past the caller deadline', async () => {
    const { agent, c, sleeps } = setup(1_000_000);
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1/models', method: 'GET' })
      .reply(429, { error: { code: 'rate_limit', message: 'slow' } }, { headers: { 'retry-after': '30' } });
    const e = await c
      .request({ method: 'GET', path: '/v1/models', deadline: 1_000_000 + 10_000 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RateLimitError);
    expect(sleeps).toEqual([]);
  });

  it('a POST is never retried, whatever the answer', async () => {
    const { agent, c, sleeps } = setup();
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1/videos', method: 'POST' })
      .reply(503, { error: { code: 'x', message: 'y' } }, { headers: { 'retry-after': '1' } });
    await expect(c.request({ method: 'POST', path: '/v1/videos', body: {} })).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(sleeps).toEqual([]);
  });
});

describe('network errors', () => {
  it('classifies DNS, refused, certificate and protocol failures, with the host', () => {
    const dns = describeNetworkError(
      Object.assign(new Error('getaddrinfo ENOTFOUND nope.test'), {
        code: 'ENOTFOUND',
        hostname: 'nope.test',
      }),
      'nope.test:443',
    );
    expect(dns).toEqual({
      code: 'dns_failed',
      host: 'nope.test',
      message: 'cannot resolve nope.test (no such host)',
    });
    const refused = describeNetworkError(
      Object.assign(new Error('connect ECONNREFUSED'), {
        code: 'ECONNREFUSED',
        address: '127.0.0.1',
        port: 9,
      }),
      'x:9',
    );
    expect(refused.code).toBe('connection_refused');
    const cert = describeNetworkError(
      Object.assign(new Error('self-signed'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      'h:443',
    );
    expect(cert).toMatchObject({ code: 'tls_failed', tls: 'certificate' });
    const proto = describeNetworkError(
      Object.assign(new Error('error:0A00010B:SSL routines::wrong version number'), {
        code: 'ERR_SSL_WRONG_VERSION_NUMBER',
      }),
      'h:80',
    );
    expect(proto).toMatchObject({ code: 'tls_failed', tls: 'protocol' });
    // Wrapped errors (undici's cause chain) are looked through.
    const wrapped = describeNetworkError(
      Object.assign(new Error('fetch failed'), {
        cause: Object.assign(new Error('x'), { code: 'ENOTFOUND', hostname: 'a.b' }),
      }),
      'a.b:443',
    );
    expect(wrapped.code).toBe('dns_failed');
  });

  it('the CLI maps them to exit codes and hints; the client error itself carries neither', () => {
    const e = new ConnectionError('GET /v1/models: cannot resolve nope.test', {
      code: 'dns_failed',
      host: 'nope.test',
    });
    expect('exitCode' in e).toBe(false);
    expect(exitCodeOf(e)).toBe(3);
    expect(hintOf(e)).toMatch(/--base-url/);
    expect(exitCodeOf(new ConnectionError('x', { code: 'connection_refused' }))).toBe(1);
  });
});

describe('settings', () => {
  it('reads proxies as curl does: lower-case first, https falls back to http', () => {
    expect(proxySettings({ HTTP_PROXY: 'http://a:1', https_proxy: 'http://b:2', NO_PROXY: 'x' })).toEqual({
      httpProxy: 'http://a:1',
      httpsProxy: 'http://b:2',
      noProxy: 'x',
    });
    expect(proxySettings({ http_proxy: 'http://a:1', HTTP_PROXY: 'http://z:9' })).toEqual({
      httpProxy: 'http://a:1',
      httpsProxy: 'http://a:1',
      noProxy: '',
    });
  });

  it('normalises a base URL the same way everywhere: one trailing /v1 and slashes dropped, a prefix kept', () => {
    expect(normalizeBaseUrl(' https://gw.example.com/v1/ ')).toBe('https://gw.example.com');
    expect(normalizeBaseUrl('https://gw.example.com/api/v1')).toBe('https://gw.example.com/api');
    expect(normalizeBaseUrl('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787');
    expect(() => normalizeBaseUrl('ftp://gw.example.com')).toThrow(/only http and https/);
    expect(() => normalizeBaseUrl('gw.example.com')).toThrow(/not a URL/);
  });
});
