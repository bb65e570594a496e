import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/load/schema.js';
import type { LoggedRequest } from '../../src/sim/server.js';
import { isolatedDirs, runGw, spawnGw } from '../helpers/gw.js';
import { startOtlpReceiver } from '../helpers/otlp.js';
import { apiRequests, useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const CHAT = 'chat-3.7-plus';
const turn = (text: string) => ({ messages: [{ role: 'user', content: text }], stream: true, max_tokens: 8 });

/** A mixed trace: times in the trace's own clock (ms), played at --speed 0.5 (each line due at twice its t_ms). */
const TRACE = [
  { t_ms: 0, api: 'chat', model: CHAT, input_words: 12, max_tokens: 4 },
  { t_ms: 250, api: 'messages', model: CHAT, max_tokens: 4 },
  { t_ms: 500, api: 'embeddings', model: 'text-embedding-v4', input_words: 5 },
  { t_ms: 600, api: 'chat', model: CHAT, session: 'conv-1', body: turn('turn one') },
  // Due 20 ms (real) after turn one, whose answer takes at least 8 × 25 ms: it must wait for that answer.
  { t_ms: 610, api: 'chat', model: CHAT, session: 'conv-1', body: turn('turn two') },
  { t_ms: 750, api: 'video', model: 'clip-1.1-t2v' },
  { t_ms: 1000, api: 'chat', model: CHAT, input_words: 3, max_tokens: 2 },
];
/**
 * Below 1, so that every line is due later than its t_ms: a replay that ignored --speed would send lines 250 ms
 * to 1 s before they are due, one that ignored t_ms up to 2 s before.
 */
const SPEED = 0.5;
/**
 * Arrivals are held to a lower bound only, which is causal: a request cannot reach the simulator before gw wrote
 * it, nor be written before it was due, however loaded the machine (an upper bound would be wall-clock luck). The
 * two processes stamp times with their own performance.timeOrigin; CLOCKS_MS allows for those differing.
 */
const CLOCKS_MS = 5;
function write(lines: unknown[]): string {
  const path = join(tempDir('gw-replay-'), 'trace.jsonl');
  writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return path;
}

const posts = (sim: { requests: LoggedRequest[] }): LoggedRequest[] =>
  apiRequests(sim as never).filter((q) => q.method === 'POST');

/** The line of the trace a logged request came from (by path, and by body for the chat lines). */
function lineOf(q: LoggedRequest): number {
  const body = JSON.stringify(q.body);
  if (q.path === '/v1/messages') return 1;
  if (q.path === '/v1/embeddings') return 2;
  if (q.path === '/v1/videos') return 5;
  if (body.includes('turn one')) return 3;
  if (body.includes('turn two')) return 4;
  return (q.body as { max_tokens?: number }).max_tokens === 4 ? 0 : 6;
}

describe('gw load --replay', () => {
  it('sends no line before its scaled time (--speed 0.5), every api in one run, sessions in order', async () => {
    const sim = await useSim({ timings: { streamDelayMs: 25 } });
    const dir = tempDir('gw-replay-out-');
    const csv = join(dir, 'requests.csv');
    const path = write(TRACE);
    const r = await spawnGw(
      [
        'load',
        '--replay',
        path,
        '--speed',
        String(SPEED),
        '--budget',
        '10CNY',
        '--poll-interval',
        '50ms',
      ].concat(['--csv', csv, '--json']),
      { env: { ...sim.env, ...isolatedDirs() } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as RunReport;
    const st = report.steps[0];
    expect(st?.requests).toBe(7);
    expect(st?.ok).toBe(7);
    expect(Object.keys(st?.apis ?? {}).sort()).toEqual(['chat', 'embeddings', 'messages', 'video']);
    expect(Object.keys(st?.by_api_model ?? {}).sort()).toEqual([
      `chat ${CHAT}`,
      `embeddings text-embedding-v4`,
      `messages ${CHAT}`,
      'video clip-1.1-t2v',
    ]);
    expect(st?.video?.created).toBe(1);
    expect(st?.latency_ms.lag.count).toBe(7);
    // No line arrived before it was due: the run's origin plus its t_ms / speed.
    const sent = posts(sim);
    expect(sent.map(lineOf).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const at = new Map(sent.map((q) => [lineOf(q), q.arrivedUnixMs as number]));
    const origin = report.origin_unix_ms as number;
    for (const [i, line] of TRACE.entries()) {
      const due = origin + line.t_ms / SPEED;
      expect(at.get(i), `line ${i + 1}`).toBeGreaterThanOrEqual(due - CLOCKS_MS);
    }
    // The session's second turn waited for the first one's whole answer (8 tokens, 25 ms apart).
    expect((at.get(4) as number) - (at.get(3) as number)).toBeGreaterThanOrEqual(190);
    // Its start and lag count from the first turn's answer, not from its own (earlier) schedule: it started when
    // that answer ended, and was written (start + lag) before it arrived. Counted from its schedule (1220 ms), the
    // lag would put the writing at least 170 ms after the arrival.
    const rows = readFileSync(csv, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    const conv = rows.filter((c) => c[14] === 'conv-1').sort((a, b) => Number(a[1]) - Number(b[1]));
    expect(conv).toHaveLength(2);
    const [one, two] = conv as [string[], string[]];
    expect(Number(two[1])).toBeGreaterThanOrEqual(Number(one[1]) + Number(one[9]) - 1);
    expect(origin + Number(two[1]) + Number(two[12])).toBeLessThanOrEqual((at.get(4) as number) + CLOCKS_MS);
  });

  it('refuses a bad line naming its number and field, before anything is sent', async () => {
    const sim = await useSim();
    const path = write([TRACE[0], { t_ms: 10, api: 'chat', model: CHAT, max_tokens: 0 }]);
    const r = await runGw(['load', '--replay', path], { env: { ...sim.env, ...isolatedDirs() } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('line 2: max_tokens');
    expect(apiRequests(sim)).toEqual([]);
  });

  it('refuses a body the contract refuses, naming the line and the body field', async () => {
    const sim = await useSim();
    const path = write([{ t_ms: 0, api: 'chat', model: CHAT, body: { messages: 'hi' } }]);
    const r = await runGw(['load', '--replay', path], { env: { ...sim.env, ...isolatedDirs() } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/line 1: body\.messages/);
    expect(apiRequests(sim)).toEqual([]);
  });

  it('refuses lines out of time order, and a trace with videos but no --budget', async () => {
    const sim = await useSim();
    const env = { ...sim.env, ...isolatedDirs() };
    const late = write([TRACE[0], { ...TRACE[1], t_ms: 500 }, { ...TRACE[2], t_ms: 400 }]);
    const r1 = await runGw(['load', '--replay', late], { env });
    expect(r1.exitCode).toBe(2);
    expect(r1.stderr).toContain('line 3: t_ms: 400 is earlier than line 2');
    const videos = write(TRACE);
    const r2 = await runGw(['load', '--replay', videos], { env });
    expect(r2.exitCode).toBe(2);
    expect(r2.stderr).toContain('--budget: the trace has 1 video lines (the first on line 6)');
    expect(apiRequests(sim)).toEqual([]);
  });

  it('refuses flags that shape a generated workload, and --speed without --replay', async () => {
    const env = isolatedDirs();
    const a = await runGw(['load', '--replay', 'x.jsonl', '-m', CHAT], { env });
    expect(a.exitCode).toBe(2);
    expect(a.stderr).toContain('--model: does not apply to --replay');
    const b = await runGw(['load', '-m', CHAT, '--speed', '2'], { env });
    expect(b.exitCode).toBe(2);
    expect(b.stderr).toContain('--speed: needs --replay');
    const sim = await useSim();
    const c = await runGw(['load', '--replay', join(tempDir('gw-replay-'), 'missing.jsonl')], {
      env: { ...env, ...sim.env },
    });
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toContain('--replay');
    expect(apiRequests(sim)).toEqual([]);
  });
});

describe('gw load --replay --shard', () => {
  it('splits a trace by session over shards that start together, and merges them exactly', async () => {
    const sim = await useSim({ timings: { streamDelayMs: 5 } });
    const lines = [
      ...[0, 1, 2, 3].map((i) => ({
        t_ms: 100 * i,
        api: 'chat',
        model: CHAT,
        session: `s${i % 2}`,
        max_tokens: 3,
      })),
      ...[0, 1, 2, 3, 4, 5].map((i) => ({
        t_ms: 50 + 100 * i,
        api: 'embeddings',
        model: 'text-embedding-v4',
      })),
    ].sort((a, b) => a.t_ms - b.t_ms);
    const path = write(lines);
    const dir = tempDir('gw-replay-shards-');
    // Lead time for two gw processes to start and check the trace on a loaded machine.
    const at = Date.now() + 4000;
    const runs = await Promise.all(
      [1, 2].map((k) =>
        spawnGw(
          ['load', '--replay', path, '--shard', `${k}/2`, '--start-at', String(at), '--json'].concat([
            '--out',
            join(dir, `r${k}.json`),
            '--csv',
            join(dir, `r${k}.csv`),
          ]),
          { env: { ...sim.env, ...isolatedDirs() } },
        ),
      ),
    );
    for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
    const reports = runs.map((r) => JSON.parse(r.stdout) as RunReport);
    expect(reports.map((r) => r.shard?.shard)).toEqual(['1/2', '2/2']);
    expect(reports[0]?.shard?.run).toBe(reports[1]?.shard?.run);
    // Every line sent once, by one shard; a session's turns all by the same one.
    const sessions = [1, 2].map((k) => {
      const rows = readFileSync(join(dir, `r${k}.csv`), 'utf8')
        .trim()
        .split('\n')
        .slice(1);
      return new Set(rows.map((l) => l.split(',')[14]).filter((s) => s !== ''));
    });
    expect([...(sessions[0] ?? [])].filter((s) => sessions[1]?.has(s))).toEqual([]);
    const posts = apiRequests(sim).filter((q) => q.method === 'POST');
    expect(posts).toHaveLength(lines.length);
    expect(reports.reduce((n, r) => n + (r.steps[0]?.requests ?? 0), 0)).toBe(lines.length);
    // Both shards keep one clock: no request arrived before the instant plus its t_ms (a lower bound: causal). If
    // each one arrived after its own due time, the n-th earliest arrival is after the n-th earliest due time.
    const sorted = posts.map((q) => (q.arrivedUnixMs as number) - at).sort((a, b) => a - b);
    sorted.forEach((offset, i) =>
      expect(offset, `request ${i}`).toBeGreaterThanOrEqual((lines[i]?.t_ms ?? 0) - CLOCKS_MS),
    );
    // The merge equals one run of all the requests.
    const merged = await runGw(['load', 'merge', join(dir, 'r1.json'), join(dir, 'r2.json'), '--json'], {
      env: isolatedDirs(),
    });
    expect(merged.exitCode, merged.stderr).toBe(0);
    const m = JSON.parse(merged.stdout) as RunReport;
    const st = m.steps[0];
    expect(st?.requests).toBe(lines.length);
    expect(st?.latency_ms.lag.count).toBe(lines.length);
    expect(st?.by_api_model?.[`chat ${CHAT}`]?.requests).toBe(4);
    expect(st?.by_api_model?.['embeddings text-embedding-v4']?.requests).toBe(6);
    expect(st?.by_api_model?.[`chat ${CHAT}`]?.latency_ms.e2e.count).toBe(4);
  });
});

describe('gw load --replay --otlp', () => {
  it('exports a span per replayed request, with the ids the gateway saw', async () => {
    const sim = await useSim();
    const otlp = await startOtlpReceiver();
    const path = write([TRACE[0], TRACE[1], TRACE[2], TRACE[6]]);
    const r = await spawnGw(['load', '--replay', path, '--speed', '20', '--json', '--otlp', otlp.url], {
      env: { ...sim.env, ...isolatedDirs() },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const sent = posts(sim);
    expect(sent).toHaveLength(4);
    // Each replayed request is a span with the ids the gateway saw (the GET /v1/models before the clock is one too).
    const exported = new Set(otlp.spans.map((s) => s.spanId));
    const ids = sent.map((q) => /^00-[0-9a-f]{32}-([0-9a-f]{16})-01$/.exec(q.traceparent ?? '')?.[1] ?? '');
    for (const id of ids) expect(exported.has(id), id).toBe(true);
    const paths = otlp.spans.map((s) => s.attributes['url.path']);
    for (const p of ['/v1/chat/completions', '/v1/messages', '/v1/embeddings']) expect(paths).toContain(p);
  }, 60_000);
});
