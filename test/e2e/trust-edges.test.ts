import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBash, runGw, spawnGw } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';
import { useSim } from '../helpers/sim.js';

/**
 * Issue 13, classes 1-3 and 6-8: created things are never lost, files at the final path are always the right
 * bytes, ordinary conditions are coded errors (never a stack trace: every run passes assertNoStackTrace), secrets
 * and the terminal are safe. The real bin/gw runs against gw sim.
 */

const roots: string[] = [];
function tmp(): string {
  const d = tempDir('gw-edges-');
  roots.push(d);
  return d;
}
afterAll(async () => {
  const { rmSync } = await import('node:fs');
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const ASSET_M = ['-m', 'gamma-video-2-0'];

describe('class 1: a created thing is never lost', () => {
  it('with an unwritable journal, every create still prints its id (and --json carries it), warns, exits 0', async () => {
    const sim = await useSim();
    const d = tmp();
    const stateFile = join(d, 'state-is-a-file');
    writeFileSync(stateFile, 'x');
    const env = { ...sim.env, GW_STATE_DIR: stateFile };
    const runs: Array<[string[], RegExp]> = [
      [['video', 'create', 'fox', '-m', 'vid-2.7-t2v'], /^video_\w+$/],
      [['beta', 'task', 'create', 'a kite', '-m', 'gamma-video-2-0'], /^cgt-\S+$/],
      [['beta', 'asset', 'group', 'create', '--name', 'refs', ...ASSET_M], /^group-\S+$/],
    ];
    for (const [argv, id] of runs) {
      const r = await runGw(argv, { env });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout.trim()).toMatch(id);
      expect(r.stderr).toContain(`${r.stdout.trim()} was created, but the journal could not be written`);
      const j = await runGw(['--json', ...argv], { env });
      expect(j.exitCode, j.stderr).toBe(0);
      expect(JSON.stringify(JSON.parse(j.stdout))).toMatch(/"(video_id|id|Id)":"[^"]+"/);
    }
    const group = (
      await runGw(['beta', 'asset', 'group', 'create', '--name', 'g', ...ASSET_M], { env })
    ).stdout.trim();
    const a = await runGw(
      ['beta', 'asset', 'create', '--group', group, '--url', 'https://example.com/a.png', ...ASSET_M],
      { env },
    );
    expect(a.exitCode, a.stderr).toBe(0);
    expect(a.stdout).toMatch(/asset-\S+/);
    expect(a.stderr).toMatch(/was created, but the journal could not be written/);
    const up = await runGw(
      ['beta', 'asset', 'upload', '--group', group, '--url', 'https://example.com/b.png', ...ASSET_M],
      { env },
    );
    expect(up.exitCode, up.stderr).toBe(0);
    expect(up.stdout).toMatch(/^asset:\/\/asset-\S+$/m);
  });

  it('an output path that cannot be written is refused before anything is created (exit 2, nothing sent)', async () => {
    const sim = await useSim();
    const d = tmp();
    writeFileSync(join(d, 'file'), 'x');
    const cases: string[][] = [
      ['video', 'create', 'fox', '-m', 'vid-2.7-t2v', '--download', join(d, 'missing', 'v.mp4')],
      ['video', 'create', 'fox', '-m', 'vid-2.7-t2v', '--download', join(d, 'file', 'v.mp4')],
      ['video', 'create', 'fox', '-m', 'vid-2.7-t2v', '--download', ''],
      ['beta', 'task', 'create', 'kite', '-m', 'gamma-video-2-0', '--download', join(d, 'missing', 'v.mp4')],
      ['image', 'generate', 'a cat', '-m', 'image-gen-1', '--out', join(d, 'file', 'imgs')],
    ];
    for (const argv of cases) {
      const r = await runGw(argv, { env: sim.env });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/missing|not a directory|empty/);
    }
    expect(sim.requests.filter((q) => q.method === 'POST')).toEqual([]);
  });
});

describe('class 2: output paths of downloads', () => {
  it('-o dir/ and -o existing-dir save <id>.mp4 inside; -o "" and a missing parent are exit 2 before any request', async () => {
    const sim = await useSim();
    const d = tmp();
    const id = (
      await runGw(['video', 'create', 'fox', '-m', 'vid-2.7-t2v', '--wait'], { env: sim.env })
    ).stdout.trim();
    const a = await runGw(['video', 'download', id, '-o', `${d}/`], { env: sim.env });
    expect(a.exitCode, a.stderr).toBe(0);
    expect(a.stdout.trim()).toBe(join(d, `${id}.mp4`));
    const sub = join(d, 'sub');
    mkdirSync(sub);
    const b = await runGw(['video', 'download', id, '-o', sub], { env: sim.env });
    expect(b.exitCode, b.stderr).toBe(0);
    expect(readdirSync(sub)).toEqual([`${id}.mp4`]);
    const c = await runGw(['video', 'create', 'cat', '-m', 'vid-2.7-t2v', '--download', `${sub}/`], {
      env: sim.env,
    });
    expect(c.exitCode, c.stderr).toBe(0);
    expect(readdirSync(sub).sort()).toEqual([`${c.stdout.trim()}.mp4`, `${id}.mp4`].sort());
    const before = sim.requests.length;
    const e = await runGw(['video', 'download', id, '-o', ''], { env: sim.env });
    expect(e.exitCode).toBe(2);
    expect(e.stderr).toMatch(/output: the path is empty/);
    const m = await runGw(['video', 'download', id, '-o', join(d, 'nope', 'x.mp4')], { env: sim.env });
    expect(m.exitCode).toBe(2);
    expect(m.stderr).toContain(join(d, 'nope'));
    expect(sim.requests.length).toBe(before);
  });

  it('a .part left by another video is never resumed into this one', async () => {
    const sim = await useSim({ videoBytes: 200_000 });
    const d = tmp();
    const id = (
      await runGw(['video', 'create', 'fox', '-m', 'vid-2.7-t2v', '--wait'], { env: sim.env })
    ).stdout.trim();
    const other = (
      await runGw(['video', 'create', 'cat', '-m', 'vid-2.7-t2v', '--wait'], { env: sim.env })
    ).stdout.trim();
    sim.sim.addFault({ route: 'GET /cdn', kind: 'drop', after: 50_000, times: 1 });
    const first = await runGw(['video', 'download', other, '-o', 'v.mp4'], { env: sim.env, cwd: d });
    expect(first.exitCode).toBe(1);
    expect(existsSync(join(d, 'v.mp4.part'))).toBe(true);
    const r = await runGw(['--json', 'video', 'download', id, '-o', 'v.mp4'], { env: sim.env, cwd: d });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(sim.sim.cdn.requests.at(-1)?.range).toBeUndefined();
    expect(JSON.parse(r.stdout)).toMatchObject({ bytes: 200_000 });
  });
});

describe('class 2: one writer per .part', () => {
  it('a second gw process downloading to the same file exits 1 (download_locked); Ctrl-C of the first releases the lock (real processes)', async () => {
    const sim = await useSim({ videoBytes: 2_000_000 });
    const d = tmp();
    const id = (
      await runGw(['video', 'create', 'fox', '-m', 'vid-2.7-t2v', '--wait'], { env: sim.env })
    ).stdout.trim();
    // The CDN sends half the file, then stalls: the first download holds the lock meanwhile.
    sim.sim.addFault({ route: 'GET /cdn', kind: 'slow', ms: 60_000, times: 1 });
    const lock = join(d, 'v.mp4.part.lock');
    const first = spawnGw(['video', 'download', id, '-o', 'v.mp4'], {
      env: sim.env,
      cwd: d,
      onSpawn: (child) => {
        const t = setInterval(() => {
          if (!existsSync(lock)) return;
          clearInterval(t);
          void spawnGw(['video', 'download', id, '-o', 'v.mp4'], { env: sim.env, cwd: d }).then((second) => {
            expect(second.exitCode).toBe(1);
            expect(second.stderr).toMatch(
              /download_locked: another gw process \(pid \d+\) is downloading to v\.mp4/,
            );
            child.kill('SIGINT');
          });
        }, 20);
      },
    });
    const r = await first;
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toContain('v.mp4.part');
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(join(d, 'v.mp4'))).toBe(false);
    // The kept part resumes (same video, same ETag) to the full file.
    const again = await runGw(['--json', 'video', 'download', id, '-o', 'v.mp4'], { env: sim.env, cwd: d });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ bytes: 2_000_000 });
    expect(sim.sim.cdn.requests.at(-1)?.range).toMatch(/^bytes=\d+-$/);
  });
});

describe('class 3: ordinary conditions are coded errors, never a stack trace', () => {
  it('--help and completion piped into head end quietly', async () => {
    // `true` reads nothing and exits at once: gw's write meets a closed pipe (EPIPE).
    const r = await runBash(
      'gw --help | true; gw completion bash | true; gw video --help | true; gw --help | head -c 1',
      {
        strict: true,
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('a damaged config.json is exit 3 naming the file', async () => {
    const d = tmp();
    for (const text of ['{"profiles": ', '[1,2]', '{"profiles": 5}', 'null']) {
      writeFileSync(join(d, 'config.json'), text);
      const r = await runGw(['models'], { env: { GW_CONFIG_DIR: d, GW_TOKEN: 'sk-x-123456' } });
      expect(r.exitCode, text).toBe(3);
      expect(r.stderr).toContain(join(d, 'config.json'));
      expect(r.stderr).toMatch(/damaged/);
      const s = await runGw(['config', 'set', 'baseUrl', 'http://127.0.0.1:1'], {
        env: { GW_CONFIG_DIR: d },
      });
      expect(s.exitCode, text).toBe(3);
      expect(s.stderr).toContain(join(d, 'config.json'));
    }
  });

  it('a profile value of the wrong type is exit 3 naming the profile and the field, never an internal error', async () => {
    const d = tmp();
    const cases: [unknown, string][] = [
      [{ profiles: { default: { token: true } } }, 'profile "default": "token" is not a string'],
      [{ profiles: { default: { baseUrl: 5 } } }, 'profile "default": "baseUrl" is not a string'],
      [{ profiles: { default: { defaults: 'x' } } }, 'profile "default": "defaults" is not an object'],
      [{ profiles: { ci: { probe: { models: 'a,b' } } } }, 'profile "ci": "probe.models" is not an array'],
      [{ current: 1 }, '"current" is not a string'],
      [{ profiles: { ci: [] } }, 'profile "ci" is not an object'],
    ];
    for (const [doc, message] of cases) {
      writeFileSync(join(d, 'config.json'), JSON.stringify(doc));
      for (const argv of [['models'], ['chat', 'hi', '-m', 'chat-3.7-plus'], ['config', 'list']]) {
        const r = await runGw(argv, { env: { GW_CONFIG_DIR: d, GW_BASE_URL: 'http://127.0.0.1:1' } });
        expect(r.exitCode, `${JSON.stringify(doc)} ${argv.join(' ')}`).toBe(3);
        expect(r.stderr).toContain(`the configuration file ${join(d, 'config.json')} is damaged: ${message}`);
      }
    }
  });

  it('a journal line that is JSON but not an entry is skipped with a warning', async () => {
    const sim = await useSim();
    const d = tmp();
    const id = (
      await runGw(['video', 'create', 'fox', '-m', 'vid-2.7-t2v'], { env: { ...sim.env, GW_STATE_DIR: d } })
    ).stdout.trim();
    const path = join(d, 'journal.jsonl');
    writeFileSync(path, `null\n5\n[1]\n"x"\n{"op":"create"}\n${readFileSync(path, 'utf8')}`);
    const r = await runGw(['history'], { env: { ...sim.env, GW_STATE_DIR: d } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(id);
    expect(r.stderr).toMatch(/line 1 is not a journal entry; skipped/);
  });
});

describe('class 6 and 8: tokens and header values', () => {
  it('a token with CR/LF is exit 3 naming the cause, with no request sent', async () => {
    const sim = await useSim();
    const r = await runGw(['models'], { env: { ...sim.env, GW_TOKEN: `${sim.env.GW_TOKEN}\r\n` } });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/GW_TOKEN contains a line break \(CR\/LF\)/);
    expect(r.stderr).not.toContain(sim.env.GW_TOKEN);
    expect(sim.requests).toEqual([]);
  });

  it('--thinking below the minimum and --compat-version with CR/LF are exit 2, nothing sent', async () => {
    const sim = await useSim();
    const base = ['messages', '-m', 'chat-3.7-plus', '--max-tokens', '4096'];
    const t = await runGw([...base, '--thinking', '10', 'x'], { env: sim.env });
    expect(t.exitCode).toBe(2);
    expect(t.stderr).toMatch(/thinking: 10 is out of range; the budget must be at least 1024/);
    const c = await runGw([...base, '--compat-version', '2023\r\nX-Evil: 1', 'x'], { env: sim.env });
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toMatch(/--compat-version: the value contains a line break/);
    expect(sim.requests).toEqual([]);
  });
});

describe('class 8: an empty id is bad input, not a request to another route', () => {
  it('get, wait and download of "" (an unset shell variable) are exit 2 naming the argument, nothing sent', async () => {
    const sim = await useSim();
    const cases: Array<[string[], string]> = [
      [['video', 'get', ''], 'video_id'],
      [['video', 'wait', ' '], 'video_id'],
      [['video', 'download', '', '-o', join(tmp(), 'v.mp4')], 'video_id'],
      [['beta', 'task', 'get', ''], 'task_id'],
      [['beta', 'task', 'wait', ''], 'task_id'],
      [['beta', 'asset', 'get', ''], 'asset_id'],
    ];
    for (const [argv, field] of cases) {
      const r = await runGw([...argv, '--json'], { env: sim.env });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
      expect(JSON.parse(r.stderr)).toMatchObject({
        error: { code: 'invalid_input', message: `${field}: must not be empty`, param: field },
      });
    }
    expect(sim.requests).toEqual([]);
  });
});

describe('a bad flag value is named as the user typed it', () => {
  it('every command names the flag with its dashes, in the message and in --json param, and sends nothing', async () => {
    const sim = await useSim();
    const d = tmp();
    const cases: Array<[string[], string]> = [
      [['models', '--timeout', '0s'], '--timeout'],
      [['video', 'wait', 'video_x', '--interval', '0'], '--interval'],
      [['video', 'wait', 'video_a', 'video_b', '--download', join(d, 'x.mp4')], '--download'],
      [['probe', '--kind', 'chat'], '--kind'],
      [['probe', '--every', '0s'], '--every'],
      [['probe', '--all-models', '--model-timeout', 'soon'], '--model-timeout'],
      [['probe', '--slo', 'speed<1s'], '--slo'],
      [['probe', '--every', '1m', '--metrics-port', '70000'], '--metrics-port'],
      [['probe', 'history', '--since', '5q'], '--since'],
      [['history', '--limit', 'ten'], '--limit'],
      [['sim', '--port', '99999'], '--port'],
      [['batch', 'run', join(d, 'in.jsonl'), '--out', join(d, 'out'), '--shard', '3/2'], '--shard'],
      [['load', '-m', 'chat-3.7-plus', '--rate', '0'], '--rate'],
    ];
    for (const [argv, flag] of cases) {
      const r = await runGw([...argv, '--json'], { env: { ...sim.env, GW_STATE_DIR: join(d, 'state') } });
      expect(r.exitCode, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
      const e = (JSON.parse(r.stderr) as { error: { message: string; param?: string } }).error;
      expect(e.message.startsWith(`${flag}: `), `${argv.join(' ')}: ${e.message}`).toBe(true);
      expect(e.param, argv.join(' ')).toBe(flag);
    }
    expect(sim.requests).toEqual([]);
  });
});

describe('class 6: gateway text cannot drive the terminal; an echoed token never shows', () => {
  const TOKEN = 'sk-te"st\\tok-9876';
  let server: Server | undefined;
  afterAll(() => server?.close());

  async function hostile(mode: { fail: boolean }): Promise<string> {
    server = createServer((req, res) => {
      const auth = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-gateway-request-id', 'req-1');
      if (mode.fail) {
        res.statusCode = 400;
        res.end(
          JSON.stringify({
            error: {
              message: `bad token ${auth} \x1b]0;pwned\x07\x1b[2J`,
              code: 'bad\x1b[5mcode',
              type: 'x',
            },
          }),
        );
        return;
      }
      res.end(
        JSON.stringify({
          object: 'list',
          data: [{ id: 'evil\x1b[2J\x1b[Hmodel', object: 'model', owned_by: 'x' }],
        }),
      );
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    return `http://127.0.0.1:${port}`;
  }

  it('model ids, error messages and codes are printed with ESC made visible', async () => {
    const base = await hostile({ fail: false });
    const r = await runGw(['models'], { env: { GW_BASE_URL: base, GW_TOKEN: TOKEN } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stdout).toContain('evil\\x1b[2J');
    server?.close();
    const base2 = await hostile({ fail: true });
    const e = await runGw(['models'], { env: { GW_BASE_URL: base2, GW_TOKEN: TOKEN } });
    expect(e.exitCode).toBe(1);
    expect(e.stderr).not.toContain('\x1b');
    expect(e.stderr).not.toContain('\x07');
    expect(e.stderr).toContain('\\x1b]0;pwned');
    expect(e.stderr).not.toContain('te"st');
    const j = await runGw(['--json', 'models'], { env: { GW_BASE_URL: base2, GW_TOKEN: TOKEN } });
    expect(j.exitCode).toBe(1);
    // The token echoed by the gateway and re-serialised into JSON (`te\"st\\tok`) is masked too.
    expect(j.stderr).not.toContain(JSON.stringify(TOKEN).slice(1, -1));
    expect(j.stderr).not.toContain('te"st');
    expect(j.stderr).not.toContain('\x1b');
    expect(() => JSON.parse(j.stderr) as unknown).not.toThrow();
  });
});
