/**
 * W3C trace context on every gateway request: one command of each family runs as the real bin/gw against the
 * simulator, and the simulator's log shows, per command, a valid `traceparent` on every request, one trace id for
 * the whole command (a new one for the next command), a new span id per request; the file origin of result URLs
 * (reached by redirect or by absolute URL) never sees the header; `--verbose` prints the trace id.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { GW_BIN, isolatedDirs, spawnGw } from '../helpers/gw.js';
import { makePng } from '../helpers/images.js';
import { INSTANT, useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe('traceparent on every gateway request', () => {
  it('one trace per command, a span per request, in every family, never to the file origin', async () => {
    const sim = await useSim({ timings: INSTANT });
    const d = tempDir('gw-trace-');
    const png = join(d, 'cat.png');
    writeFileSync(png, makePng(64, 64));
    const batchIn = join(d, 'jobs.jsonl');
    const chat = (id: string): string =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'chat-3.7-plus', messages: [{ role: 'user', content: id }] },
      });
    writeFileSync(batchIn, `${chat('a')}\n${chat('b')}\n${chat('c')}\n`);
    mkdirSync(join(d, 'dl'));
    const families: Array<[string, string[]]> = [
      ['text', ['chat', '-m', 'chat-3.7-plus', 'hello']],
      [
        'video',
        [
          'video',
          'create',
          'a fox',
          '-m',
          'clip-1.1-t2v',
          '--seconds',
          '5',
          '--download',
          join(d, 'dl', 'f.mp4'),
        ],
      ],
      ['alpha', ['alpha', 'i2v', '--image', png, '--prompt', 'a cat turns']],
      [
        'beta task',
        ['beta', 'task', 'create', 'waves', '-m', 'gamma-video-2-0-fast', '--download', join(d, 'w.mp4')],
      ],
      ['beta asset', ['beta', 'asset', 'group', 'create', '--name', 'refs', '-m', 'gamma-video-2-0']],
      ['load', ['load', '-m', 'chat-3.7-plus', '--concurrency', '2', '--requests', '6']],
      ['batch', ['batch', 'run', batchIn, '--out', join(d, 'batch')]],
      ['probe', ['--verbose', 'probe', '--only', 'models,chat,chat-stream', '--no-history']],
    ];
    const traces = new Set<string>();
    for (const [family, argv] of families) {
      const before = sim.requests.length;
      const r = await spawnGw(argv, { env: sim.env, cwd: d });
      expect(r.exitCode, `${family}: ${r.stderr}`).toBe(0);
      const sent = sim.requests.slice(before);
      expect(sent.length, family).toBeGreaterThan(family === 'load' ? 5 : 0);
      const ids = sent.map((q) => TRACEPARENT.exec(q.traceparent ?? ''));
      expect(
        ids.every((m) => m !== null),
        `${family}: ${sent.map((q) => q.traceparent).join(' ')}`,
      ).toBe(true);
      const traceIds = new Set(ids.map((m) => m?.[1]));
      const spanIds = new Set(ids.map((m) => m?.[2]));
      expect(traceIds.size, family).toBe(1);
      expect(spanIds.size, family).toBe(sent.length);
      const traceId = [...traceIds][0] as string;
      expect(traceId, family).not.toMatch(/^0+$/);
      expect(traces.has(traceId), `${family} reused an earlier command's trace`).toBe(false);
      traces.add(traceId);
      if (family === 'probe') expect(r.stderr).toContain(`trace id ${traceId}`);
    }
    // The downloads reached the file origin (a redirect from the gateway, a result URL): without the header.
    expect(sim.sim.cdn.requests.length).toBeGreaterThanOrEqual(2);
    expect(sim.sim.cdn.requests.map((q) => q.traceparent)).toEqual(sim.sim.cdn.requests.map(() => undefined));
    // Eight commands one after another: the limit is for a machine busy with other suites.
  }, 180_000);

  it('gw sim --log prints each request with its traceparent, whose trace is the one gw --verbose printed', async () => {
    const child = spawn(process.execPath, [GW_BIN, 'sim', '--port', '0', '--log'], {
      env: { PATH: process.env.PATH, NO_COLOR: '1', ...isolatedDirs() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((r) => child.once('exit', r));
    let out = '';
    // Resolves once the simulator's stdout matches `re` (its banner, then its log lines).
    const printed = (re: RegExp): Promise<RegExpExecArray> =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const m = re.exec(out);
          if (m === null) return;
          child.stdout.off('data', check);
          resolve(m);
        };
        child.stdout.on('data', check);
        child.once('exit', (code) => reject(new Error(`gw sim exited ${code}: ${out}`)));
        check();
      });
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    try {
      const base = (await printed(/GW_BASE_URL=(\S+)/))[1] as string;
      const r = await spawnGw(['--verbose', 'models'], {
        env: { GW_BASE_URL: base, GW_TOKEN: DEFAULT_SIM_TOKEN },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const traceId = /trace id ([0-9a-f]{32})/.exec(r.stderr)?.[1];
      expect(traceId, r.stderr).toBeDefined();
      const line = await printed(
        /^GET \/v1\/models 200 req-sim-\S+ traceparent (00-[0-9a-f]{32}-[0-9a-f]{16}-01)$/m,
      );
      expect(line[1]).toMatch(new RegExp(`^00-${traceId}-`));
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 60_000);
});
