import { describe, expect, it } from 'vitest';
import { bypassesProxy, parseNoProxy, proxyUrl } from '../../../src/client/transport.js';

const direct = (host: string, port: number, noProxy: string): boolean =>
  bypassesProxy(host, port, parseNoProxy(noProxy));

describe('NO_PROXY as curl >= 7.86 reads it', () => {
  it('matches names and their subdomains, with an optional port', () => {
    expect(direct('gateway.internal', 443, 'internal')).toBe(true);
    expect(direct('gateway.internal', 443, '.internal')).toBe(true);
    expect(direct('gateway.internal', 443, '*.internal')).toBe(true);
    expect(direct('notinternal', 443, 'internal')).toBe(false);
    expect(direct('gateway.internal', 443, 'gateway.internal:8443')).toBe(false);
    expect(direct('gateway.internal', 8443, 'gateway.internal:8443')).toBe(true);
    expect(direct('anything', 80, '*')).toBe(true);
  });

  it('matches IPv4 and IPv6 addresses and CIDR ranges', () => {
    expect(direct('10.1.2.3', 443, '10.0.0.0/8')).toBe(true);
    expect(direct('11.1.2.3', 443, '10.0.0.0/8')).toBe(false);
    expect(direct('[::1]', 443, '::1/128')).toBe(true);
    expect(direct('[::1]', 443, '::1')).toBe(true);
    expect(direct('[::2]', 443, '::1/128')).toBe(false);
    expect(direct('[fd00::5]', 443, 'fd00::/8, 10.0.0.0/8')).toBe(true);
    expect(direct('[::ffff:10.0.0.7]', 443, '10.0.0.0/8')).toBe(true);
    expect(direct('[::1]', 8443, '[::1]:8443')).toBe(true);
    expect(direct('192.168.0.1', 443, '192.168.0.1')).toBe(true);
    // A range never matches a name, nor an address of the other family.
    expect(direct('gateway.internal', 443, '10.0.0.0/8')).toBe(false);
    expect(direct('[::1]', 443, '127.0.0.0/8')).toBe(false);
  });
});

describe('proxy addresses', () => {
  it('a value without a scheme is http, as curl reads it', () => {
    expect(proxyUrl('proxy.example:3128').href).toBe('http://proxy.example:3128/');
    expect(proxyUrl('user:pw@proxy.example:3128').username).toBe('user');
    expect(proxyUrl('https://proxy.example').protocol).toBe('https:');
  });

  it('text that is no proxy address is refused naming the variable, not quoting it', () => {
    expect(() => proxyUrl('http://user:s3cret@', 'HTTPS_PROXY')).toThrow(
      /^HTTPS_PROXY is not a proxy address/,
    );
    expect(() => proxyUrl('ftp://proxy:21', 'HTTP_PROXY')).toThrow(/^HTTP_PROXY is not/);
    expect(() => proxyUrl('::s3cret::')).toThrow(/^(?!.*s3cret)/);
  });
});
