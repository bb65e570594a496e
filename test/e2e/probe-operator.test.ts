import { type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProbeReport } from '../../src/probe/runner.js';
import type { HistoryView } from '../../src/probe/history-view.js';
import { isolatedDirs, runGw, spawnGw, type GwResult } from '../helpers/gw.js';
import { closeAfterTest } from '../helpers/servers.js';
import { useSim } from '../helpers/sim.js';

const temps: string[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gw-probe-op-'));
  temps.push(d);
  return d;
}

function parse(r: GwResult): ProbeReport {
  try {
    return JSON.parse(r.stdout) as ProbeReport;
  } catch {
    throw new Error(`not one JSON document (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  }
}

function row(report: ProbeReport, id: string): ProbeReport['checks'][number] {
  const c = report.checks.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no row ${id} in ${report.checks.map((x) => x.id).join(', ')}`);
  return c;
}

/** Resolves once `test` holds, re-checked on every event of `on` (a data event, a request): no sleeps. */
function until<T>(test: () => T | undefined, subscribe: (wake: () => void) => () => void): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const check = (): boolean => {
      if (settled) return true;
      let v: T | undefined;
      try {
        v = test();
      } catch (e) {
        settled = true;
        unsubscribe();
        reject(e instanceof Error ? e : new Error(String(e)));
        return true;
      }
      if (v === undefined) return false;
      settled = true;
      unsubscribe();
      resolve(v);
      return true;
    };
    const unsubscribe = subscribe(() => void check());
    check();
  });
}

/** A spawned `gw probe --every` with its live output. */
interface Watcher {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves when `test(stdout, stderr)` holds. */
  waitFor<T>(test: (out: string, err: string) => T | undefined): Promise<T>;
  done: Promise<GwResult>;
}

function spawnWatch(args: string[], env: Record<string, string>): Watcher {
  let out = '';
  let err = '';
  let child!: ChildProcess;
  const listeners = new Set<() => void>();
  const done = spawnGw(['probe', ...args], {
    env,
    onSpawn: (c) => {
      child = c;
      c.stdout?.on('data', (b: Buffer) => {
        out += b.toString('utf8');
        for (const l of listeners) l();
      });
      c.stderr?.on('data', (b: Buffer) => {
        err += b.toString('utf8');
        for (const l of listeners) l();
      });
    },
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (test) =>
      until(
        () => test(out, err),
        (wake) => {
          listeners.add(wake);
          const t = setInterval(wake, 20); // files written by the child change without an event here
          return () => {
            listeners.delete(wake);
            clearInterval(t);
          };
        },
      ),
    done,
  };
}

/** Parses Prometheus text exposition strictly: every line a comment or `name{labels} value`; ends with \n. */
function parseProm(text: string): Map<string, number> {
  if (!text.endsWith('\n'))
    throw new Error(`not terminated by a newline: ${JSON.stringify(text.slice(-40))}`);
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.e+-]+|NaN|[+-]Inf)$/.exec(line);
    if (m === null) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    out.set(m[1] as string, Number(m[2]));
  }
  if (!out.has('probe_success')) throw new Error('no probe_success');
  return out;
}

describe('gw probe --all-models', () => {
  it('probes every kind, classifies auth/quota/rate-limit apart from broken models, lists unknown kinds', async () => {
    const sim = await useSim({
      extraModels: { 'codex-mini-sim': 'responses', 'claude-sim-4': 'messages', 'qwq-sim-reasoner': 'chat' },
      misconfiguredModels: ['chat-broken-1', 'zzz-mystery-1'],
      faults: [
        { route: 'POST /v1/embeddings', kind: 'status', status: 429, model: 'text-embedding-v4' },
        { route: 'POST /v1/images/generations', kind: 'status', status: 402, model: 'image-gen-1' },
        { route: 'POST /alpha/v1/videos/image2video', kind: 'status', status: 401, model: 'alpha-v1-5' },
      ],
    });
    const env = { ...sim.env, ...isolatedDirs() };
    const r = await runGw(
      [
        'probe',
        '--all-models',
        '--json',
        '--kind',
        'chat,responses,messages,embeddings,image,image-edit,video,alpha,beta',
        '--budget',
        '5CNY',
        '--allow-unpriced',
        '--probe-image',
        'https://example.com/probe.png',
        '--skip-model',
        'alpha-v2*',
        '--skip-model',
        'gamma-video-2-0-f*',
      ],
      { env },
    );
    expect(r.exitCode, r.stderr).toBe(1);
    const report = parse(r);
    // Every paid task the run created is in the journal, with the last state the run saw.
    const journal = JSON.parse((await runGw(['history', '--json'], { env })).stdout) as Array<{
      kind: string;
      id: string;
      model: string;
      state?: string;
    }>;
    const entry = (kind: string, model: string) =>
      journal.filter((j) => j.kind === kind && j.model === model).map((j) => j.state ?? null);
    expect(entry('video', 'clip-1.1-t2v')).toEqual(['completed']);
    expect(entry('alpha', 'alpha-v1')).toEqual([null]);
    expect(entry('beta-task', 'gamma-video-2-0-mini')).toEqual(['succeeded']);
    const status = (id: string): [string, string | undefined] => [
      row(report, id).status,
      row(report, id).class,
    ];
    expect(status('models')).toEqual(['pass', undefined]);
    expect(status('chat:chat-3.7-plus')).toEqual(['pass', undefined]);
    expect(status('responses:codex-mini-sim')).toEqual(['pass', undefined]);
    expect(status('messages:claude-sim-4')).toEqual(['pass', undefined]);
    expect(status('chat:qwq-sim-reasoner')).toEqual(['pass', undefined]);
    expect(status('image-edit:image-edit-1')).toEqual(['pass', undefined]);
    expect(status('video:clip-1.1-t2v')).toEqual(['pass', undefined]);
    expect(status('alpha:alpha-v1')).toEqual(['pass', undefined]);
    expect(status('beta:gamma-video-2-0-mini')).toEqual(['pass', undefined]);
    // Not the model's fault: classified, and a rate limit only warns.
    expect(status('embeddings:text-embedding-v4')).toEqual(['warn', 'rate-limit']);
    expect(status('image:image-gen-1')).toEqual(['fail', 'quota']);
    expect(status('alpha:alpha-v1-5')).toEqual(['fail', 'auth']);
    // Listed but not served: a broken model.
    expect(status('chat:chat-broken-1')).toEqual(['fail', 'model']);
    expect(row(report, 'chat:chat-broken-1').error?.code).toBe('model_not_found');
    // Unknown kind: listed as not probed, with the reason.
    expect(status('unknown:zzz-mystery-1')).toEqual(['skip', 'unknown-kind']);
    expect(row(report, 'unknown:zzz-mystery-1').detail).toMatch(/not probed: unknown kind/);
    // Budget: clip-1.1-t2v (CNY 2.70) fits 5CNY; the next priced video would not.
    expect(row(report, 'video:clip-1.1-i2v').detail).toMatch(/needs reference media/);
    expect(row(report, 'alpha:alpha-v2-6').detail).toMatch(/skipped \(--skip-model alpha-v2\*\)/);
    const posted = (path: string): string[] =>
      sim.requests
        .filter((q) => q.method === 'POST' && q.path === path)
        .map((q) => String((q.body as { model?: string }).model));
    // Text-only video models: the priced one within --budget, the unpriced one by --allow-unpriced.
    expect(posted('/v1/videos').sort()).toEqual(['clip-1.1-t2v', 'vid-2.7-t2v']);
    // Reasoning models get room to think; others a few tokens.
    const chats = sim.requests.filter((q) => q.path === '/v1/chat/completions');
    const maxTokens = (m: string): unknown =>
      (chats.find((q) => (q.body as { model: string }).model === m)?.body as { max_tokens?: number })
        .max_tokens;
    expect(maxTokens('qwq-sim-reasoner')).toBe(512);
    expect(maxTokens('chat-3.7-plus')).toBe(16);
  });

  it('creates no video, alpha or beta task unless asked, and refuses paid kinds without --budget', async () => {
    const sim = await useSim();
    const r = await runGw(['probe', '--all-models', '--json', '--both-stream-modes'], { env: sim.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const report = parse(r);
    expect(row(report, 'chat-stream:chat-3.7-plus').ttftMs).toBeGreaterThan(0);
    expect(row(report, 'video:clip-1.1-t2v').status).toBe('skip');
    expect(row(report, 'beta:gamma-video-2-0').detail).toMatch(/add --kind beta and a --budget/);
    const paid = sim.requests.filter((q) => q.method === 'POST' && /videos|alpha|beta/.test(q.path));
    expect(paid).toEqual([]);
    // On a terminal: a spinner on stderr, the table and the causes on stdout.
    const tty = await runGw(['probe', '--all-models', '--kind', 'chat'], { env: sim.env, tty: true });
    expect(tty.exitCode).toBe(0);
    expect(tty.stderr).toContain('probing the model list');
    expect(tty.stdout).toMatch(/│ chat:chat-3\.7-plus +│ pass/);
    expect(tty.stdout).not.toContain('by cause'); // nothing failed
    const before = sim.requests.length;
    const bad = await runGw(['probe', '--all-models', '--kind', 'video'], { env: sim.env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--budget: --kind video creates paid tasks, so it needs --budget/);
    expect(sim.requests.length).toBe(before);
    // Over the budget, or no documented price: listed as not probed, nothing created.
    const tight = await runGw(['probe', '--all-models', '--json', '--kind', 'video', '--budget', '2CNY'], {
      env: sim.env,
    });
    expect(tight.exitCode, tight.stderr).toBe(0);
    const t = parse(tight);
    expect(row(t, 'video:clip-1.1-t2v').detail).toMatch(/CNY 2\.70 would pass --budget CNY 2\.00/);
    expect(row(t, 'video:vid-2.7-t2v').detail).toMatch(/list price is not documented/);
    expect(sim.requests.filter((q) => q.method === 'POST' && /videos|alpha|beta/.test(q.path))).toEqual([]);
  });
});

describe('gw probe --all-models limits', () => {
  it('ends a row that never answers at --model-timeout and classifies it as a timeout', async () => {
    const sim = await useSim({
      faults: [{ route: 'POST /v1/embeddings', kind: 'slow', ms: 50, model: 'text-embedding-v4' }],
    });
    const r = await runGw(
      ['probe', '--all-models', '--json', '--kind', 'embeddings,chat', '--model-timeout', '300ms'],
      {
        env: sim.env,
      },
    );
    expect(r.exitCode, r.stderr).toBe(1);
    const report = parse(r);
    const row1 = row(report, 'embeddings:text-embedding-v4');
    expect([row1.status, row1.class, row1.error?.code]).toEqual(['fail', 'timeout', 'timeout']);
    expect(row1.detail).toMatch(/no answer within 300ms \(--model-timeout\)/);
    expect(row(report, 'chat:chat-3.7-plus').status).toBe('pass');
    const text = await runGw(['probe', '--all-models', '--kind', 'embeddings', '--model-timeout', '200ms'], {
      env: sim.env,
    });
    expect(text.exitCode).toBe(1);
    expect(text.stderr).toMatch(/by cause: 1 timeout/);
  });
});

describe('gw probe --slo / --warn-slo', () => {
  it('passes, degrades (warn, exit 0, JUnit passed with a message) and fails (exit 1) on the bounds', async () => {
    // Chat answers take 300 ms at least; the failing bounds (250 ms) leave the models check (a few ms) a wide margin
    // on a loaded machine (at 60 ms against 50 ms bounds, GET /v1/models once took over 50 ms under the whole suite).
    const sim = await useSim({
      faults: [{ route: 'POST /v1/chat/completions', kind: 'latency', ms: 300 }],
    });
    const junit = join(tempDir(), 'probe.xml');
    const args = ['probe', '--json', '--only', 'models,chat,chat-stream'];
    const ok = await runGw([...args, '--slo', 'latency<1m'], { env: sim.env });
    expect(ok.exitCode, ok.stderr).toBe(0);
    const okReport = parse(ok);
    expect(row(okReport, 'chat').slo).toEqual({ verdict: 'pass', missed: [] });
    expect(okReport.slo).toEqual({ fail: { latency: 60_000 } });

    const warn = await runGw([...args, '--slo', 'latency<1m', '--warn-slo', 'ttft<50ms', '--junit', junit], {
      env: sim.env,
    });
    expect(warn.exitCode, warn.stderr).toBe(0);
    const warnReport = parse(warn);
    expect(row(warnReport, 'chat-stream').status).toBe('warn');
    expect(row(warnReport, 'chat-stream').slo?.verdict).toBe('degraded');
    expect(row(warnReport, 'chat-stream').detail).toMatch(/^degraded: ttft \S+ ≥ 50ms/);
    expect(row(warnReport, 'chat').status).toBe('pass'); // no ttft: a ttft bound does not apply
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/failures="0"/);
    expect(/<testcase [^>]*name="chat-stream"[^>]*>[\s\S]*?<\/testcase>/.exec(xml)?.[0]).toMatch(
      /degraded: ttft/,
    );

    const fail = await runGw([...args, '--slo', 'ttft<250ms,latency<250ms'], { env: sim.env });
    expect(fail.exitCode).toBe(1);
    const failReport = parse(fail);
    expect(row(failReport, 'chat').status).toBe('fail');
    expect(row(failReport, 'chat').slo?.missed[0]).toMatch(/^latency \S+ ≥ 250ms$/);
    expect(row(failReport, 'models').status).toBe('pass');
    const bad = await runGw([...args, '--slo', 'speed<1s'], { env: sim.env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('speed<1s');
    expect(bad.stderr).toContain('is not <measure><<duration>');
  });
});

/** One POST a webhook receiver got. */
interface HookCall {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  raw: string;
}

/**
 * A webhook receiver on 127.0.0.1 (closed after the test) answering the n-th POST with `status(n)`; `posts(n)`
 * resolves once it has n.
 */
async function startHookReceiver(
  status: (n: number) => number,
): Promise<{ hook: string; calls: HookCall[]; posts: (n: number) => Promise<true> }> {
  const calls: HookCall[] = [];
  const wakers = new Set<() => void>();
  const receiver = closeAfterTest(
    createServer((req, res) => {
      let raw = '';
      req.on('data', (b: Buffer) => (raw += b.toString('utf8')));
      req.on('end', () => {
        calls.push({ body: JSON.parse(raw) as Record<string, unknown>, headers: req.headers, raw });
        res.writeHead(status(calls.length)).end();
        for (const w of wakers) w();
      });
    }),
  );
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const posts = (n: number): Promise<true> =>
    until(
      () => (calls.length >= n ? true : undefined),
      (wake) => {
        wakers.add(wake);
        return () => wakers.delete(wake);
      },
    );
  return { hook: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, calls, posts };
}

describe('gw probe --every', () => {
  it('writes the metrics file atomically every run, serves /metrics, drops vanished models, ends on SIGTERM with exit 0', async () => {
    const sim = await useSim({ extraModels: { 'qwq-sim-reasoner': 'chat' } });
    const dir = tempDir();
    const file = join(dir, 'textfile', 'gw_probe.prom');
    const w = spawnWatch(
      ['--all-models', '--kind', 'chat', '--every', '20ms', '--metrics-file', file, '--metrics-port', '0'],
      { ...sim.env, ...isolatedDirs() },
    );
    const url = await w.waitFor((_, err) => /metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(err)?.[1]);
    // Read the file as often as it can be read while gw rewrites it: every read parses, none is half-written.
    let reads = 0;
    let runs = 0;
    await w.waitFor(() => {
      if (!existsSync(file)) return undefined;
      const m = parseProm(readFileSync(file, 'utf8'));
      reads++;
      runs = m.get('gw_probe_runs_total') ?? 0;
      return runs >= 5 && reads >= 20 ? true : undefined;
    });
    const scraped = await fetch(url);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain/);
    const m = parseProm(await scraped.text());
    expect(m.get('probe_success')).toBe(1);
    expect(m.get('gw_probe_check_success{check="chat",model="qwq-sim-reasoner"}')).toBe(1);
    expect(m.has('probe_duration_seconds')).toBe(true);
    const om = await fetch(url, { headers: { accept: 'application/openmetrics-text' } });
    expect(om.headers.get('content-type')).toMatch(/openmetrics/);
    expect(await om.text()).toMatch(/# EOF\n$/);
    // The model vanishes from the gateway: its series goes with it.
    delete sim.sim.config.extraModels?.['qwq-sim-reasoner'];
    const seen = runs;
    await w.waitFor(() => {
      const text = readFileSync(file, 'utf8');
      const n = parseProm(text).get('gw_probe_runs_total') ?? 0;
      return n >= seen + 2 && !text.includes('qwq-sim-reasoner') ? true : undefined;
    });
    w.child.kill('SIGTERM');
    const done = await w.done;
    expect(done.exitCode, done.stderr).toBe(0);
    const stopped = /stopped after (\d+) runs/.exec(done.stderr);
    expect(stopped, done.stderr).not.toBeNull();
    // The final flush wrote the last run's figures.
    expect(parseProm(readFileSync(file, 'utf8')).get('gw_probe_runs_total')).toBe(Number(stopped?.[1]));
    // One summary line per run (a run that raced the model's removal adds a FAIL line under its summary).
    expect(done.stdout.split('\n').filter((l) => / (OK|FAILED): /.test(l)).length).toBe(Number(stopped?.[1]));
    expect(done.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
  });

  it('posts exactly one alert after n failures in a row and one recovery, without the token', async () => {
    const sim = await useSim();
    // The first delivery fails: retried.
    const { hook, calls, posts } = await startHookReceiver((n) => (n === 1 ? 503 : 204));
    sim.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'status', status: 400 });
    const w = spawnWatch(
      ['--only', 'models,chat', '--every', '20ms', '--webhook', hook, '--alert-after', '3'],
      {
        ...sim.env,
        ...isolatedDirs(),
      },
    );
    await posts(2); // the failed delivery and its retry
    expect(calls[0]?.raw).toBe(calls[1]?.raw);
    const alert = calls[1]?.body as Record<string, unknown>;
    expect(alert).toMatchObject({
      event: 'alert',
      check: 'chat',
      model: 'chat-3.7-plus',
      consecutiveFailures: 3,
    });
    expect(alert.text).toMatch(/chat on chat-3\.7-plus failed 3 times in a row/);
    // It was the third failed run that alerted (each run prints one line; a failed check one more).
    expect(
      w
        .stdout()
        .split('\n')
        .filter((l) => l.includes('FAIL chat:')).length,
    ).toBeGreaterThanOrEqual(3);
    sim.sim.clearFaults();
    await posts(3);
    expect(calls[2]?.body).toMatchObject({ event: 'recovery', check: 'chat', model: 'chat-3.7-plus' });
    // Several more passing runs: no further post.
    const lines = w.stdout().split('\n').length;
    await w.waitFor((out) => (out.split('\n').length >= lines + 5 ? true : undefined));
    w.child.kill('SIGTERM');
    const done = await w.done;
    expect(done.exitCode).toBe(0);
    expect(calls.length).toBe(3);
    for (const c of calls) {
      expect(c.raw).not.toContain(sim.env.GW_TOKEN);
      expect(c.headers.authorization).toBeUndefined();
      expect(c.raw).not.toContain('Reply with'); // no request body
    }
    expect(done.stderr).toMatch(/webhook: 2 delivered, 0 dropped/);
  });

  it('a webhook gets neither the token, nor the --header / GW_HEADERS / profile headers, nor the traceparent', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const secrets = {
      token: sim.env.GW_TOKEN,
      flag: 'flag-secret-51c2',
      env: 'env-secret-8d0e',
      profile: 'profile-secret-3b7a',
    };
    expect((await runGw(['config', 'set', 'headers.X-Profile-Key', secrets.profile], { env })).exitCode).toBe(
      0,
    );
    const { hook, calls: got, posts } = await startHookReceiver(() => 204);
    sim.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'status', status: 400 });
    const w = spawnWatch(
      [
        '-H',
        `X-Flag-Key: ${secrets.flag}`,
        '--only',
        'models,chat',
        '--every',
        '1h',
        '--webhook',
        hook,
        '--alert-after',
        '1',
      ],
      { ...env, GW_HEADERS: `X-Env-Key: ${secrets.env}` },
    );
    await posts(1);
    w.child.kill('SIGTERM');
    expect((await w.done).exitCode).toBe(0);
    // The gateway got all of them: the receiver's silence is not for want of sending.
    const chat = sim.requests.find((q) => q.path === '/v1/chat/completions');
    expect(chat?.headers).toMatchObject({
      authorization: `Bearer ${secrets.token}`,
      'x-flag-key': secrets.flag,
      'x-env-key': secrets.env,
      'x-profile-key': secrets.profile,
    });
    expect(chat?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const trace = chat?.traceparent?.split('-')[1] ?? 'no trace';
    expect(got).toHaveLength(1);
    const post = got[0] as HookCall;
    expect(JSON.parse(post.raw)).toMatchObject({ event: 'alert', check: 'chat' });
    expect(
      Object.keys(post.headers).filter((h) => /^(authorization|traceparent|tracestate|x-.*-key)$/.test(h)),
    ).toEqual([]);
    const everything = JSON.stringify(post.headers) + post.raw;
    for (const secret of [...Object.values(secrets), trace]) expect(everything).not.toContain(secret);
  });
});

describe('gw probe --every, the checklist', () => {
  it('skips the paid video check unless --only names it, prints a JSON report per run, and refuses a busy port', async () => {
    const sim = await useSim();
    const w = spawnWatch(['--json', '--every', '10ms'], { ...sim.env, ...isolatedDirs() });
    const first = await w.waitFor((out) =>
      out.includes('\n') ? out.slice(0, out.indexOf('\n')) : undefined,
    );
    const report = JSON.parse(first) as ProbeReport;
    expect(report.checks.find((c) => c.id === 'video')).toMatchObject({
      status: 'skip',
      detail: expect.stringMatching(/skipped in a watch: each run would create a paid video/) as unknown,
    });
    expect(report.checks.find((c) => c.id === 'chat')?.status).toBe('pass');
    w.child.kill('SIGTERM');
    expect((await w.done).exitCode).toBe(0);
    expect(sim.requests.some((q) => q.method === 'POST' && q.path === '/v1/videos')).toBe(false);

    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => busy.close(() => r())));
    const port = String((busy.address() as AddressInfo).port);
    const r = await runGw(['probe', '--every', '1m', '--metrics-port', port, '--skip', 'video'], {
      env: sim.env,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`cannot serve metrics on 127.0.0.1:${port}: the port is in use`);
  });
});

describe('gw probe history', () => {
  it('shows uptime per check and model, percentiles and what changed, after several runs', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const args = ['probe', '--only', 'models,chat', '--json'];
    expect((await runGw(args, { env })).exitCode).toBe(0);
    expect((await runGw(args, { env })).exitCode).toBe(0);
    sim.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'status', status: 400 });
    expect((await runGw(args, { env })).exitCode).toBe(1);
    sim.sim.clearFaults();
    expect((await runGw(args, { env })).exitCode).toBe(0);
    // The subcommand and the probe's own flags live side by side.
    const h = await runGw(['probe', 'history', '--json', '--check', 'chat', '--model', 'chat-3.7-plus'], {
      env,
    });
    expect(h.exitCode, h.stderr).toBe(0);
    const view = JSON.parse(h.stdout) as HistoryView;
    expect(view.runs).toHaveLength(4);
    expect(view.series).toHaveLength(1);
    const s = view.series[0];
    expect(s).toMatchObject({ check: 'chat', model: 'chat-3.7-plus', runs: 4, failingFor: 0 });
    expect(s?.uptime).toEqual({ '5m': 0.75, '1h': 0.75, '1d': 0.75, '7d': 0.75 });
    expect(s?.latencyMs?.p50).toBeGreaterThan(0);
    expect(s?.points.map((p) => p[1])).toEqual(['pass', 'pass', 'fail', 'pass']);
    expect(view.changes).toEqual([
      {
        kind: 'stopped-failing',
        gateway: sim.baseUrl,
        check: 'chat',
        model: 'chat-3.7-plus',
        detail: 'chat chat-3.7-plus recovered',
      },
    ]);
    expect(view.markers.map((m) => m.kind)).toEqual(['started-failing', 'stopped-failing']);
    expect(view.markers[0]?.at).toBe(view.runs[2]?.at);
    // --model filters on its own too (commander hands it to the parent probe command, which also has --model).
    const none = await runGw(['probe', 'history', '--json', '--model', 'no-such-model'], { env });
    expect((JSON.parse(none.stdout) as HistoryView).series).toHaveLength(0);
    const other = await runGw(['probe', 'history', '--json', '--gateway', 'https://other.example'], { env });
    expect((JSON.parse(other.stdout) as HistoryView).runs).toEqual([]);
    const same = await runGw(['probe', 'history', '--json', '--gateway', `${sim.baseUrl}/`], { env });
    expect((JSON.parse(same.stdout) as HistoryView).runs).toHaveLength(4);
    // An empty answer says why (on stderr off a terminal: stdout holds only tables): nothing matched the filters,
    // or the gateway has no runs, or nothing ran yet.
    const noMatch = await runGw(['probe', 'history', '--check', 'no-such-check'], { env });
    expect(noMatch.stdout).toBe('');
    expect(noMatch.stderr).toMatch(
      /^no probe runs match the filters in the last 168h00m \(checks recorded: chat, chat-stream, .*models: chat-3\.7-plus/m,
    );
    const noGateway = await runGw(['probe', 'history', '--gateway', 'https://other.example'], { env });
    expect(noGateway.stderr).toContain(
      `no probe runs of https://other.example recorded (gateways recorded: ${sim.baseUrl})`,
    );
    const fresh = await runGw(['probe', 'history'], { env: { ...sim.env, ...isolatedDirs() } });
    expect(fresh.stderr).toMatch(/^no probe runs recorded yet/);
    const text = await runGw(['probe', 'history'], { env });
    expect(text.exitCode).toBe(0);
    // Off a terminal the table is tab-separated columns under a header.
    expect(text.stdout).toContain(`${sim.baseUrl}\tchat\tchat-3.7-plus\t4\t75%\t75%\t75%\t75%\t`);
    expect(text.stderr).toMatch(/stopped-failing: chat chat-3\.7-plus recovered/);
    // `gw probe` with flags still runs the probe, not the subcommand.
    const again = await runGw(['probe', '--only', 'models', '--model', 'chat-3.7-plus', '--json'], { env });
    expect(again.exitCode).toBe(0);
    expect(parse(again).checks[0]?.status).toBe('pass');
  });
});
