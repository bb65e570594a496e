import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { assertNoStackTrace, GW_BIN, isolatedDirs, runBash, runGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';
import { useSim } from '../helpers/sim.js';

/** Issue 13 class 4: local inputs, list walks and waits are bounded whatever the other side does. */

const dir = tempDir('gw-bounds-e2e-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let server: Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (s) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const ENV = { GW_BASE_URL: 'http://127.0.0.1:9', GW_TOKEN: 'sk-test-123456' };

describe('local inputs are read within a limit (exit 2, nothing sent)', () => {
  it('/dev/zero as --image, --body, --file or standard input, and a 450 MB image', async () => {
    const big = join(dir, 'big.png');
    writeFileSync(big, '');
    truncateSync(big, 450 * 1024 * 1024);
    const cases: Array<[string[], RegExp, string?]> = [
      [
        ['alpha', 'i2v', '--image', '/dev/zero', '--prompt', 'x'],
        /--image: "\/dev\/zero" is larger than the limit; the limit is 32 MiB/,
      ],
      [['alpha', 'i2v', '--image', big], /--image: ".*big.png" is 450 MiB; the limit is 32 MiB/],
      [
        ['alpha', 'i2v', '--body', '/dev/zero'],
        /--body: "\/dev\/zero" is larger than the limit; the limit is 64 MiB/,
      ],
      [
        ['beta', 'task', 'create', 'x', '-m', 'gamma-video-2-0', '--body', '/dev/zero'],
        /the limit is 64 MiB/,
      ],
      [['embed', '-m', 'embed-1', '--file', '/dev/zero'], /the limit is 16 MiB/],
    ];
    for (const [argv, msg] of cases) {
      const r = await runGw(argv, { env: ENV });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr).not.toMatch(/Invalid string length|heap/);
    }
  });

  it('/dev/zero as --prompts, --ca-file, sim --config, load reports and standard input: exit 2 naming the flag and limit', async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['load', '-m', 'chat-1', '--requests', '1', '--prompts', '/dev/zero'],
        /--prompts: "\/dev\/zero" is larger than the limit; the limit is 64 MiB/,
      ],
      [
        [
          'load',
          '-m',
          'clip-1.1-t2v',
          '--api',
          'video',
          '--requests',
          '1',
          '--budget',
          '100CNY',
          '--prompts',
          '/dev/zero',
        ],
        /--prompts: "\/dev\/zero" is larger than the limit; the limit is 64 MiB/,
      ],
      [
        ['--ca-file', '/dev/zero', 'models'],
        /--ca-file: "\/dev\/zero" is larger than the limit; the limit is 32 MiB/,
      ],
      [
        ['sim', '--config', '/dev/zero'],
        /--config: "\/dev\/zero" is larger than the limit; the limit is 32 MiB/,
      ],
      [['load', 'compare', '/dev/zero', '/dev/zero'], /<base\.json>: "\/dev\/zero" is larger than the limit/],
      [
        ['load', 'merge', '/dev/zero'],
        /run\.json: "\/dev\/zero" is larger than the limit; the limit is 64 MiB/,
      ],
    ];
    for (const [argv, msg] of cases) {
      const r = await runGw(argv, { env: ENV });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    const out = join(dir, 'zero-batch');
    const stdin = [
      ['batch', 'run', '-', '--out', out],
      ['chat', '-m', 'chat-1', '-'],
    ];
    const msgs = [
      /standard input \(gw batch run -\): line 1 is longer than the limit of 64 MiB/,
      /standard input is larger than the limit of 16 MiB/,
    ];
    for (const [i, argv] of stdin.entries()) {
      const r = await runBash(`gw ${argv.join(' ')} < /dev/zero`, { env: { ...isolatedDirs(), ...ENV } });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msgs[i] as RegExp);
    }
    // The partial copy of standard input is not left behind; an ordinary one is read whole.
    expect(existsSync(join(out, 'input.jsonl'))).toBe(false);
    const line = {
      custom_id: 'a',
      method: 'POST',
      url: '/v1/embeddings',
      body: { model: 'embed-1', input: ['x'] },
    };
    const ok = await runGw(['batch', 'run', '-', '--out', out, '--dry-run'], {
      env: ENV,
      stdin: `${JSON.stringify(line)}\n`,
    });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^\/v1\/embeddings\tembed-1\t1\t/m);
  });

  it('Ctrl-C while standard input sends nothing (batch run -, chat -): exit 130', async () => {
    for (const argv of [
      ['batch', 'run', '-', '--out', join(dir, 'silent-batch')],
      ['chat', '-m', 'chat-1', '-'],
    ]) {
      const ac = new AbortController();
      // A standard input that never sends: Ctrl-C comes as soon as gw starts waiting on it.
      const stdin = new Readable({ read: () => ac.abort() });
      const r = await runGw(argv, { env: ENV, stdin, signal: ac.signal });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(130);
    }
  });

  it.runIf(existsSync('/usr/bin/time'))(
    'reading /dev/zero as --body peaks under 200 MB of memory',
    async () => {
      const { execFile } = await import('node:child_process');
      const peakKb = await new Promise<number>((resolve) => {
        execFile(
          '/usr/bin/time',
          ['-f', 'peak-kb %M', process.execPath, GW_BIN, 'alpha', 'i2v', '--body', '/dev/zero'],
          { env: { PATH: process.env.PATH, ...isolatedDirs(), ...ENV } },
          (_e, _out, err) => resolve(Number(/peak-kb (\d+)/.exec(err)?.[1] ?? 'NaN')),
        );
      });
      expect(peakKb).toBeGreaterThan(0);
      expect(peakKb).toBeLessThan(200_000);
    },
  );

  it('Ctrl-C while reading a pipe that never sends: exit 130 (the read does not hold the process)', async () => {
    const fifo = join(dir, 'silent.fifo');
    execFileSync('mkfifo', [fifo]);
    // A writer that stays open and silent (read-write so opening does not wait for a reader).
    const writer = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [GW_BIN, 'alpha', 'i2v', '--image', fifo, '--prompt', 'x'], {
          env: { PATH: process.env.PATH, ...isolatedDirs(), ...ENV },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let err = '';
        child.stderr.on('data', (c: Buffer) => (err += c.toString()));
        setTimeout(() => child.kill('SIGINT'), 1500);
        child.on('close', (c, sig) => {
          assertNoStackTrace({ stdout: '', stderr: err, exitCode: c ?? 1 });
          resolve(c ?? (sig === 'SIGINT' ? 130 : null));
        });
      });
      expect(code).toBe(130);
    } finally {
      closeSync(writer);
    }
  });
});

describe('list --all ends whatever the server answers', () => {
  async function lister(page: (n: number) => { items: unknown[]; total: number }): Promise<string> {
    server = createServer((req, res) => {
      const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page_num') ?? '1');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(page(n)));
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const task = (id: string): Record<string, unknown> => ({ id, status: 'running', model: 'm' });

  it('a server ignoring the page number (the same full page for ever) ends after one repeat', async () => {
    const base = await lister(() => ({ items: [task('a'), task('b')], total: 1_000_000_000 }));
    const r = await runGw(['--json', 'beta', 'task', 'list', '--all', '--page-size', '2'], {
      env: { ...ENV, GW_BASE_URL: base },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).items).toHaveLength(2);
  });

  it('a total that grows with every page stops at the total first stated', async () => {
    const base = await lister((n) => ({ items: [task(`t${n}a`), task(`t${n}b`)], total: 4 + n * 2 }));
    const r = await runGw(['--json', 'beta', 'task', 'list', '--all', '--page-size', '2'], {
      env: { ...ENV, GW_BASE_URL: base },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).items).toHaveLength(6);
  });
});

describe('waits: zero limits refused', () => {
  it('--timeout 0 and --interval 0 are exit 2 before any request', async () => {
    const sim = await useSim();
    for (const argv of [
      ['video', 'wait', 'video_1', '--interval', '0'],
      ['video', 'wait', 'video_1', '--timeout', '0'],
      ['--timeout', '0s', 'models'],
    ]) {
      const r = await runGw(argv, { env: sim.env });
      expect(r.exitCode, argv.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/must be more than zero/);
    }
    expect(sim.requests).toEqual([]);
  });
});
