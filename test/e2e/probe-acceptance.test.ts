/**
 * Acceptance after a deployment: the stream grammar of every model on every text API (`--all-models`), the
 * baseline diff (`--baseline`), the probe history per gateway, and spend from `--prices`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HistoryView } from '../../src/probe/history-view.js';
import type { ProbeReport } from '../../src/probe/runner.js';
import { isolatedDirs, runGw, type GwResult } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

function parse(r: GwResult): ProbeReport {
  try {
    return JSON.parse(r.stdout) as ProbeReport;
  } catch {
    throw new Error(`not one JSON document (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
  }
}

function cell(report: ProbeReport, id: string): ProbeReport['checks'][number] {
  const c = report.checks.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no row ${id} in ${report.checks.map((x) => x.id).join(', ')}`);
  return c;
}

const TEXT = ['--all-models', '--kind', 'chat,responses,messages', '--both-stream-modes', '--json'];

describe('gw probe --all-models: the stream grammar of each model on each text API', () => {
  it('a cut stream, a missing terminal event and an event after it are failed cells with their reason', async () => {
    const sim = await useSim({
      extraModels: { 'sim-chat-a': 'chat', 'sim-chat-b': 'chat', 'sim-chat-c': 'chat' },
      faults: [
        { route: 'POST /v1/chat/completions', kind: 'drop', after: 2, model: 'sim-chat-a', stream: true },
        { route: 'POST /v1/responses', kind: 'no-terminal', model: 'sim-chat-b' },
        { route: 'POST /v1/messages', kind: 'after-terminal', model: 'sim-chat-c' },
      ],
    });
    const r = await runGw(['probe', ...TEXT], { env: sim.env });
    expect(r.exitCode, r.stderr).toBe(1);
    const report = parse(r);
    const failed = report.checks.filter((c) => c.status === 'fail');
    expect(failed.map((c) => [c.id, c.error?.code, c.class])).toEqual([
      ['chat-stream:sim-chat-a', 'stream_cut', 'model'],
      ['responses-stream:sim-chat-b', 'stream_no_terminal', 'model'],
      ['messages-stream:sim-chat-c', 'stream_after_terminal', 'model'],
    ]);
    expect(cell(report, 'chat-stream:sim-chat-a').detail).toMatch(
      /^stream grammar: the stream was cut after \d+ events/,
    );
    expect(cell(report, 'responses-stream:sim-chat-b').detail).toBe(
      'stream grammar: the stream ended after 16 events without its terminal event (response.completed)',
    );
    expect(cell(report, 'messages-stream:sim-chat-c').detail).toMatch(
      /^stream grammar: POST \/v1\/messages: an event after the final event \(message_stop\): event: message_delta, data: /,
    );
    // Every other cell of those models passed (or warned of a burst: the test simulator does not pace streams).
    for (const id of [
      'chat:sim-chat-a',
      'responses-stream:sim-chat-a',
      'chat-stream:sim-chat-b',
      'messages-stream:sim-chat-b',
      'chat-stream:sim-chat-c',
    ])
      expect(cell(report, id).status, id).not.toBe('fail');
    // One request per cell.
    const posts = sim.requests.filter((q) => q.method === 'POST');
    const rows = report.checks.filter((c) => c.id !== 'models' && c.status !== 'skip');
    expect(posts).toHaveLength(rows.length);
  });
});

describe('gw probe history per gateway', () => {
  it('names each run’s gateway, never averages two gateways, compares like with like', async () => {
    const a = await useSim({ extraModels: { 'sim-chat-a': 'chat' } });
    const b = await useSim();
    const env = { ...a.env, ...isolatedDirs() };
    const probeA = (args: string[]) =>
      runGw(['probe', ...args, '--json'], { env: { ...env, GW_BASE_URL: a.baseUrl } });
    const probeB = (args: string[]) =>
      runGw(['probe', ...args, '--json'], { env: { ...env, GW_BASE_URL: b.baseUrl } });
    const kinds = ['--all-models', '--kind', 'chat'];
    expect((await probeA(kinds)).exitCode).toBe(0);
    b.sim.addFault({ route: 'POST /v1/chat/completions', kind: 'status', status: 500 });
    expect((await probeB(['--only', 'models,chat'])).exitCode).toBe(1);
    // A narrower run of gateway A (other kinds): sim-chat-a is not asked for, so it does not vanish.
    expect((await probeA(['--all-models', '--kind', 'embeddings'])).exitCode).toBe(0);
    const h = JSON.parse((await runGw(['probe', 'history', '--json'], { env })).stdout) as HistoryView;
    expect(new Set(h.runs.map((r) => r.gateway))).toEqual(new Set([a.baseUrl, b.baseUrl]));
    const chat = h.series.filter((s) => s.check === 'chat' && s.model === 'chat-3.7-plus');
    expect(chat.map((s) => [s.gateway, s.runs, s.uptime['5m']])).toEqual(
      [
        [a.baseUrl, 1, 1],
        [b.baseUrl, 1, 0],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    expect(h.changes).toEqual([]);
    // The same kinds again, with sim-chat-a gone: now it vanished, on gateway A only.
    a.sim.addFault({ route: '*', kind: 'vanish', model: 'sim-chat-a' });
    expect((await probeA(kinds)).exitCode).toBe(0);
    const h2 = JSON.parse(
      (await runGw(['probe', 'history', '--json', '--gateway', `${a.baseUrl}/v1`], { env })).stdout,
    ) as HistoryView;
    expect(h2.changes.map((c) => [c.kind, c.model, c.gateway])).toEqual([
      ['vanished', 'sim-chat-a', a.baseUrl],
    ]);
    expect(new Set(h2.runs.map((r) => r.gateway))).toEqual(new Set([a.baseUrl]));
    const text = await runGw(['probe', 'history'], { env });
    expect(text.stdout).toContain(`${b.baseUrl}\tchat\tchat-3.7-plus\t1\t0%`);
    expect(text.stdout).toContain(`${a.baseUrl}\tchat\tchat-3.7-plus\t2\t100%`);
  });
});

const MODELS = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => `sim-chat-${x}`);
const CHAT = ['--all-models', '--kind', 'chat', '--both-stream-modes'];

/** The changed cells of a report, by id and change. */
function changes(report: ProbeReport): string[] {
  return (report.baseline?.cells ?? []).map((c) => `${c.id} ${c.change}${c.regression ? ' !' : ''}`).sort();
}

describe('gw probe --baseline: what did this deployment break?', () => {
  it('names new failures, a cut stream, a vanished model, a slower cell, recoveries and known failures', async () => {
    const sim = await useSim({
      extraModels: Object.fromEntries(MODELS.map((m) => [m, 'chat'])),
      faults: [
        { route: 'POST /v1/chat/completions', kind: 'status', status: 500, model: 'sim-chat-c' },
        { route: 'POST /v1/chat/completions', kind: 'status', status: 500, model: 'sim-chat-f' },
      ],
    });
    const dir = tempDir('gw-baseline-');
    const env = { ...sim.env, ...isolatedDirs() };
    const before = await runGw(['probe', ...CHAT, '--json', '--no-history'], { env });
    expect(before.exitCode, before.stderr).toBe(1);
    const baseFile = join(dir, 'before.json');
    // No wall-clock luck: every baseline cell slower than any answer can be, but e's chat cell at 1 ms; e then
    // gets a 400 ms delay, so it alone is slower beyond any tolerance, however loaded the machine.
    const base = parse(before);
    for (const c of base.checks) c.latencyMs = c.id === 'chat:sim-chat-e' ? 1 : 3_600_000;
    writeFileSync(baseFile, JSON.stringify(base));
    // The deployment: a starts failing, b's stream is cut, d vanishes, e is slow, f recovers, c still fails.
    sim.sim.clearFaults();
    for (const f of [
      { route: 'POST /v1/chat/completions', kind: 'status', status: 500, model: 'sim-chat-c' },
      { route: 'POST /v1/chat/completions', kind: 'status', status: 503, model: 'sim-chat-a', stream: false },
      { route: 'POST /v1/chat/completions', kind: 'drop', after: 3, model: 'sim-chat-b', stream: true },
      { route: '*', kind: 'vanish', model: 'sim-chat-d' },
      { route: 'POST /v1/chat/completions', kind: 'latency', ms: 400, model: 'sim-chat-e', stream: false },
    ] as const)
      sim.sim.addFault({ ...f });
    const junit = join(dir, 'probe.xml');
    const html = join(dir, 'probe.html');
    const after = await runGw(
      [
        'probe',
        ...CHAT,
        '--json',
        '--baseline',
        baseFile,
        '--fail-on',
        'regressions',
        '--junit',
        junit,
        '--html',
        html,
      ],
      { env },
    );
    expect(after.exitCode, after.stderr).toBe(1);
    const report = parse(after);
    expect(report.baseline).toMatchObject({ source: baseFile, compared: true, tolerancePct: 20 });
    expect(changes(report)).toEqual([
      'chat-stream:sim-chat-b new-failure !',
      'chat-stream:sim-chat-c known-failure',
      'chat-stream:sim-chat-d vanished !',
      'chat-stream:sim-chat-f recovered',
      'chat:sim-chat-a new-failure !',
      'chat:sim-chat-c known-failure',
      'chat:sim-chat-d vanished !',
      'chat:sim-chat-e slower !',
      'chat:sim-chat-f recovered',
    ]);
    expect(cell(report, 'chat-stream:sim-chat-b').error?.code).toBe('stream_cut');
    // JUnit: each regression a failed case (the vanished ones their own), a known failure skipped.
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(
      /<testcase classname="gw.probe" name="chat:sim-chat-d" time="0.000">\s*<failure message="vanished since the baseline/,
    );
    expect(xml).toMatch(
      /name="chat:sim-chat-c"[^>]*>\s*<skipped message="known failure \(failing in the baseline too\)/,
    );
    expect(xml).toMatch(
      /name="chat:sim-chat-e"[^>]*>\s*<failure message="slower: [^"]*" type="latency_regression"/,
    );
    expect(xml).toMatch(/name="chat:sim-chat-f"[^>]*>\s*<system-out>recovered: passing again/);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('Compared with the baseline');
    expect(page).toContain('NEW-FAILURE');
    // The table: a "vs baseline" column, a row per vanished cell, the verdict on stderr.
    const table = await runGw(['probe', ...CHAT, '--baseline', baseFile, '--no-history'], { env });
    expect(table.stdout).toMatch(/^chat:sim-chat-a\tFAIL\tNEW FAILURE\t/m);
    expect(table.stdout).toMatch(/^chat:sim-chat-d\t-\tVANISHED\t\t\tsim-chat-d is no longer listed$/m);
    expect(table.stderr).toMatch(
      /^vs baseline \(.*before\.json, [^)]+\): 5 regressions: 2 new failures, 1 slower, 2 vanished, 2 recovered, 2 known failures$/m,
    );
  });

  it('exits 0 on known failures with --fail-on regressions, 1 by default; last reads the history', async () => {
    const sim = await useSim({
      extraModels: { 'sim-chat-a': 'chat' },
      faults: [{ route: 'POST /v1/chat/completions', kind: 'status', status: 500, model: 'sim-chat-a' }],
    });
    const env = { ...sim.env, ...isolatedDirs() };
    const args = ['probe', '--all-models', '--kind', 'chat', '--json'];
    // No history yet: nothing to compare with, said, and judged as without --baseline.
    const first = await runGw([...args, '--baseline', 'last', '--fail-on', 'regressions'], { env });
    expect(first.exitCode).toBe(1);
    expect(parse(first).baseline).toMatchObject({
      source: 'last',
      compared: false,
      reason: `no earlier run of ${sim.baseUrl} in the probe history`,
    });
    // A baseline slower than any answer can be: no latency noise can make a cell a regression.
    const dir = tempDir('gw-baseline-');
    const slow = parse(first);
    for (const c of slow.checks) c.latencyMs = 3_600_000;
    const file = join(dir, 'slow.json');
    writeFileSync(file, JSON.stringify(slow));
    const known = await runGw([...args, '--baseline', file, '--fail-on', 'regressions'], { env });
    expect(known.exitCode, known.stderr).toBe(0);
    expect(changes(parse(known))).toEqual(['chat:sim-chat-a known-failure']);
    expect((await runGw([...args, '--baseline', file], { env })).exitCode).toBe(1);
    // last: the latest run of this gateway that asked the same (the runs above were recorded).
    const last = await runGw([...args, '--baseline', 'last'], { env });
    expect(parse(last).baseline).toMatchObject({ source: 'last', compared: true });
    expect(changes(parse(last))).toEqual(['chat:sim-chat-a known-failure']);
    const other = await runGw(
      ['probe', '--all-models', '--kind', 'embeddings', '--json', '--baseline', 'last'],
      { env },
    );
    expect(parse(other).baseline?.reason).toMatch(
      new RegExp(
        `^no earlier run of ${sim.baseUrl.replace(/[.]/g, '\\.')} asked for --all-models of kinds embeddings`,
      ),
    );
  });

  it('refuses (exit 2, nothing sent) a baseline file of another gateway, of other checks, or damaged', async () => {
    const a = await useSim();
    const b = await useSim();
    const dir = tempDir('gw-baseline-');
    const env = { ...a.env, ...isolatedDirs() };
    const ofB = await runGw(['probe', '--only', 'models,chat', '--json'], { env: { ...env, ...b.env } });
    const fileB = join(dir, 'b.json');
    writeFileSync(fileB, ofB.stdout);
    const mine = await runGw(['probe', '--only', 'models,chat', '--json'], { env });
    const fileA = join(dir, 'a.json');
    writeFileSync(fileA, mine.stdout);
    const damaged = join(dir, 'damaged.json');
    writeFileSync(damaged, mine.stdout.replace(/"status": ?"pass"/, '"status": "fine"'));
    const sent = a.requests.length;
    const cases: Array<[string[], RegExp]> = [
      [
        ['--baseline', fileB],
        new RegExp(
          `--baseline: .*b\\.json: the baseline is a run of ${b.baseUrl.replace(/\./g, '\\.')}, this run probes`,
        ),
      ],
      [
        ['--baseline', fileA, '--only', 'models'],
        /--baseline: .*a\.json: the baseline asked for checks chat, models with chat-3\.7-plus; this run asks for checks models with/,
      ],
      [['--baseline', damaged], /--baseline: .*damaged\.json: checks\[0\]\.status: /],
      [['--baseline', join(dir, 'missing.json')], /--baseline: .*missing\.json/],
      [['--fail-on', 'regressions'], /--fail-on: only with --baseline/],
      [['--baseline', fileA, '--tolerance', 'ten'], /--tolerance: "ten" must be a percentage/],
    ];
    for (const [flags, message] of cases) {
      const only = flags.includes('--only') ? [] : ['--only', 'models,chat'];
      const r = await runGw(['probe', ...only, ...flags], { env });
      expect(r.exitCode, flags.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(a.requests.length).toBe(sent);
  });
});

describe('gw probe --prices: spend from the usage each answer reports', () => {
  const PRICES = {
    currency: 'USD',
    models: {
      'chat-3.7-plus': { input_per_million: 1, output_per_million: 40, cached_per_million: 0.5 },
      'text-embedding-v4': { input_per_million: 0.1, currency: 'CNY' },
      'sim-chat-a': { input_per_million: 2, output_per_million: 8 },
    },
  };
  type Usage = {
    prompt_tokens?: number;
    completion_tokens?: number;
    input_tokens?: number;
    output_tokens?: number;
  };
  const cost = (u: Usage, inRate: number, outRate: number): number =>
    Math.round(
      (((u.prompt_tokens ?? u.input_tokens ?? 0) * inRate +
        (u.completion_tokens ?? u.output_tokens ?? 0) * outRate) /
        1e6) *
        1e6,
    ) / 1e6;

  it('prices each row of a priced model on the table, JSON and HTML; a model’s currency overrides the file’s', async () => {
    const sim = await useSim({ extraModels: { 'sim-chat-a': 'chat' } });
    const dir = tempDir('gw-prices-');
    const file = join(dir, 'prices.json');
    writeFileSync(file, JSON.stringify(PRICES));
    const env = { ...sim.env, ...isolatedDirs() };
    const r = await runGw(['probe', '--only', 'models,chat,embeddings', '--prices', file, '--json'], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const report = parse(r);
    const chat = cell(report, 'chat');
    const usage = chat.data?.usage as Usage;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(chat.spend).toEqual({ currency: 'USD', amount: cost(usage, 1, 40) });
    const emb = cell(report, 'embeddings');
    expect(emb.spend).toEqual({ currency: 'CNY', amount: cost(emb.data?.usage as Usage, 0.1, 0) });
    expect(report.spend).toEqual({ USD: cost(usage, 1, 40), CNY: emb.spend?.amount });
    // --all-models rows, streamed or not, are priced from their final event's usage.
    const html = join(dir, 'p.html');
    const all = await runGw(['probe', ...TEXT, '--prices', file, '--html', html], { env });
    // warn: a loaded machine may deliver a stream in one burst; the answer and its usage are whole.
    const rows = parse(all).checks.filter(
      (c) => c.model === 'sim-chat-a' && (c.status === 'pass' || c.status === 'warn'),
    );
    expect(rows).toHaveLength(6);
    for (const c of rows)
      expect(c.spend, c.id).toEqual({ currency: 'USD', amount: cost(c.data?.usage as Usage, 2, 8) });
    expect(readFileSync(html, 'utf8')).toContain('spend at --prices');
    const table = await runGw(['probe', '--only', 'models,chat', '--prices', file, '--no-history'], { env });
    expect(table.stdout).toMatch(/^check\tresult\tlatency\trequest id\tdetail\tspend$/m);
    expect(table.stdout).toMatch(/^chat\tpass\t.*\t[\d.e-]+ USD$/m);
    expect(table.stderr).toMatch(/^spend at --prices: [\d.e-]+ USD$/m);
    // Without --prices nothing changes.
    const plain = parse(await runGw(['probe', '--only', 'models,chat', '--json', '--no-history'], { env }));
    expect(plain.spend).toBeUndefined();
    expect(cell(plain, 'chat').spend).toBeUndefined();
  });

  it('--budget covers the text and embeddings rows --prices prices: a row whose bound does not fit is not sent', async () => {
    const sim = await useSim({ extraModels: { 'sim-chat-a': 'chat' } });
    const dir = tempDir('gw-prices-');
    const file = join(dir, 'prices.json');
    writeFileSync(file, JSON.stringify(PRICES));
    const env = { ...sim.env, ...isolatedDirs() };
    const ask = [
      'probe',
      '--all-models',
      '--kind',
      'chat,embeddings',
      '--budget',
      '0.000001USD',
      '--budget',
      '0.000001CNY',
      '--json',
    ];
    const sentFor = (model: string): number =>
      sim.requests.filter((q) => q.method === 'POST' && (q.body as { model?: unknown }).model === model)
        .length;
    const r = await runGw([...ask, '--prices', file], { env });
    const report = parse(r);
    for (const id of ['chat:sim-chat-a', 'embeddings:text-embedding-v4']) {
      expect(cell(report, id)).toMatchObject({ status: 'skip' });
      expect(cell(report, id).detail).toMatch(
        /^not probed: (USD|CNY) 0\.\d+ would pass --budget (USD|CNY) 0\.000001/,
      );
    }
    expect(sentFor('sim-chat-a')).toBe(0);
    expect(sentFor('text-embedding-v4')).toBe(0);
    // A model the file does not price is probed as before; so is every row without --prices.
    expect(cell(report, 'chat:chat-3-vl-plus').status).toBe('pass');
    const plain = parse(await runGw(ask, { env }));
    expect(cell(plain, 'chat:sim-chat-a').status).toBe('pass');
    expect(sentFor('sim-chat-a')).toBe(1);
    // A budget the bounds fit: the rows are sent, and their spend stays under it.
    const roomy = parse(
      await runGw([...ask.slice(0, -5), '--budget', '1USD', '--budget', '1CNY', '--json', '--prices', file], {
        env,
      }),
    );
    expect(cell(roomy, 'chat:sim-chat-a').status).toBe('pass');
    expect(roomy.spend?.USD).toBeGreaterThan(0);
    expect(roomy.spend?.USD).toBeLessThanOrEqual(1);
  });

  it('--budget counts a probed row at its real spend once answered: more rows fit than their bounds allow', async () => {
    const models = ['sim-chat-a', 'sim-chat-b', 'sim-chat-c'];
    const sim = await useSim({ extraModels: Object.fromEntries(models.map((m) => [m, 'chat' as const])) });
    const dir = tempDir('gw-prices-');
    const file = join(dir, 'prices.json');
    // Input dear, output cheap: a row's bound (every body byte an input token) is several times its real spend.
    const rate = { input_per_million: 10, output_per_million: 1 };
    writeFileSync(
      file,
      JSON.stringify({ currency: 'USD', models: Object.fromEntries(models.map((m) => [m, rate])) }),
    );
    const env = { ...sim.env, ...isolatedDirs() };
    const ask = ['probe', '--all-models', '--kind', 'chat', '--prices', file, '--json'];
    // The bound of one row, as a budget too small for it says.
    const tight = parse(await runGw([...ask, '--budget', '0.000001USD'], { env }));
    const m = /^not probed: USD ([\d.]+) would pass/.exec(cell(tight, 'chat:sim-chat-a').detail);
    const bound = Number(m?.[1]);
    expect(bound).toBeGreaterThan(0);
    // Room for one bound and a half: counting bounds alone, one of the three rows would be probed. Rows are
    // admitted in plan order, a row that fits only if a row still running spends less than its bound waiting
    // for it, so the outcome does not depend on which answer comes first.
    const budget = Math.round(bound * 1.5 * 1e6) / 1e6;
    const report = parse(await runGw([...ask, '--budget', `${budget}USD`], { env }));
    for (const model of models) expect(cell(report, `chat:${model}`).status).toBe('pass');
    expect(report.spend?.USD).toBeLessThanOrEqual(budget);
  });

  it('refuses a damaged prices file (exit 2 naming the file and the field) before anything is sent', async () => {
    const sim = await useSim();
    const dir = tempDir('gw-prices-');
    const env = { ...sim.env, ...isolatedDirs() };
    const write = (name: string, doc: unknown): string => {
      const p = join(dir, name);
      writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc));
      return p;
    };
    const cases: Array<[string, RegExp]> = [
      [
        write('neg.json', { currency: 'USD', models: { m: { input_per_million: -1 } } }),
        /--prices: .*neg\.json: models\.m\.input_per_million: /,
      ],
      [
        write('cur.json', { currency: 'EUR', models: {} }),
        /--prices: .*cur\.json: currency: must be CNY or USD/,
      ],
      [
        write('typo.json', { currency: 'USD', models: { m: { output_per_milion: 1 } } }),
        /--prices: .*typo\.json: models\.m: .*output_per_milion/,
      ],
      [write('bad.json', '{"currency":'), /--prices: ".*bad\.json" is not valid JSON/],
    ];
    for (const [file, message] of cases) {
      const r = await runGw(['probe', '--only', 'models,chat', '--prices', file], { env });
      expect(r.exitCode, file).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(sim.requests).toHaveLength(0);
  });
});
