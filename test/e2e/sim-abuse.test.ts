import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REQUEST_BODIES_KEPT, REQUEST_LOG_LIMIT, keepRequestLogBounded } from '../../src/sim/limits.js';
import type { LoggedRequest } from '../../src/sim/server.js';
import { GW_BIN, assertNoStackTrace, runGw, spawnGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

/** Issue 13 class 7: `gw sim` under abuse stays up and bounded, and starts/stops cleanly. */

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function tmp(): string {
  const d = tempDir('gw-sim-abuse-');
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function takenPort(): Promise<number> {
  const s: Server = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => s.close(() => r())));
  return (s.address() as AddressInfo).port;
}

/** Starts `gw sim` and resolves once it printed `ready`, with its output so far and a way to stop it. */
function startGwSim(args: string[]): Promise<{
  out: () => string;
  exited: Promise<{ code: number | null; err: string }>;
  kill: (s: NodeJS.Signals) => void;
}> {
  const child = spawn(process.execPath, [GW_BIN, 'sim', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; err: string }>((r) =>
    child.on('close', (code) => r({ code, err })),
  );
  cleanups.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      if (out.includes('ready')) resolve({ out: () => out, exited, kill: (s) => child.kill(s) });
    });
    void exited.then(({ code }) => reject(new Error(`gw sim exited ${code}: ${err}`)));
  });
}

describe('gw sim: start and stop', () => {
  it('a port already in use is exit 1 with a clear message (and the process ends)', async () => {
    const port = await takenPort();
    const r = await spawnGw(['sim', '--port', String(port)]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`error: address_in_use: the gateway port 127.0.0.1:${port} is already in use`);
    expect(r.stderr).toMatch(/hint: .*--port 0/);
  });

  it('a host that is no address of this machine is exit 2 naming it', async () => {
    const r = await runGw(['sim', '--host', '999.1.1.1', '--port', '0']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('host: cannot listen on 999.1.1.1');
  });

  it('reads host and port from --config; a --port flag still wins', async () => {
    const d = tmp();
    const free = await takenPort().then(async (p) => {
      await cleanups.pop()?.(); // free it again: the config names it
      return p;
    });
    const file = join(d, 'sim.json');
    writeFileSync(file, JSON.stringify({ host: '127.0.0.1', port: free }));
    const a = await startGwSim(['--config', file]);
    expect(a.out()).toContain(`listening on http://127.0.0.1:${free} `);
    a.kill('SIGTERM');
    expect((await a.exited).code).toBe(0);
    const b = await startGwSim(['--config', file, '--port', '0']);
    expect(b.out()).not.toContain(`:${free} `);
    b.kill('SIGTERM');
    await b.exited;
  });

  it('an unknown fault kind (or a bad port) in --config is exit 2 naming the field', async () => {
    const d = tmp();
    const file = join(d, 'sim.json');
    writeFileSync(file, JSON.stringify({ faults: [{ route: '*', kind: 'explode' }], port: 'x' }));
    const r = await runGw(['sim', '--config', file]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('faults[0].kind: "explode" is not a fault kind');
    expect(r.stderr).toContain('port: must be an integer port number');
    writeFileSync(file, '{"faults": [');
    const j = await runGw(['sim', '--config', file]);
    expect(j.exitCode).toBe(2);
    expect(j.stderr).toContain(`--config: "${file}" is not valid JSON`);
  });

  it('SIGTERM stops it even with an idle keep-alive connection open', async () => {
    const s = await startGwSim(['--port', '0']);
    const base = /listening on (http:\/\/\S+)/.exec(s.out())?.[1] as string;
    // One request on a keep-alive socket, then the socket stays open and idle.
    await new Promise<void>((resolve, reject) => {
      const req = request(`${base}/v1/models`, { agent: new Agent({ keepAlive: true }) });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end();
    });
    s.kill('SIGTERM');
    const { code, err } = await s.exited;
    expect(code).toBe(0);
    assertNoStackTrace({ stdout: '', stderr: err, exitCode: 0 });
  });
});

describe('gw sim: bounded under abuse', () => {
  it('refuses an absurd image n with 400 (and a body past the limit with 413), and keeps serving', async () => {
    const sim = await useSim();
    const post = (body: string): Promise<Response> =>
      fetch(`${sim.baseUrl}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sim.env.GW_TOKEN}`, 'content-type': 'application/json' },
        body,
      });
    const r = await post(JSON.stringify({ model: 'image-gen-1', prompt: 'x', n: 1_000_000 }));
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('n: must be an integer from 1 to 10');
    const big = await post(`{"model":"image-gen-1","prompt":"${'a'.repeat(65 * 1024 * 1024)}"}`).catch(
      (e: unknown) => e,
    );
    if (big instanceof Response) expect(big.status).toBe(413);
    const ok = await post(JSON.stringify({ model: 'image-gen-1', prompt: 'x', n: 2 }));
    expect(ok.status).toBe(200);
  });

  it('forgets old requests: bodies only for the newest, at most 2 x the log limit entries', () => {
    const log: LoggedRequest[] = [];
    for (let i = 0; i < 3 * REQUEST_LOG_LIMIT; i++) {
      log.push({ method: 'POST', path: '/x', query: '', headers: {}, body: { i }, requestId: String(i) });
      keepRequestLogBounded(log);
    }
    expect(log.length).toBeLessThanOrEqual(2 * REQUEST_LOG_LIMIT);
    expect(log.at(-1)?.body).toEqual({ i: 3 * REQUEST_LOG_LIMIT - 1 });
    expect(log.filter((e) => e.body !== undefined).length).toBe(REQUEST_BODIES_KEPT);
  });
});
