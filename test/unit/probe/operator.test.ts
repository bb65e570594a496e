import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { modelKindOf } from '../../../src/contract/model-kinds.js';
import { Alerter, type AlertPayload } from '../../../src/probe/alerts.js';
import {
  Admissions,
  classify,
  globToRegExp,
  planRows,
  type AllModelsOptions,
  type PlannedRow,
} from '../../../src/probe/all-models.js';
import { parseBudgets, type Hold } from '../../../src/core/budget.js';
import {
  HISTORY_FILE,
  HISTORY_ROTATED,
  appendHistory,
  readHistory,
  type HistoryRun,
} from '../../../src/probe/history.js';
import { changesBetween, percentile, viewHistory } from '../../../src/probe/history-view.js';
import { ProbeMetrics, seconds } from '../../../src/probe/metrics.js';
import type { CheckRecord, ProbeAsk, ProbeReport } from '../../../src/probe/runner.js';
import { applySlo, parseSlo } from '../../../src/probe/slo.js';
import { watch } from '../../../src/probe/watch.js';
import { tempDir } from '../../helpers/tmp.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function rec(id: string, status: CheckRecord['status'], extra: Partial<CheckRecord> = {}): CheckRecord {
  return { id, title: id, status, latencyMs: 100, detail: 'ok', ...extra };
}

function report(checks: CheckRecord[], at = '2026-01-01T00:00:00.000Z'): ProbeReport {
  const n = (s: string) => checks.filter((c) => c.status === s).length;
  return {
    gateway: 'https://gw.example',
    startedAt: at,
    finishedAt: at,
    durationMs: 500,
    checks,
    summary: { passed: n('pass'), failed: n('fail'), warned: n('warn'), skipped: n('skip') },
  };
}

describe('model kinds', () => {
  it('take the documents’ tables first, then naming conventions, and flag reasoning models', () => {
    expect(modelKindOf('chat-3.7-plus')).toEqual({ kind: 'chat', reasoning: false, source: 'table' });
    expect(modelKindOf('text-embedding-v4')?.kind).toBe('embeddings');
    expect(modelKindOf('clip-1.1-t2v')?.kind).toBe('video');
    expect(modelKindOf('alpha-v2-6')?.kind).toBe('alpha');
    expect(modelKindOf('gamma-video-2-0-mini-260615')?.kind).toBe('beta');
    expect(modelKindOf('image-edit-1')?.kind).toBe('image-edit');
    expect(modelKindOf('gpt-image-1')?.kind).toBe('image');
    expect(modelKindOf('o3-pro')).toEqual({ kind: 'responses', reasoning: true, source: 'name' });
    expect(modelKindOf('claude-sonnet-4-5')?.kind).toBe('messages');
    expect(modelKindOf('deepseek-r1')).toEqual({ kind: 'chat', reasoning: true, source: 'name' });
    expect(modelKindOf('bge-m3-embedding')?.kind).toBe('embeddings');
    expect(modelKindOf('zzz-mystery-1')).toBeUndefined();
  });
});

describe('--all-models planning', () => {
  const base: AllModelsOptions = {
    gateway: 'x',
    kinds: ['chat', 'video'],
    skipGlobs: ['chat-3-*'],
    bothStreamModes: true,
    budget: new Map([['CNY', 3]]),
    allowUnpriced: false,
    rowTimeoutMs: 1000,
    taskTimeoutMs: 1000,
    videoPoll: { initialMs: 1, maxMs: 1 },
    probeImage: undefined,
    signal: new AbortController().signal,
    client: () => Promise.reject(new Error('unused')),
    note: () => {},
  };

  it('makes one row per model and mode, with the reason of every row not sent', () => {
    const rows = planRows(
      ['chat-3.7-plus', 'chat-3-vl-plus', 'clip-1.1-t2v', 'vid-2.7-t2v', 'clip-1.1-i2v', 'nope-x'],
      base,
    );
    const view = rows.map((r) => [r.check, r.model, r.skip?.detail ?? 'send']);
    expect(view).toEqual([
      ['chat', 'chat-3.7-plus', 'send'],
      ['chat-stream', 'chat-3.7-plus', 'send'],
      ['chat', 'chat-3-vl-plus', 'skipped (--skip-model chat-3-*)'],
      ['chat-stream', 'chat-3-vl-plus', 'skipped (--skip-model chat-3-*)'],
      ['video', 'clip-1.1-t2v', 'send'],
      ['video', 'vid-2.7-t2v', expect.stringMatching(/list price is not documented/)],
      ['video', 'clip-1.1-i2v', expect.stringMatching(/needs reference media/)],
      ['unknown', 'nope-x', expect.stringMatching(/unknown kind/)],
    ]);
  });

  it('counts each video’s list price against the budget, in plan order, its real spend once known', async () => {
    const budget = new Map([['CNY' as const, 5]]);
    const rows = planRows(['clip-1.1-t2v', 'clip-1.1-t2v', 'clip-1.1-t2v'], { ...base, budget });
    expect(rows.map((r) => r.cost)).toEqual(Array(3).fill({ currency: 'CNY', amount: 2.7 }));
    const [a, b, c] = rows as [PlannedRow, PlannedRow, PlannedRow];
    const admissions = new Admissions(budget, new AbortController().signal);
    // The second would fit were the first to cost less than its list price: it waits for the first's end.
    const first = admissions.admit(a);
    const second = admissions.admit(b);
    const third = admissions.admit(c);
    const held = await first;
    expect(held).toMatchObject({ currency: 'CNY', amount: 2.7 });
    admissions.settle(held as Hold, { currency: 'CNY', amount: 1.8 });
    const held2 = await second;
    expect(held2).toMatchObject({ amount: 2.7 });
    // The third waits for the second in turn, which spends its whole list price: it does not fit.
    admissions.settle(held2 as Hold, undefined);
    expect(await third).toBe('CNY 2.70 would pass --budget CNY 5.00 (4.50 taken)');
  });

  it('classifies auth, quota and rate-limit answers apart from broken models', () => {
    expect(classify({ code: 'invalid_api_key', message: '', status: 401 })).toBe('auth');
    expect(classify({ code: 'insufficient_quota', message: '', status: 429 })).toBe('quota');
    expect(classify({ code: 'service_error', message: '', status: 402 })).toBe('quota');
    expect(classify({ code: 'rate_limit_exceeded', message: '', status: 429 })).toBe('rate-limit');
    expect(classify({ code: 'model_not_found', message: '', status: 404 })).toBe('model');
    expect(classify({ code: 'timeout', message: '' })).toBe('timeout');
  });

  it('globs match whole names with * and ?', () => {
    expect(globToRegExp('gamma-*').test('gamma-video-2-0')).toBe(true);
    expect(globToRegExp('gamma-*').test('xgamma-video')).toBe(false);
    expect(globToRegExp('clip-1.?-t2v').test('clip-1.1-t2v')).toBe(true);
    expect(globToRegExp('clip-1.?-t2v').test('clip-1x1-t2v')).toBe(false);
  });
});

describe('budgets and flags', () => {
  it('parse amounts per currency and refuse bad or repeated ones', () => {
    expect(parseBudgets(['20CNY', '2.5 usd'])).toEqual(
      new Map([
        ['CNY', 20],
        ['USD', 2.5],
      ]),
    );
    expect(() => parseBudgets(['20'])).toThrow(/--budget: "20" must be an amount and a currency/);
    expect(() => parseBudgets(['20EUR'])).toThrow(/--budget: "20EUR" must be an amount and a currency/);
    expect(() => parseBudgets(['1CNY', '2cny'])).toThrow(/--budget: CNY is given twice/);
  });
});

describe('SLOs', () => {
  it('parse bounds and refuse unknown measures', () => {
    expect(parseSlo('ttft<2s, latency<10s', 'slo')).toEqual({ ttft: 2000, latency: 10_000 });
    expect(parseSlo('e2e<500ms', 'slo')).toEqual({ latency: 500 });
    expect(() => parseSlo('tps>3', 'warn-slo')).toThrow(/warn-slo: "tps>3" is not/);
    expect(() => parseSlo('', 'slo')).toThrow(/no bound/);
  });

  it('pass, degrade and fail; failed checks and task latencies are left alone', () => {
    const records = [
      rec('chat', 'pass', { latencyMs: 50 }),
      rec('chat-stream', 'pass', { latencyMs: 50, ttftMs: 30 }),
      rec('responses', 'pass', { latencyMs: 300 }),
      rec('messages', 'fail', { latencyMs: 900 }),
      rec('video', 'pass', { latencyMs: 90_000 }),
    ];
    applySlo(records, { latency: 200 }, { ttft: 20, latency: 100 });
    expect(records.map((r) => [r.id, r.status, r.slo?.verdict])).toEqual([
      ['chat', 'pass', 'pass'],
      ['chat-stream', 'warn', 'degraded'],
      ['responses', 'fail', 'failed'],
      ['messages', 'fail', undefined],
      ['video', 'pass', 'pass'],
    ]);
    expect(records[2]?.slo?.missed).toEqual(['latency 300ms ≥ 200ms']);
  });
});

describe('metrics', () => {
  it('prints seconds cleanly: 10.2 ms is 0.0102, not 0.010199999999999999', async () => {
    const m = new ProbeMetrics();
    m.update(report([rec('chat', 'pass', { latencyMs: 10.2, ttftMs: 3.3 })]));
    const text = await m.text();
    expect(text).toContain('gw_probe_check_duration_seconds{check="chat",model=""} 0.0102\n');
    expect(text).toContain('gw_probe_ttft_seconds{check="chat",model=""} 0.0033\n');
    expect(text).not.toMatch(/\.\d{7,}/);
    expect(seconds(1_764_150_000_123)).toBe(1_764_150_000.123);
  });

  it('replace labelled series each run, so a vanished model is no longer exported', async () => {
    const m = new ProbeMetrics();
    m.update(
      report([
        rec('models', 'pass'),
        rec('chat:a', 'fail', { check: 'chat', model: 'a' }),
        rec('chat:b', 'pass', { check: 'chat', model: 'b', ttftMs: 250 }),
      ]),
    );
    let text = await m.text();
    expect(text).toContain('probe_success 0');
    expect(text).toContain('gw_probe_check_success{check="chat",model="a"} 0');
    expect(text).toContain('gw_probe_ttft_seconds{check="chat",model="b"} 0.25');
    m.update(report([rec('models', 'pass'), rec('chat:a', 'fail', { check: 'chat', model: 'a' })]));
    text = await m.text();
    expect(text).toContain('gw_probe_check_consecutive_failures{check="chat",model="a"} 2');
    expect(text).not.toContain('model="b"');
    expect(text).toContain('gw_probe_runs_total 2');
    expect(await m.openMetrics.metrics()).toMatch(/# EOF\n$/);
    expect(await m.text()).toContain('gw_probe_runs_total 2'); // OpenMetrics did not rename the Prometheus series
  });
});

describe('alerts', () => {
  it('one alert at the nth failure in a row, one recovery, retried with backoff, no secrets', async () => {
    const sent: AlertPayload[] = [];
    let attempts = 0;
    const a = new Alerter({
      url: 'https://hooks.example/x',
      after: 2,
      gateway: 'https://gw.example',
      redact: (t) => t.replaceAll('sk-secret', 'sk-…'),
      warn: () => {},
      backoffMs: 1,
      deliver: (_url, body) => {
        attempts++;
        if (attempts === 1) return Promise.reject(new Error('ECONNREFUSED'));
        sent.push(JSON.parse(body) as AlertPayload);
        return Promise.resolve({ status: 200 });
      },
    });
    const failing = report([rec('chat', 'fail', { detail: 'boom sk-secret', model: 'm' })]);
    expect(a.observe(failing)).toEqual([]);
    expect(a.observe(failing).map((p) => p.event)).toEqual(['alert']);
    expect(a.observe(failing)).toEqual([]);
    expect(a.observe(report([rec('chat', 'pass', { model: 'm' })])).map((p) => p.event)).toEqual([
      'recovery',
    ]);
    expect(a.observe(report([rec('chat', 'pass', { model: 'm' })]))).toEqual([]);
    await a.flush(1000);
    expect(sent.map((p) => [p.event, p.consecutiveFailures])).toEqual([
      ['alert', 2],
      ['recovery', 3],
    ]);
    expect(sent[0]?.gateway).toBe('https://gw.example');
    expect(JSON.stringify(sent)).not.toContain('sk-secret');
    expect(a.delivered).toBe(2);
  });
});

describe('history', () => {
  const ASKED: ProbeAsk = {
    mode: 'all-models',
    checks: ['chat'],
    bothStreamModes: false,
    skipModels: [],
  };
  function run(at: string, checks: HistoryRun['checks'], o: Partial<HistoryRun> = {}): HistoryRun {
    return {
      v: 1,
      at,
      d: 10,
      gateway: 'g',
      ok: checks.every((c) => c.s !== 'fail'),
      asked: ASKED,
      checks,
      ...o,
    };
  }

  it('appends, rotates past its size, reads both files and skips a torn line', () => {
    const dir = tempDir('gw-hist-');
    dirs.push(dir);
    const r = run('2026-01-01T00:00:00.000Z', [{ c: 'chat', m: 'a', s: 'pass', l: 5 }]);
    // One line and a half: the third append finds two lines there and rotates first.
    const max = Math.ceil(JSON.stringify(r).length * 1.5);
    expect(appendHistory(dir, r, max)).toBeUndefined();
    expect(appendHistory(dir, r, max)).toBeUndefined();
    expect(appendHistory(dir, r, max)).toBeUndefined(); // past max bytes: rotated first
    expect(statSync(join(dir, HISTORY_ROTATED)).size).toBeGreaterThan(0);
    writeFileSync(join(dir, HISTORY_FILE), `${readFileSync(join(dir, HISTORY_FILE), 'utf8')}{"v":1,"at":`);
    expect(readHistory(dir)).toHaveLength(3);
  });

  it('computes uptime per window, percentiles and the changes of the last run', () => {
    const now = Date.parse('2026-01-08T00:00:00.000Z');
    const ago = (ms: number) => new Date(now - ms).toISOString();
    const runs = [
      run(ago(2 * 86_400_000), [
        { c: 'chat', m: 'a', s: 'fail', e: 'x' },
        { c: 'chat', m: 'old', s: 'pass', l: 1 },
      ]),
      run(ago(2 * 3_600_000), [
        { c: 'chat', m: 'a', s: 'pass', l: 100 },
        { c: 'chat', m: 'old', s: 'pass', l: 1 },
      ]),
      run(ago(60_000), [
        { c: 'chat', m: 'a', s: 'fail', e: 'model_not_found' },
        { c: 'chat', m: 'new', s: 'pass', l: 3 },
      ]),
    ];
    const v = viewHistory(runs, { now, check: 'chat', model: 'a' });
    expect(v.series).toHaveLength(1);
    expect(v.series[0]?.uptime).toEqual({ '5m': 0, '1h': 0, '1d': 0.5, '7d': 1 / 3 });
    expect(v.series[0]?.latencyMs).toEqual({ p50: 100, p90: 100, p99: 100, max: 100 });
    expect(v.series[0]?.failingFor).toBe(1);
    expect(changesBetween(runs[1], runs[2]).map((c) => [c.kind, c.model])).toEqual([
      ['started-failing', 'a'],
      ['appeared', 'new'],
      ['vanished', 'old'],
    ]);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
  });

  it('never averages two gateways, and compares only like with like', () => {
    const now = Date.parse('2026-01-08T00:00:00.000Z');
    const ago = (ms: number) => new Date(now - ms).toISOString();
    const other = { gateway: 'h' };
    const runs = [
      run(ago(40_000), [{ c: 'chat', m: 'a', s: 'pass', l: 1 }]),
      run(ago(30_000), [{ c: 'chat', m: 'a', s: 'fail', e: 'x' }], other),
      run(ago(20_000), [{ c: 'chat', m: 'a', s: 'pass', l: 1 }]),
      run(ago(10_000), [{ c: 'chat', m: 'a', s: 'pass', l: 1 }], other),
    ];
    const v = viewHistory(runs, { now });
    expect(v.series.map((s) => [s.gateway, s.runs, s.uptime['5m']])).toEqual([
      ['g', 2, 1],
      ['h', 2, 0.5],
    ]);
    // Each gateway's last run against its own run before: h recovered; g did not change (g's pass is not h's).
    expect(v.changes.map((c) => [c.gateway, c.kind])).toEqual([['h', 'stopped-failing']]);
    expect(v.markers.map((c) => [c.gateway, c.kind])).toEqual([['h', 'stopped-failing']]);
    expect(viewHistory(runs, { now, gateway: 'h/' }).runs).toHaveLength(2);
    // A run that asked for other kinds makes nothing vanish; a cell one of the runs skipped is not compared.
    const narrow: ProbeAsk = { ...ASKED, checks: ['embeddings'] };
    const before = run(ago(20_000), [
      { c: 'chat', m: 'a', s: 'fail' },
      { c: 'chat', m: 'b', s: 'pass' },
    ]);
    const after = run(ago(10_000), [{ c: 'chat', m: 'a', s: 'skip' }], { asked: narrow });
    expect(changesBetween(before, after)).toEqual([]);
    expect(changesBetween(before, { ...after, asked: ASKED }).map((c) => [c.kind, c.model])).toEqual([
      ['vanished', 'b'],
    ]);
  });
});

describe('watch loop', () => {
  it('never runs two at once, stops on the signal, and flushes the metrics once more at the end', async () => {
    const ac = new AbortController();
    let inFlight = 0;
    let maxInFlight = 0;
    let runs = 0;
    const writes: number[] = [];
    const metrics = new ProbeMetrics();
    const n = await watch({
      intervalMs: 1, // shorter than a run: the next run waits for the one before
      signal: ac.signal,
      runOnce: async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return report([rec('chat', 'pass')]);
      },
      afterRun: () => {
        if (++runs === 4) ac.abort();
      },
      metrics,
      metricsFile: 'unused',
      writeMetrics: (_file, m) => {
        writes.push(runs);
        expect(m).toBe(metrics);
        return Promise.resolve();
      },
      warn: () => {},
    });
    expect(n).toBe(4);
    expect(maxInFlight).toBe(1);
    // One write per run (before afterRun counts it), then the final flush.
    expect(writes).toEqual([0, 1, 2, 3, 4]);
  });
});
