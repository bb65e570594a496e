import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedDirs, runGw, spawnGw } from '../helpers/gw.js';
import { closeAfterTest } from '../helpers/servers.js';
import { INSTANT, useSim } from '../helpers/sim.js';

const SECRET = 'pk-route-secret-7a1f';

describe('--header: extra request headers to the gateway only', () => {
  it('sends every --header (before and after the command name) on each request, names in any case', async () => {
    const sim = await useSim();
    const r = await runGw(['-H', 'X-Route: blue', 'models', '--header', 'x-tenant:  t1 '], { env: sim.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const q = sim.requests.at(-1);
    expect(q?.headers['x-route']).toBe('blue');
    expect(q?.headers['x-tenant']).toBe('t1');
  });

  it('gw load (its own dispatch path), gw api and gw probe send them on every request too', async () => {
    const sim = await useSim();
    const runs = [
      ['load', '-m', 'chat-3.7-plus', '--requests', '3', '--concurrency', '2', '--max-tokens', '4', '--json'],
      ['api', '/v1/models'],
      ['probe', '--only', 'models,chat,chat-stream'],
    ];
    for (const argv of runs) {
      const before = sim.requests.length;
      const r = await runGw(['-H', 'X-Route: blue', ...argv], { env: sim.env });
      expect(r.exitCode, `${argv[0]}: ${r.stderr}`).toBe(0);
      const sent = sim.requests.slice(before);
      expect(sent.length, argv[0]).toBeGreaterThan(0);
      expect(sent.every((q) => q.headers['x-route'] === 'blue')).toBe(true);
    }
  });

  it('profile headers, then GW_HEADERS, then --header win per name; "Name:" drops one', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const env = { ...sim.env, ...dirs };
    for (const [k, v] of [
      ['headers.X-Route', 'profile'],
      ['headers.X-Keep', 'kept'],
      ['headers.X-Drop', 'dropped'],
    ] as const) {
      expect((await runGw(['config', 'set', k, v], { env })).exitCode).toBe(0);
    }
    const r = await runGw(['--header', 'X-Drop:', 'models'], {
      env: { ...env, GW_HEADERS: 'X-Route: from-env\nX-Env: e' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const h = sim.requests.at(-1)?.headers ?? {};
    expect([h['x-route'], h['x-keep'], h['x-env'], h['x-drop']]).toEqual([
      'from-env',
      'kept',
      'e',
      undefined,
    ]);
    await runGw(['-H', 'X-Route: flag', 'models'], { env: { ...env, GW_HEADERS: 'X-Route: from-env' } });
    expect(sim.requests.at(-1)?.headers['x-route']).toBe('flag');
  });

  it('never follows a redirect to another origin, nor goes to a result URL on another host', async () => {
    const sim = await useSim({ timings: INSTANT });
    const env = sim.env;
    const id = (
      await runGw(['video', 'create', 'fox', '-m', 'clip-1.1-t2v', '--seconds', '3'], { env })
    ).stdout.trim();
    const dir = isolatedDirs().HOME;
    const out = join(dir, 'v.mp4');
    const r = await runGw(['-H', `X-Api-Key: ${SECRET}`, 'video', 'download', id, '-o', out], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(out).length).toBeGreaterThan(0);
    const content = sim.requests.filter((q) => q.path === `/v1/videos/${id}/content`);
    expect(content.length).toBeGreaterThan(0);
    expect(content.every((q) => q.headers['x-api-key'] === SECRET)).toBe(true);
    // The redirect's next hop is the CDN origin: it saw gw, but neither the token nor the header.
    const cdn = sim.sim.cdn.requests;
    expect(cdn.length).toBeGreaterThan(0);
    expect(
      cdn.some((q) => q.headers['x-api-key'] !== undefined || q.headers.authorization !== undefined),
    ).toBe(false);
  });

  it('a callback URL is registered with the gateway, and gw itself never connects to it', async () => {
    const sim = await useSim();
    let connections = 0;
    const receiver = closeAfterTest(createServer((_req, res) => res.writeHead(204).end()));
    receiver.on('connection', () => (connections += 1));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const callback = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`;
    const r = await runGw(
      [
        '-H',
        `X-Api-Key: ${SECRET}`,
        'alpha',
        'i2v',
        '--image',
        'https://example.com/first.png',
        '--callback-url',
        callback,
      ],
      { env: sim.env },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const create = sim.requests.at(-1);
    expect(create?.body).toMatchObject({ callback_url: callback });
    expect(create?.headers['x-api-key']).toBe(SECRET);
    // The gateway calls it back when the task ends (the simulator does not): the token and headers stay with gw.
    expect(connections).toBe(0);
  });

  it('a bad name or value is exit 2 naming --header, and nothing is sent', async () => {
    const sim = await useSim();
    const cases: Array<[string[], RegExp]> = [
      [['-H', 'X Bad: v'], /--header: "X Bad" is not a header name/],
      [['-H', 'no-colon'], /--header: "no-colon" is not 'Name: value'/],
      [['-H', `X-Key: a\rb`], /--header: the value of X-Key contains a line break/],
      [['-H', `X-Key: a\u0000b`], /--header: the value of X-Key contains a NUL byte/],
      [['-H', 'Host: other.example'], /--header: Host cannot be set/],
      [['-H', 'Content-Length: 5'], /--header: Content-Length cannot be set/],
      [
        ['-H', 'Authorization: Bearer x'],
        /--header: Authorization is a header gw sets itself; add --header-override/,
      ],
      [['-H', 'traceparent: 00-1-2-01'], /--header: traceparent is a header gw sets itself/],
    ];
    for (const [flags, message] of cases) {
      const r = await runGw([...flags, 'models'], { env: sim.env });
      expect(r.exitCode, flags.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const env = await runGw(['models'], { env: { ...sim.env, GW_HEADERS: 'X-Ok: 1\nbroken' } });
    expect(env.exitCode).toBe(2);
    expect(env.stderr).toMatch(/GW_HEADERS: "broken" is not 'Name: value'/);
    expect(sim.requests).toHaveLength(0);
  });

  it('--header-override replaces a header gw sets itself; Authorization then needs no token', async () => {
    const sim = await useSim();
    const r = await runGw(
      [
        '--header-override',
        '-H',
        `Authorization: Bearer ${sim.env.GW_TOKEN}`,
        '-H',
        'User-Agent: probe/9',
        'models',
      ],
      { env: { GW_BASE_URL: sim.env.GW_BASE_URL } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const h = sim.requests.at(-1)?.headers ?? {};
    expect([h.authorization, h['user-agent']]).toEqual([`Bearer ${sim.env.GW_TOKEN}`, 'probe/9']);
  });

  it('values show as Name: …last4 in --verbose, config list and get; doctor lists names only', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const set = await spawnGw(['config', 'set', 'headers.X-Api-Key', '-'], { env, stdin: `${SECRET}\n` });
    expect(set.exitCode, set.stderr).toBe(0);
    expect(set.stderr).toContain('X-Api-Key: …7a1f saved');
    const v = await runGw(['--verbose', '-H', 'X-Route: blue-route-1', 'models'], { env });
    expect(v.exitCode, v.stderr).toBe(0);
    expect(v.stderr).toContain('X-Api-Key: …7a1f');
    expect(v.stderr).toContain('X-Route: …te-1');
    const list = await runGw(['--json', 'config', 'list'], { env });
    const get = await runGw(['config', 'get', 'headers.x-api-key'], { env });
    const doctor = await runGw(['--json', 'doctor', '-H', 'X-Route: blue-route-1'], { env });
    for (const out of [v, list, get, doctor]) expect(out.stdout + out.stderr).not.toContain(SECRET);
    expect(JSON.parse(list.stdout).profiles[0].headers).toEqual(['X-Api-Key: …7a1f']);
    expect(get.stdout.trim()).toBe('…7a1f');
    expect(JSON.parse(doctor.stdout).headers).toEqual([
      { name: 'X-Api-Key', source: 'profile' },
      { name: 'X-Route', source: 'flag' },
    ]);
    expect(sim.requests.at(-1)?.headers['x-api-key']).toBe(SECRET);
  });

  it('a credential header echoed by the gateway is masked like the token', async () => {
    const sim = await useSim();
    // The simulator's 404 names the model it was asked for: ask for one spelled like the header's value.
    const r = await runGw(['chat', '-m', SECRET, 'hi'], {
      env: { ...sim.env, GW_HEADERS: `X-Api-Key: ${SECRET}` },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('…7a1f');
    expect(r.stderr).not.toContain(SECRET);
  });
});
