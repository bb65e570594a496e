import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { videoListPrice } from '../../src/contract/video.js';
import type { RunReport } from '../../src/load/schema.js';
import type { FaultRule } from '../../src/sim/config.js';
import { LatencyHistogram } from '../../src/load/histogram.js';
import { isolatedDirs, runGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gw-load-video-'));
  dirs.push(d);
  return d;
}

const MODEL = 'clip-1.1-t2v';
/** The list price of the cheapest settings (the model's minimum 3 s at 720p). */
const PRICE = videoListPrice(MODEL, 3, '720p')?.amount as number;
const V = ['load', '--api', 'video', '-m', MODEL, '--poll-interval', '50ms'];

async function load(args: string[], env: Record<string, string>, home = isolatedDirs()) {
  const r = await runGw([...V, '--json', ...args], { env: { ...home, ...env } });
  let report: RunReport | undefined;
  try {
    report = JSON.parse(r.stdout) as RunReport;
  } catch {
    report = undefined;
  }
  return { ...r, report, home };
}

const posts = (requests: Array<{ method: string; path: string }>): number =>
  requests.filter((q) => q.method === 'POST' && q.path === '/v1/videos').length;

describe('gw load --api video against the simulator', () => {
  it('measures create, queue wait, completion and download of each video, journaled, within the budget', async () => {
    const sim = await useSim({ timings: { videoQueuedMs: 300, videoRunningMs: 200 }, videoBytes: 2_000_000 });
    const r = await load(['--concurrency', '2', '--requests', '4', '--budget', '100CNY'], sim.env);
    expect(r.exitCode, r.stderr).toBe(0);
    const st = r.report?.steps[0];
    const v = st?.video;
    expect(st?.requests).toBe(4);
    expect(st?.ok).toBe(4);
    expect(v?.created).toBe(4);
    expect(v?.completed).toBe(4);
    expect(posts(sim.requests)).toBe(4);
    for (const m of ['create', 'queue_wait', 'completion', 'download'] as const) {
      expect(v?.latency_ms[m].count, m).toBe(4);
      expect(v?.histograms[m], m).not.toBe('');
    }
    // A task cannot leave `queued` before the simulator's 300 ms, nor end before 300 + 200 ms.
    expect(v?.latency_ms.queue_wait.p50).toBeGreaterThanOrEqual(300);
    expect(v?.latency_ms.completion.p50).toBeGreaterThanOrEqual(500);
    expect(v?.latency_ms.completion.p50).toBeGreaterThan(v?.latency_ms.queue_wait.p50 ?? Infinity);
    expect(v?.download_bytes).toBe(8_000_000);
    expect(v?.download_mb_per_s.count).toBe(4);
    expect(v?.download_mb_per_s.p50).toBeGreaterThan(0);
    expect(v?.spend.estimated).toBeCloseTo(4 * PRICE, 2);
    expect(v?.spend.stopped_by_budget).toBe(false);
    // Every created id is in the journal (gw history lists it), with the state the run saw last.
    const journal = readFileSync(join(r.home.GW_STATE_DIR, 'journal.jsonl'), 'utf8');
    for (const id of v?.ids ?? []) expect(journal).toContain(id);
    expect(v?.ids).toHaveLength(4);
    const history = await runGw(['history', '--json'], { env: { ...sim.env, ...r.home } });
    const entries = JSON.parse(history.stdout) as Array<{ id: string; state?: string }>;
    expect(entries.filter((e) => v?.ids.includes(e.id)).map((e) => e.state)).toEqual(
      Array(4).fill('completed'),
    );
  });

  it('stops creating before the estimated spend would pass --budget and prints the spend', async () => {
    const sim = await useSim({});
    const budget = (2.5 * PRICE).toFixed(2);
    const r = await load(['--concurrency', '1', '--requests', '5', '--budget', `${budget}CNY`], sim.env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(posts(sim.requests)).toBe(2);
    const v = r.report?.steps[0]?.video;
    expect(v?.created).toBe(2);
    expect(v?.spend.estimated).toBeCloseTo(2 * PRICE, 2);
    expect(v?.spend.stopped_by_budget).toBe(true);
    expect(r.report?.stopped).toBe('budget');
    // The human report names the spend.
    const human = await runGw([...V, '--requests', '5', '--budget', `${budget}CNY`], {
      env: { ...isolatedDirs(), ...sim.env },
    });
    // Off a terminal the summary is beside the table, on stderr.
    expect(human.stderr).toMatch(new RegExp(`spend:\\s+CNY ${(2 * PRICE).toFixed(2)} estimated`));
    expect(human.stdout).toMatch(/queue wait/);
  });

  it('counts failed and cancelled tasks as failures', async () => {
    const sim = await useSim({});
    const prompts = join(tempDir(), 'p.jsonl');
    writeFileSync(prompts, '"a calm sea"\n"a storm [sim:fail]"\n"a lake [sim:cancel]"\n"a river"\n');
    const r = await load(
      ['--concurrency', '1', '--requests', '4', '--budget', '100CNY', '--prompts', prompts],
      sim.env,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const st = r.report?.steps[0];
    expect(st?.requests).toBe(4);
    expect(st?.ok).toBe(2);
    expect(st?.errors).toBe(2);
    expect(st?.errors_by_code).toEqual({ video_failed: 1, video_cancelled: 1 });
    expect(st?.video?.failed).toBe(1);
    expect(st?.video?.cancelled).toBe(1);
    expect(st?.video?.created).toBe(4);
  });

  it('refuses without a usable budget, naming the flag, and sends nothing', async () => {
    const sim = await useSim({});
    for (const args of [
      [],
      ['--budget', '10USD'],
      ['--budget', '0.01CNY'],
      ['--budget', '5CNY', '--rate', '2'],
    ]) {
      const r = await load(['--requests', '1', ...args], sim.env);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/--budget|--rate/);
    }
    expect(posts(sim.requests)).toBe(0);
  });

  it('merge adds the video figures exactly, and compare gates on them', async () => {
    // Creates and downloads take a fixed 150 ms on both simulators: a 100 KB download or a create answered in a
    // millisecond or two varies several-fold with the machine's load, which would be timer noise, not a slower gateway.
    const faults: FaultRule[] = [
      { route: 'POST /v1/videos', kind: 'latency', ms: 150 },
      { route: 'GET /cdn', kind: 'latency', ms: 150 },
    ];
    const timings = (queued: number) => ({ videoQueuedMs: queued, videoRunningMs: 100 });
    const fast = await useSim({
      timings: timings(100),
      videoBytes: 100_000,
      faults: faults.map((f) => ({ ...f })),
    });
    const slow = await useSim({
      timings: timings(2000),
      videoBytes: 100_000,
      faults: faults.map((f) => ({ ...f })),
    });
    const dir = tempDir();
    const run = async (sim: typeof fast, name: string): Promise<string> => {
      const out = join(dir, name);
      const args = [...V, '--concurrency', '2', '--requests', '2', '--budget', '100CNY', '--out', out];
      const r = await runGw(args, { env: sim.env });
      expect(r.exitCode, r.stderr).toBe(0);
      return out;
    };
    const [a, b, c] = [await run(fast, 'a.json'), await run(fast, 'b.json'), await run(slow, 'c.json')];
    const read = (p: string): RunReport => JSON.parse(readFileSync(p, 'utf8')) as RunReport;
    const all = join(dir, 'all.json');
    const m = await runGw(['load', 'merge', a, c, '--out', all]);
    expect(m.exitCode, m.stderr).toBe(0);
    const [va, vc, v] = [read(a), read(c), read(all)].map((r) => r.steps[0]?.video);
    expect(v?.created).toBe(4);
    expect(v?.completed).toBe(4);
    expect(v?.ids).toEqual([...(va?.ids ?? []), ...(vc?.ids ?? [])]);
    expect(v?.download_bytes).toBe(400_000);
    expect(v?.spend.estimated).toBeCloseTo((va?.spend.estimated ?? 0) + (vc?.spend.estimated ?? 0), 2);
    expect(v?.spend.budget).toBe(200);
    for (const k of ['create', 'queue_wait', 'completion', 'download', 'download_mbps'] as const) {
      // The merged histogram is the sum of the parts, bucket by bucket.
      const sum = LatencyHistogram.decode(va?.histograms[k] ?? '');
      sum.add(LatencyHistogram.decode(vc?.histograms[k] ?? ''));
      expect(LatencyHistogram.decode(v?.histograms[k] ?? '').summary(), k).toEqual(sum.summary());
      expect(sum.count, k).toBe(4);
    }
    // The pinned 150 ms hold on both origins (a download answered in a millisecond would be timer noise again).
    for (const x of [va, vc]) {
      expect(x?.latency_ms.create.p50).toBeGreaterThanOrEqual(150);
      expect(x?.latency_ms.download.p50).toBeGreaterThanOrEqual(150);
    }
    // Half the merged tasks waited 2 s in the queue: its p90 is the slow machine's.
    expect(v?.latency_ms.queue_wait.p90).toBe(vc?.latency_ms.queue_wait.p90);

    const same = await runGw(['load', 'compare', a, b, '--tolerance', '300%']);
    expect(same.exitCode, same.stdout + same.stderr).toBe(0);
    expect(same.stdout).toMatch(/video\.queue_wait\.p50/);
    const slower = await runGw(['load', 'compare', a, c, '--tolerance', '300%', '--json']);
    expect(slower.exitCode, slower.stdout).toBe(1);
    const cmp = JSON.parse(slower.stdout) as { regressions: Array<{ what: string }> };
    expect(cmp.regressions.map((r) => r.what)).toContain('video.queue_wait.p50');

    // A video run and a text run are not parts of one test.
    const text = join(dir, 'text.json');
    const t = read(a);
    delete t.steps[0]?.video;
    writeFileSync(text, JSON.stringify(t));
    const bad = await runGw(['load', 'merge', a, text]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/video run and a text run/);
  });

  it('--out and --html: an unwritable path is exit 2 before the first create; the HTML report shows the video figures', async () => {
    const sim = await useSim({ timings: { videoQueuedMs: 100, videoRunningMs: 100 } });
    const dir = tempDir();
    for (const flag of ['--out', '--html']) {
      const bad = await load(
        ['--requests', '1', '--budget', '10CNY', flag, join(dir, 'missing', 'r')],
        sim.env,
      );
      expect(bad.exitCode, `${flag}: ${bad.stderr}`).toBe(2);
      expect(bad.stderr).toMatch(new RegExp(`${flag} .*missing.* does not exist`));
    }
    expect(posts(sim.requests)).toBe(0);

    const html = join(dir, 'v.html');
    const out = join(dir, 'v.json');
    const r = await load(['--requests', '2', '--budget', '10CNY', '--html', html, '--out', out], sim.env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(r.report);
    const text = readFileSync(html, 'utf8').replace(/<[^>]*>/g, ' ');
    expect(text).toContain('Video tasks');
    expect(text).toMatch(/clip-1\.1-t2v, 3s 720p: 2 created, 2 completed, 0 failed, 0 cancelled/);
    for (const figure of [
      'create (answer to the POST)',
      'queue wait',
      'time to completion',
      'download MB/s',
    ]) {
      expect(text, figure).toContain(figure);
    }
  });
});
