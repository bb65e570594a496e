import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Context, type GlobalOptions } from '../../../src/cli/context.js';

const globals: GlobalOptions = { json: false, quiet: false, verbose: false, color: false, validate: true };

function ctxWith(
  env: Record<string, string>,
  g: Partial<GlobalOptions> = {},
): { ctx: Context; stderr: () => string } {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const ctx = new Context(
    {
      stdout: new PassThrough(),
      stderr,
      stdin: Readable.from([]),
      env: { GW_CONFIG_DIR: '/nonexistent-gw', ...env },
    },
    { ...globals, ...g },
  );
  return { ctx, stderr: () => err };
}

describe('Context settings and client', () => {
  it('warns (without connecting) when the token would travel over plain http to a non-loopback host', async () => {
    const { ctx, stderr } = ctxWith({
      GW_BASE_URL: 'http://gateway.internal.example:8080',
      GW_TOKEN: 'sk-plain-http-0001',
    });
    await ctx.client();
    await ctx.close();
    expect(stderr()).toContain(
      'warning: the token travels unencrypted over http to gateway.internal.example:8080',
    );
    expect(stderr()).not.toContain('sk-plain-http-0001');
  });

  it('does not warn for https or loopback', async () => {
    for (const url of ['https://gw.example.com', 'http://127.0.0.1:8787', 'http://localhost:1']) {
      const { ctx, stderr } = ctxWith({ GW_BASE_URL: url, GW_TOKEN: 'sk-t-000000001' });
      await ctx.client();
      await ctx.close();
      expect(stderr()).toBe('');
    }
  });

  it('applies precedence flag > environment > defaults for base URL and timeout', () => {
    const { ctx } = ctxWith(
      { GW_BASE_URL: 'https://env.example', GW_TIMEOUT: '5s' },
      { baseUrl: 'https://flag.example' },
    );
    expect(ctx.settings()).toMatchObject({
      baseUrl: 'https://flag.example',
      timeoutMs: 5000,
      profileName: 'default',
    });
    const { ctx: d } = ctxWith({});
    expect(d.settings()).toMatchObject({ baseUrl: undefined, timeoutMs: 60_000 });
  });
});
