/**
 * `gw batch` tried as an attacker would (issue 27's batch items, issue 29's batch items): one writer per batch
 * directory, files read back that were torn or tampered with, downloads that must not splice two tasks, billed
 * tasks that must not be billed again, merges that trust nothing. Against gw sim, in-process through main() except
 * where another process is the point (a lock held by a live process). No test relies on timing: a run held open
 * is held by a simulator fault, and the test acts once the state log shows the point it waits for.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimHandle } from '../../src/sim/server.js';
import {
  batchSim,
  beta,
  chat,
  createsByPrompt,
  gw,
  jsonl,
  TOKEN,
  untilState,
  video,
  writeInput,
} from '../helpers/batch.js';
import { isolatedDirs, spawnGw } from '../helpers/gw.js';
import { closeAfterTest } from '../helpers/servers.js';
import { tempDir } from '../helpers/tmp.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

type Sim = SimHandle & { env: Record<string, string> };

/** A process that runs until killed (a live holder of a lock). */
async function liveProcess(): Promise<ChildProcess & { pid: number }> {
  const c = spawn('sleep', ['600'], { stdio: 'ignore' });
  children.push(c);
  await new Promise<void>((r) => c.once('spawn', () => r()));
  return c as ChildProcess & { pid: number };
}

function lines(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/** The bytes of a video as the simulator serves them (its content route, through the redirect). */
async function videoBytes(s: Sim, id: string): Promise<Buffer> {
  const r = await fetch(`${s.baseUrl}/v1/videos/${id}/content`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return Buffer.from(await r.arrayBuffer());
}

describe('one writer per batch directory (a lock with pid and host)', () => {
  it('a second run of a directory in use exits 1 (batch_locked) naming the process; a killed run’s lock is taken over', async () => {
    // The first run's create is held open (the answer never ends): the run holds the directory until it is killed.
    const s = await batchSim({
      faults: [{ route: 'POST /v1/chat/completions', kind: 'slow', ms: 1000, times: 1 }],
    });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const file = writeInput(d, [chat('l1')]);
    const out = join(d, 'out');
    let child: ChildProcess | undefined;
    const first = spawnGw(['batch', 'run', file, '--out', out], {
      env: { ...home, ...s.env },
      onSpawn: (c) => {
        child = c;
        children.push(c);
      },
    });
    await untilState(out, (rs) => rs.some((x) => x.e === 'send'));
    const second = await gw(['batch', 'run', file, '--out', out, '--json'], s.env, home);
    expect(second.exitCode, second.stderr).toBe(1);
    expect(JSON.parse(second.stderr)).toMatchObject({
      error: {
        code: 'batch_locked',
        message: `another gw process (pid ${child?.pid}) is working on the batch in ${out}`,
      },
    });
    const retry = await gw(['batch', 'retry', out], s.env, home);
    expect(retry.exitCode).toBe(1);
    expect(retry.stderr).toMatch(/^error: batch_locked: /);
    expect(s.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
    child?.kill('SIGKILL');
    await first;
    expect(existsSync(join(out, 'batch.lock'))).toBe(true);
    // The killed run's lock names a process that is gone: the same command takes it over.
    const third = await gw(['batch', 'run', file, '--out', out, '--json'], s.env, home);
    expect(third.exitCode, third.stderr).toBe(1);
    expect(JSON.parse(third.stdout)).toMatchObject({ in_doubt: 1 });
    expect(s.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
    expect(existsSync(join(out, 'batch.lock'))).toBe(false);
  });

  it('merge --out takes the lock too; --wait-lock waits for the holder to end, then runs', async () => {
    const s = await batchSim();
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const file = writeInput(d, [chat('w1')]);
    const part = join(d, 'part');
    expect((await gw(['batch', 'run', file, '--out', part], s.env, home)).exitCode).toBe(0);
    const holder = await liveProcess();
    const all = join(d, 'all');
    mkdirSync(all);
    writeFileSync(join(all, 'batch.lock'), `${holder.pid} ${hostname()}\n`);
    const refused = await gw(['batch', 'merge', part, '--out', all], s.env, home);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      `batch_locked: another gw process (pid ${holder.pid}) is working on the batch`,
    );
    expect(existsSync(join(all, 'results.jsonl'))).toBe(false);
    // The library's sink says when a wait begins; the wait ends when the holder does.
    const { runBatch } = await import('../../src/index.js');
    const { GatewayClient } = await import('../../src/index.js');
    const client = new GatewayClient({ baseUrl: s.baseUrl, token: TOKEN });
    writeFileSync(join(part, 'batch.lock'), `${holder.pid} ${hostname()}\n`);
    let waiting = '';
    const run = runBatch({
      input: file,
      out: part,
      client,
      waitLock: true,
      onLockWait: (h) => (waiting = h),
    });
    await expect
      .poll(() => waiting, { interval: 5, timeout: 10_000 })
      .toBe(`another gw process (pid ${holder.pid})`);
    holder.kill('SIGKILL');
    expect(await run).toMatchObject({ succeeded: 1, exit_code: 0 });
    await client.close();
    const help = await gw(['batch', 'run', '--help'], s.env, home);
    expect(help.stdout).toMatch(
      /--wait-lock +when another gw works on the same batch directory,\s+wait for it/,
    );
  });
});

describe('files read back: torn or damaged', () => {
  it('a torn result line over 1 MiB is cut, and every complete line before it is kept', async () => {
    const s = await batchSim();
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    expect(
      (await gw(['batch', 'run', writeInput(d, [chat('t1')]), '--out', out], s.env, home)).exitCode,
    ).toBe(0);
    const results = join(out, 'results.jsonl');
    const kept = readFileSync(results, 'utf8');
    // A crash in the middle of writing a 1.5 MiB answer: no newline at the end.
    appendFileSync(
      results,
      `{"id":"batch_req_x","custom_id":"t9","response":{"body":"${'x'.repeat(1536 * 1024)}`,
    );
    const r = await gw(['batch', 'run', writeInput(d, [chat('t1'), chat('t2')]), '--out', out], s.env, home);
    expect(r.exitCode, r.stderr).toBe(0);
    const text = readFileSync(results, 'utf8');
    expect(text.startsWith(kept)).toBe(true);
    expect(jsonl(results).map((x) => x.custom_id)).toEqual(['t1', 't2']);
  });

  it('a state or results line gw did not write is exit 2 naming the file and the line; a torn last line is skipped', async () => {
    const s = await batchSim();
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    expect(
      (await gw(['batch', 'run', writeInput(d, [chat('x1')]), '--out', out], s.env, home)).exitCode,
    ).toBe(0);
    const state = join(out, 'state.jsonl');
    const good = readFileSync(state, 'utf8');
    writeFileSync(state, `${good}{"e":"torn","id":`);
    expect((await gw(['batch', 'status', out, '--json'], s.env, home)).exitCode).toBe(0);
    const [first, ...rest] = good.trimEnd().split('\n');
    for (const bad of ['{"e":"send","id":5,"at":1}', 'not json', '[1,2]']) {
      writeFileSync(state, [first, bad, ...rest, ''].join('\n'));
      const r = await gw(['batch', 'status', out, '--json'], s.env, home);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(JSON.parse(r.stderr)).toMatchObject({
        error: {
          code: 'damaged_file',
          message: expect.stringMatching(new RegExp(`^${state} line 2: is not`)),
        },
      });
    }
  });
});

describe('batch downloads go through the one download path', () => {
  it('a .part of another task for the same custom_id is never continued (no splice of two videos)', async () => {
    const s = await batchSim({ videoBytes: 100_000 });
    const d = tempDir('gw-bt-');
    const out = join(d, 'out');
    mkdirSync(join(out, 'files'), { recursive: true });
    // What an earlier task of the same custom_id left: half a file, with its identity and a validator.
    writeFileSync(join(out, 'files', 'v1.mp4.part'), Buffer.alloc(40_000, 0x58));
    writeFileSync(
      join(out, 'files', 'v1.mp4.part.json'),
      JSON.stringify({ id: 'video_old', url: '/v1/videos/video_old/content', etag: '"old-100000"' }),
    );
    const r = await gw(['batch', 'run', writeInput(d, [video('v1')]), '--out', out], s.env, isolatedDirs());
    expect(r.exitCode, r.stderr).toBe(0);
    const task = (jsonl(join(out, 'results.jsonl'))[0]?.task as { id: string }).id;
    expect(readFileSync(join(out, 'files', 'v1.mp4')).equals(await videoBytes(s, task))).toBe(true);
    expect(s.sim.cdn.requests.filter((q) => q.range !== undefined)).toEqual([]);
  });

  it('a download cut leaves the task created: the same command resumes its part, nothing is created again', async () => {
    const s = await batchSim({ videoBytes: 200_000 });
    s.sim.addFault({ route: 'GET /cdn', kind: 'drop', after: 50_000, times: 1 });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    const argv = ['batch', 'run', writeInput(d, [video('v1'), chat('c1')]), '--out', out, '--json'];
    const first = await gw(argv, s.env, home);
    expect(first.exitCode).toBe(1);
    expect(JSON.parse(first.stdout)).toMatchObject({ succeeded: 1, failed: 0, unfinished: 1 });
    expect(first.stderr).toMatch(/v1: its task finished but could not be followed to its end/);
    expect(jsonl(join(out, 'errors.jsonl'))).toEqual([]);
    const st = JSON.parse((await gw(['batch', 'status', out, '--json'], s.env, home)).stdout);
    expect(st.counts).toMatchObject({ succeeded: 1, failed: 0, running: 1, unfinished: 1 });
    expect(statSync(join(out, 'files', 'v1.mp4.part')).size).toBeGreaterThanOrEqual(50_000);
    const again = await gw(argv, s.env, home);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ succeeded: 2, unfinished: 0 });
    expect(statSync(join(out, 'files', 'v1.mp4')).size).toBe(200_000);
    expect(s.sim.cdn.requests.some((q) => /^bytes=[1-9]\d*-$/.test(q.range ?? ''))).toBe(true);
    expect(createsByPrompt(s, '/v1/videos').get('prompt v1')).toBe(1);
  });

  it('tasks a resumed run follows to their end are not created again when it reads their lines', async () => {
    // 64 tasks left created (each download cut) fill what follows the creates at --concurrency 8: no line is sent
    // until one of them ends. 16 new lines before them fill the read-ahead, so their lines are read only then.
    const s = await batchSim({ videoBytes: 2000 });
    s.sim.addFault({ route: 'GET /cdn', kind: 'drop', after: 1000, times: 64 });
    const home = isolatedDirs();
    const out = join(tempDir('gw-bt-'), 'out');
    const videos = Array.from({ length: 64 }, (_, i) => video(`v${i}`));
    const first = await gw(
      ['batch', 'run', writeInput(tempDir('gw-bt-'), videos), '--out', out, '--json'],
      s.env,
      home,
    );
    expect(JSON.parse(first.stdout)).toMatchObject({ succeeded: 0, unfinished: 64 });
    const chats = Array.from({ length: 16 }, (_, i) => chat(`c${i}`));
    const file = writeInput(tempDir('gw-bt-'), [...chats, ...videos]);
    const again = await gw(['batch', 'run', file, '--out', out, '--json'], s.env, home);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ succeeded: 80, unfinished: 0 });
    // Each task created once: 64 creates in all (the simulator keeps the bodies of its newest requests only).
    expect(s.requests.filter((q) => q.method === 'POST' && q.path === '/v1/videos')).toHaveLength(64);
  });

  it('gw batch retry finishes an unfinished download too, without a second create', async () => {
    const s = await batchSim({ videoBytes: 200_000 });
    s.sim.addFault({ route: 'GET /cdn', kind: 'drop', after: 50_000, times: 1 });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    expect(
      (await gw(['batch', 'run', writeInput(d, [video('v1')]), '--out', out], s.env, home)).exitCode,
    ).toBe(1);
    const retry = await gw(['batch', 'retry', out, '--failed'], s.env, home);
    expect(retry.exitCode, retry.stderr).toBe(0);
    expect(statSync(join(out, 'files', 'v1.mp4')).size).toBe(200_000);
    expect(createsByPrompt(s, '/v1/videos').get('prompt v1')).toBe(1);
  });

  it('custom_ids are held to the file-name budget (NAME_MAX) of the files they name, before anything is sent', async () => {
    const s = await batchSim();
    const d = tempDir('gw-bt-');
    const long = 'v'.repeat(240); // files/<id>.<ext>.part.lock: 240 + 16 bytes > 255
    const wide = '狐'.repeat(80); // 240 bytes of UTF-8 in 80 characters
    const file = writeInput(d, [
      chat('a'.repeat(240)),
      { ...video('x'), custom_id: long },
      { ...beta('y'), custom_id: wide },
    ]);
    for (const extra of [[], ['--dry-run']]) {
      const r = await gw(
        ['batch', 'run', file, '--out', join(d, 'out'), '--json', ...extra],
        s.env,
        isolatedDirs(),
      );
      expect(r.exitCode).toBe(2);
      const details = JSON.parse(r.stderr).error.details as Array<{
        line: number;
        field: string;
        rule: string;
      }>;
      expect(details.map((x) => [x.line, x.field])).toEqual([
        [2, 'custom_id'],
        [3, 'custom_id'],
      ]);
      expect(details[0]?.rule).toMatch(
        /^is 240 bytes; a video line names its files after it .* at most 239 bytes$/,
      );
      expect(details[1]?.rule).toMatch(/^is 240 bytes; a beta task line .* at most 228 bytes$/);
    }
    expect(s.requests).toHaveLength(0);
  });

  it('after a --no-download run, gw batch download fetches the files and records them in results.jsonl', async () => {
    const s = await batchSim({ videoBytes: 10_000 });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    const file = writeInput(d, [video('v1'), beta('b1'), chat('c1')]);
    expect((await gw(['batch', 'run', file, '--out', out, '--no-download'], s.env, home)).exitCode).toBe(0);
    expect(existsSync(join(out, 'files'))).toBe(false);
    const r = await gw(['batch', 'download', out, '--json'], s.env, home);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ downloaded: 2, present: 0, failed: [] });
    const byId = new Map(jsonl(join(out, 'results.jsonl')).map((x) => [x.custom_id, x]));
    expect(byId.get('v1')?.files).toEqual([{ path: 'files/v1.mp4', bytes: 10_000 }]);
    expect((byId.get('b1')?.files as Array<{ path: string }>)[0]?.path).toBe('files/b1.mp4');
    expect(byId.get('c1')?.files).toBeUndefined();
    const again = await gw(['batch', 'download', out, '--json'], s.env, home);
    expect(JSON.parse(again.stdout)).toMatchObject({ downloaded: 0, present: 2 });
    expect(s.requests.filter((q) => q.method === 'POST')).toHaveLength(3);
  });
});

describe('billed once', () => {
  it('a create whose id is in the journal after a kill is followed, not left in doubt', async () => {
    const s = await batchSim();
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    const argv = ['batch', 'run', writeInput(d, [video('j1')]), '--out', out, '--json'];
    expect((await gw(argv, s.env, home)).exitCode).toBe(0);
    // The kill landed between the journal's record of the create and the state log's: the log ends at "send".
    const state = join(out, 'state.jsonl');
    const records = readFileSync(state, 'utf8').trimEnd().split('\n');
    const send = records.findIndex((l) => l.includes('"e":"send"'));
    writeFileSync(state, `${records.slice(0, send + 1).join('\n')}\n`);
    writeFileSync(join(out, 'results.jsonl'), '');
    const again = await gw(argv, s.env, home);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ succeeded: 1, in_doubt: 0 });
    expect(createsByPrompt(s, '/v1/videos').get('prompt j1')).toBe(1);
    const line = jsonl(join(out, 'results.jsonl'))[0];
    expect((line?.response as { request_id: string }).request_id).toMatch(/^req-sim-/);
  });

  it('a 5xx from a proxy in front of the gateway is in doubt and stays in the spend: a re-run sends no more', async () => {
    const s = await batchSim({ faults: [{ route: 'POST /v1/videos', kind: 'status', status: 504 }] });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    const file = writeInput(
      d,
      ['v1', 'v2', 'v3', 'v4'].map((id) => video(id)),
    ); // CNY 2.70 each
    const argv = ['batch', 'run', file, '--out', out, '--budget', '6CNY', '--concurrency', '1', '--json'];
    const first = await gw(argv, s.env, home);
    expect(first.exitCode).toBe(1);
    expect(JSON.parse(first.stdout)).toMatchObject({ in_doubt: 2, failed: 0 });
    const again = await gw(argv, s.env, home);
    expect(again.exitCode).toBe(1);
    expect(s.requests.filter((q) => q.method === 'POST')).toHaveLength(2);
    const st = JSON.parse((await gw(['batch', 'status', out, '--json'], s.env, home)).stdout);
    expect(st).toMatchObject({ spend: { estimated: { CNY: 5.4 } }, counts: { in_doubt: 2 } });
  });

  it('gw batch retry changes nothing before it is certain to start (token, input, lock)', async () => {
    const s = await batchSim();
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    const failing = { ...video('f1'), body: { ...video('f1').body, prompt: 'prompt f1 [sim:fail]' } };
    const file = writeInput(d, [failing, chat('c1')]);
    expect((await gw(['batch', 'run', file, '--out', out], s.env, home)).exitCode).toBe(1);
    const errors = join(out, 'errors.jsonl');
    const before = lines(errors);
    expect(before).toContain('"custom_id":"f1"');
    const noToken = await gw(['batch', 'retry', out], { GW_BASE_URL: s.baseUrl }, home);
    expect(noToken.exitCode).toBe(3);
    expect(lines(errors)).toBe(before);
    const holder = await liveProcess();
    writeFileSync(join(out, 'batch.lock'), `${holder.pid} ${hostname()}\n`);
    expect((await gw(['batch', 'retry', out], s.env, home)).exitCode).toBe(1);
    expect(lines(errors)).toBe(before);
    holder.kill('SIGKILL');
    renameSync(file, `${file}.moved`);
    const moved = await gw(['batch', 'retry', out], s.env, home);
    expect(moved.exitCode).toBe(2);
    expect(moved.stderr).toContain(`input: ${file} (the batch's last run read it) is not a readable file`);
    expect(lines(errors)).toBe(before);
    expect(createsByPrompt(s, '/v1/videos').get('prompt f1 [sim:fail]')).toBe(1);
  });

  it('a resumed run writes the request id the create was answered with (never null)', async () => {
    const s = await batchSim({ faults: [{ route: 'GET /v1/videos/:id', kind: 'slow', ms: 1000 }] });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const out = join(d, 'out');
    const argv = ['batch', 'run', writeInput(d, [video('r1')]), '--out', out];
    const ac = new AbortController();
    const first = gw(argv, s.env, home, { signal: ac.signal });
    await untilState(out, (rs) => rs.some((x) => x.e === 'created'));
    ac.abort();
    expect((await first).exitCode).toBe(130);
    s.sim.clearFaults();
    expect((await gw(argv, s.env, home)).exitCode).toBe(0);
    const created = s.requests.find((q) => q.method === 'POST' && q.path === '/v1/videos');
    const line = jsonl(join(out, 'results.jsonl'))[0];
    expect((line?.response as { request_id: string }).request_id).toBe(created?.requestId);
  });
});

describe('gw batch merge trusts nothing', () => {
  async function shards(s: Sim, home: Record<string, string>, d: string, n: number, ks: number[]) {
    const file = writeInput(
      d,
      Array.from({ length: 12 }, (_, i) => video(`m${i}`)),
    );
    const dirs: string[] = [];
    for (const k of ks) {
      const out = join(d, `part${k}of${n}`);
      const r = await gw(['batch', 'run', file, '--out', out, '--shard', `${k}/${n}`], s.env, home);
      expect(r.exitCode, r.stderr).toBe(0);
      dirs.push(out);
    }
    return dirs;
  }

  it('a file is taken only from its shard’s own files/, by name: a moved shard works, /etc/hostname is refused', async () => {
    const s = await batchSim({ videoBytes: 2000 });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const [part] = await shards(s, home, d, 1, [1]);
    // Moved from another machine, with the absolute paths an older gw wrote.
    const moved = join(d, 'moved');
    renameSync(part as string, moved);
    const results = join(moved, 'results.jsonl');
    const abs = jsonl(results).map((x) => ({
      ...x,
      files: (x.files as Array<{ path: string; bytes: number }>).map((f) => ({
        ...f,
        path: `/elsewhere/out/${f.path}`,
      })),
    }));
    writeFileSync(results, abs.map((x) => `${JSON.stringify(x)}\n`).join(''));
    const ok = await gw(['batch', 'merge', moved, '--out', join(d, 'all')], s.env, home);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(jsonl(join(d, 'all', 'results.jsonl'))).toHaveLength(12);
    expect(statSync(join(d, 'all', 'files', 'm0.mp4')).size).toBe(2000);
    const evil = abs.map((x, i) => (i === 3 ? { ...x, files: [{ path: '/etc/hostname', bytes: 10 }] } : x));
    writeFileSync(results, evil.map((x) => `${JSON.stringify(x)}\n`).join(''));
    const r = await gw(['batch', 'merge', moved, '--out', join(d, 'all2'), '--json'], s.env, home);
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stderr).error.message).toBe(
      `${results} line 4: names /etc/hostname (10 bytes), which is not a file of that size in ${join(moved, 'files')}`,
    );
    expect(existsSync(join(d, 'all2', 'results.jsonl'))).toBe(false);
    expect(existsSync(join(d, 'all2', 'files', 'hostname'))).toBe(false);
  });

  it('shards must be parts of one run: the same input and n; a shard given twice is taken once; missing are named', async () => {
    const s = await batchSim({ videoBytes: 1000 });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const [p13, p23] = await shards(s, home, d, 3, [1, 2]);
    const [p22] = await shards(s, home, d, 2, [2]);
    const run13 = jsonl(join(p13 as string, 'state.jsonl')).find((r) => r.e === 'run')?.run as string;
    const run22 = jsonl(join(p22 as string, 'state.jsonl')).find((r) => r.e === 'run')?.run as string;
    expect(run13).toMatch(/^[0-9a-f]{16}$/);
    expect(jsonl(join(p23 as string, 'state.jsonl')).find((r) => r.e === 'run')?.run).toBe(run13);
    const mixed = await gw(
      ['batch', 'merge', p13 as string, p22 as string, '--out', join(d, 'a')],
      s.env,
      home,
    );
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toContain(
      `${p22} holds shards of 2 of run ${run22} and ${p13} shards of 3 of run ${run13}: not parts of one run`,
    );
    // Shard 2/3 of another input: the same n, another run.
    const other = join(d, 'other');
    mkdirSync(other);
    const otherFile = writeInput(other, [video('z1'), video('z2')]);
    const o23 = join(d, 'other23');
    expect(
      (await gw(['batch', 'run', otherFile, '--out', o23, '--shard', '2/3'], s.env, home)).exitCode,
    ).toBe(0);
    const otherRun = await gw(['batch', 'merge', p13 as string, o23, '--out', join(d, 'a2')], s.env, home);
    expect(otherRun.exitCode).toBe(2);
    expect(otherRun.stderr).toContain('not parts of one run');
    expect(existsSync(join(d, 'a2', 'results.jsonl'))).toBe(false);
    // A scheduler ran index 1 twice, into two directories: the first attempt died before its last item was done
    // (its last done record and result line are gone). Taken once: the fuller directory.
    const twice = join(d, 'first-attempt');
    cpSync(p13 as string, twice, { recursive: true });
    const cut = (file: string, pred: (l: string) => boolean): void => {
      const ls = readFileSync(file, 'utf8').split('\n');
      const i = ls.findLastIndex(pred);
      writeFileSync(file, ls.filter((_, j) => j !== i).join('\n'));
    };
    cut(join(twice, 'state.jsonl'), (l) => l.includes('"e":"done"'));
    cut(join(twice, 'results.jsonl'), (l) => l !== '');
    const missing = await gw(
      ['batch', 'merge', twice, p13 as string, p23 as string, '--out', join(d, 'c')],
      s.env,
      home,
    );
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('shards_missing: shard 3/3 of the run missing: nothing merged');
    expect(existsSync(join(d, 'c', 'results.jsonl'))).toBe(false);
    const allowed = await gw(
      [
        'batch',
        'merge',
        twice,
        p13 as string,
        p23 as string,
        '--out',
        join(d, 'c'),
        '--allow-missing',
        '--json',
      ],
      s.env,
      home,
    );
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout).shards).toEqual({
      run: run13,
      merged: ['1/3', '2/3'],
      missing: ['3/3'],
      skipped: [{ shard: '1/3', dir: twice }],
    });
    expect(allowed.stderr).toContain(`shard 1/3 is also in ${twice}: taken once`);
    const ids = jsonl(join(d, 'c', 'results.jsonl')).map((x) => x.custom_id);
    expect(new Set(ids).size).toBe(ids.length);
    // The merged directory says what it lacks, to gw batch status as to its --json.
    const st = await gw(['batch', 'status', join(d, 'c'), '--json'], s.env, home);
    expect(JSON.parse(st.stdout).merge).toEqual({
      run: run13,
      n: 3,
      merged: ['1/3', '2/3'],
      missing: ['3/3'],
    });
    const text = await gw(['batch', 'status', join(d, 'c')], s.env, home);
    expect(text.stdout).toMatch(new RegExp(`^merged shards:\\s+1/3, 2/3 of run ${run13}$`, 'm'));
    expect(text.stdout).toMatch(/^missing shards:\s+3\/3$/m);
    const one = await gw(['batch', 'status', p23 as string], s.env, home);
    expect(one.stdout).toMatch(new RegExp(`^shard:\\s+2/3 of run ${run13}$`, 'm'));
  });

  it('a torn last line of a shard is skipped as a run does; a non-empty --out is refused unless --force', async () => {
    const s = await batchSim({ videoBytes: 1000 });
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const [part] = await shards(s, home, d, 1, [1]);
    appendFileSync(join(part as string, 'results.jsonl'), '{"id":"batch_req_1","custom_id":"m9","resp');
    const existing = join(d, 'existing');
    expect(
      (await gw(['batch', 'run', writeInput(d, [chat('keep')]), '--out', existing], s.env, home)).exitCode,
    ).toBe(0);
    const before = lines(join(existing, 'results.jsonl'));
    const refused = await gw(['batch', 'merge', part as string, '--out', existing], s.env, home);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`--out: ${existing} is not empty; a merge writes a new batch directory`);
    expect(lines(join(existing, 'results.jsonl'))).toBe(before);
    const forced = await gw(['batch', 'merge', part as string, '--out', existing, '--force'], s.env, home);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(jsonl(join(existing, 'results.jsonl'))).toHaveLength(12);
  });

  it('the status of a run and of its merge show currencies in one order', async () => {
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const rec = (o: Record<string, unknown>): string => `${JSON.stringify({ at: 1, ...o })}\n`;
    const part = (k: number, id: string, url: string, implied: { c: string; a: number }): string => {
      const dir = join(d, `p${k}`);
      mkdirSync(dir);
      writeFileSync(
        join(dir, 'state.jsonl'),
        rec({
          e: 'run',
          input: 'x.jsonl',
          argv: [],
          opts: {
            concurrency: 1,
            budgets: [],
            allowUnpriced: true,
            maxAttempts: 1,
            shard: `${k}/2`,
            download: true,
          },
        }) +
          rec({ e: 'send', id, url, model: 'm' }) +
          rec({ e: 'done', id, status: 200, implied }),
      );
      return dir;
    };
    const usd = part(1, 'b1', '/beta/api/v3/contents/generations/tasks', { c: 'USD', a: 0.5 });
    const cny = part(2, 'v1', '/v1/videos', { c: 'CNY', a: 2.7 });
    const status = async (dir: string) =>
      Object.keys(
        JSON.parse((await gw(['batch', 'status', dir, '--json'], {}, home)).stdout).spend.implied_by_usage,
      );
    for (const order of [
      [usd, cny],
      [cny, usd],
    ]) {
      const all = join(d, `all-${order.map((x) => x.slice(-2)).join('')}`);
      expect((await gw(['batch', 'merge', ...order, '--out', all], {}, home)).exitCode).toBe(0);
      expect(await status(all)).toEqual(['CNY', 'USD']);
    }
  });
});

describe('what a batch writes and reads', () => {
  it('a \\u-escaped token in an answer does not survive into results.jsonl', async () => {
    const escaped = [...TOKEN].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const server = closeAfterTest(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-gateway-request-id': 'req-esc' });
          res.end(
            `{"id":"c1","object":"chat.completion","created":1,"model":"chat-3.7-plus","choices":[{"index":0,"message":{"role":"assistant","content":"yours: ${escaped}"},"finish_reason":"stop"}]}`,
          );
        });
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const d = tempDir('gw-bt-');
    const out = join(d, 'out');
    const env = { GW_BASE_URL: `http://127.0.0.1:${port}`, GW_TOKEN: TOKEN };
    const r = await gw(['batch', 'run', writeInput(d, [chat('e1')]), '--out', out], env, isolatedDirs());
    expect(r.exitCode, r.stderr).toBe(0);
    const text = readFileSync(join(out, 'results.jsonl'), 'utf8');
    expect(text).not.toContain(escaped);
    expect(JSON.stringify(JSON.parse(text))).not.toContain(TOKEN);
    expect(JSON.parse(text).response.body.choices[0].message.content).toBe('yours: sk-…1c77');
  });

  it('reports every bad line and every problem of a line in one --json error, and the hint fits', async () => {
    const s = await batchSim();
    const d = tempDir('gw-bt-');
    const file = writeInput(d, [
      chat('ok1'),
      video('two', 99, '8k'),
      '{"custom_id": "x", "method": "POST"',
      { ...chat('ok1'), method: 'GET' as 'POST', url: '/v1/files' },
    ]);
    const r = await gw(['batch', 'run', file, '--out', join(d, 'out'), '--json'], s.env, isolatedDirs());
    expect(r.exitCode).toBe(2);
    const e = JSON.parse(r.stderr).error;
    expect(e.message).toBe('3 lines of the batch break a rule; nothing was sent');
    expect(e.hint).not.toMatch(/above/);
    expect(e.details.map((x: { line: number; field: string }) => `${x.line} ${x.field}`)).toEqual([
      '2 body.seconds',
      '2 body.resolution',
      '3 line',
      '4 method',
      '4 url',
    ]);
    const human = await gw(['batch', 'run', file, '--out', join(d, 'out'), '--quiet'], s.env, isolatedDirs());
    expect(human.stderr).toMatch(
      /^error: invalid_input: 3 lines of the batch break a rule; nothing was sent\n {2}line 2 \(two\): body\.seconds: /,
    );
    expect(human.stderr).toContain('  line 4 (ok1): url: "/v1/files" is not one of');
    expect(s.requests).toHaveLength(0);
  });

  it('a UTF-8 BOM on line 1 is dropped; invalid UTF-8 is refused naming the line', async () => {
    const s = await batchSim();
    const d = tempDir('gw-bt-');
    const home = isolatedDirs();
    const bom = join(d, 'bom.jsonl');
    writeFileSync(bom, `\uFEFF${JSON.stringify(chat('b1'))}\n`);
    const ok = await gw(['batch', 'run', bom, '--out', join(d, 'o1')], s.env, home);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const bad = join(d, 'bad.jsonl');
    const line = Buffer.from(JSON.stringify(chat('fox-X')));
    line[line.indexOf('X')] = 0xff;
    writeFileSync(
      bad,
      Buffer.concat([Buffer.from(`${JSON.stringify(chat('c0'))}\n`), line, Buffer.from('\n')]),
    );
    const r = await gw(['batch', 'run', bad, '--out', join(d, 'o2'), '--json'], s.env, home);
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stderr).error.details).toEqual([
      { line: 2, field: 'line', rule: 'is not valid UTF-8' },
    ]);
    expect(s.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
  });

  it('an ordinary batch of many videos prints no MaxListenersExceededWarning (the real bin/gw)', async () => {
    // Tasks still running at their first poll: 40 followers wait on the run's signal at once.
    const s = await batchSim({ videoBytes: 1000, timings: { videoQueuedMs: 400, videoRunningMs: 400 } });
    const d = tempDir('gw-bt-');
    const file = writeInput(
      d,
      Array.from({ length: 40 }, (_, i) => video(`w${i}`)),
    );
    const r = await spawnGw(['batch', 'run', file, '--out', join(d, 'out'), '--concurrency', '32'], {
      env: { ...isolatedDirs(), ...s.env },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});
