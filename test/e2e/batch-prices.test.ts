/**
 * `gw batch ... --prices`: the `--dry-run` upper bound, the spend each answer's usage implies, `--budget` over
 * text, embeddings and images, and the prices kept for retry and resume; without `--prices` nothing changes.
 * In-process against gw sim (the helpers' batch simulator: known token, instant tasks).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchSim, gw, jsonl, writeInput, type Line } from '../helpers/batch.js';
import { isolatedDirs, type GwResult } from '../helpers/gw.js';
import { tempDir } from '../helpers/tmp.js';

const PRICES = {
  currency: 'USD',
  models: {
    'chat-3.7-plus': { input_per_million: 3, output_per_million: 15, cached_per_million: 0.3 },
    'text-embedding-v4': { input_per_million: 0.1, currency: 'CNY' },
    'image-gen-1': { per_image: 0.04 },
    'clip-1.1-t2v': { per_video_second: 0.5 },
  },
};

type Money = Partial<Record<'CNY' | 'USD', number>>;
interface Plan {
  estimated_total: Money;
  unpriced: number;
  upper_bound?: true;
  unpriced_reason?: string;
}
interface Status {
  spend: { estimated: Money; implied_by_usage: Money };
}

const line = (id: string, url: string, body: Record<string, unknown>): Line => ({
  custom_id: id,
  method: 'POST',
  url,
  body,
});
const chatLine = (id: string, words: number, maxTokens: number, extra: object = {}): Line =>
  line(id, '/v1/chat/completions', {
    model: 'chat-3.7-plus',
    messages: [{ role: 'user', content: `${'fox '.repeat(words)}${id}` }],
    max_tokens: maxTokens,
    ...extra,
  });

/** Batches of several shapes: chat with max_tokens (cut or not, cached), responses, messages, embeddings, images. */
const SHAPES: Record<string, Line[]> = {
  chat: [
    chatLine('c-short', 2, 200),
    chatLine('c-cut', 60, 3),
    chatLine('c-long', 400, 1000),
    chatLine('c-mid', 30, 50),
    line('c-cached', '/v1/chat/completions', {
      model: 'chat-3.7-plus',
      messages: [{ role: 'user', content: '[sim:cache] a cached prompt of some length to price' }],
      max_tokens: 64,
    }),
  ],
  texts: [
    line('r1', '/v1/responses', {
      model: 'chat-3.7-plus',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'a long answer please '.repeat(20) }] }],
      max_output_tokens: 5,
    }),
    line('m1', '/v1/messages', {
      model: 'chat-3.7-plus',
      max_tokens: 40,
      messages: [{ role: 'user', content: '[sim:cache] hello messages' }],
    }),
  ],
  embeddings: [
    line('e1', '/v1/embeddings', { model: 'text-embedding-v4', input: ['one sentence to embed'] }),
    line('e2', '/v1/embeddings', {
      model: 'text-embedding-v4',
      input: ['a', 'b c d e f g', 'z'.repeat(300)],
    }),
  ],
  images: [
    line('i1', '/v1/images/generations', { model: 'image-gen-1', prompt: 'a fox', n: 3 }),
    line('i2', '/v1/images/generations', { model: 'image-gen-1', prompt: 'a cat' }),
  ],
  video: [
    line('v1', '/v1/videos', { model: 'clip-1.1-t2v', prompt: 'a fox', seconds: 4, resolution: '720p' }),
  ],
};

function parse<T>(r: GwResult): T {
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

async function setup(lines: Line[], o: Parameters<typeof batchSim>[0] = {}) {
  const sim = await batchSim(o);
  const dir = tempDir('gw-batch-prices-');
  const prices = join(dir, 'prices.json');
  writeFileSync(prices, JSON.stringify(PRICES));
  const input = writeInput(dir, lines);
  const out = join(dir, 'out');
  const home = isolatedDirs();
  const run = (argv: string[]) => gw(argv, sim.env, home);
  /** `gw batch run <input> --out <out> [--prices <file>] ...flags`. */
  const batch = (flags: string[], priced = true) =>
    run(['batch', 'run', input, '--out', out, ...(priced ? ['--prices', prices] : []), ...flags]);
  return {
    sim,
    dir,
    prices,
    input,
    out,
    run,
    batch,
    plan: async (priced = true) => parse<Plan>(await batch(['--dry-run', '--json'], priced)),
    status: async () => parse<Status>(await run(['batch', 'status', out, '--json'])),
  };
}

describe('gw batch --prices: the --dry-run bound is never passed by the real spend', () => {
  it.each(Object.keys(SHAPES))('%s', async (shape) => {
    const t = await setup(SHAPES[shape] as Line[]);
    const plan = await t.plan();
    expect(plan).toMatchObject({ unpriced: 0, upper_bound: true });
    expect(t.sim.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
    const done = await t.batch(['--json']);
    expect(done.exitCode, done.stderr).toBe(0);
    const st = await t.status();
    const real = st.spend.implied_by_usage;
    const currencies = Object.keys(plan.estimated_total) as Array<'CNY' | 'USD'>;
    expect(Object.keys(real).sort()).toEqual([...currencies].sort());
    for (const c of currencies) {
      expect(real[c]).toBeGreaterThan(0);
      expect(real[c]).toBeLessThanOrEqual(plan.estimated_total[c] as number);
    }
    // The run's estimate is the same bound the dry run printed.
    expect(st.spend.estimated).toEqual(plan.estimated_total);
  });

  it('prices each answer from its own usage: the spend of one chat line, figured by hand', async () => {
    const t = await setup([chatLine('one', 10, 500)]);
    const r = await t.batch([]);
    expect(r.exitCode, r.stderr).toBe(0);
    const [result] = jsonl(join(t.out, 'results.jsonl')) as Array<{
      response: { body: { usage: { prompt_tokens: number; completion_tokens: number } } };
    }>;
    const u = result?.response.body.usage;
    expect(u?.prompt_tokens).toBeGreaterThan(0);
    const want = Math.round((u?.prompt_tokens ?? 0) * 3 + (u?.completion_tokens ?? 0) * 15) / 1e6;
    const st = await t.status();
    expect(st.spend.implied_by_usage.USD).toBeCloseTo(want, 9);
    const human = await t.run(['batch', 'status', t.out]);
    expect(human.stdout).toMatch(new RegExp(`implied by usage: +USD ${String(want).replace('.', '\\.')}`));
  });
});

describe('gw batch --prices and --budget', () => {
  // Four lines of one shape (ids of one length: equal bounds) with max_tokens 1000, which the simulator's short
  // echo never comes near: each line's real spend is a small part of its bound.
  const FOUR = ['a', 'b', 'c', 'd'].map((id) => chatLine(id, 5, 1000));
  type RunDoc = { succeeded: number; not_submitted: number; reason: string; budget_note?: string };

  it('--budget counts an answered line at its real spend, not its bound: more lines go than bounds allow', async () => {
    const t = await setup(FOUR);
    const plan = await t.plan();
    const each = (plan.estimated_total.USD as number) / 4;
    // Room for two bounds and a half: counting bounds alone, the third line would not go.
    const budget = `${(each * 2.5).toFixed(6)}USD`;
    // Deterministic, not a race: with --concurrency 1 each answer (and the swap of its bound for its spend) comes
    // before the next line is admitted; at the default concurrency a line that fits only if the lines in flight
    // cost less than their bounds waits for their answers instead of stopping the run.
    for (const [out, flags] of [
      [t.out, ['--concurrency', '1']],
      [join(t.dir, 'default-concurrency'), []],
    ] as const) {
      const r = await t.run([
        'batch',
        'run',
        t.input,
        '--out',
        out,
        '--prices',
        t.prices,
        '--budget',
        budget,
        '--json',
        ...flags,
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ succeeded: 4, not_submitted: 0, reason: 'complete' });
      const st = parse<Status>(await t.run(['batch', 'status', out, '--json']));
      expect(st.spend.implied_by_usage.USD).toBeLessThanOrEqual(each * 2.5);
    }
  });

  it('stops at the first line whose bound does not fit beside the real spend of the lines before it', async () => {
    const t = await setup(FOUR);
    const plan = await t.plan();
    const each = (plan.estimated_total.USD as number) / 4;
    // What one line really costs (all four are alike): a run with no budget.
    const full = join(t.dir, 'full');
    expect((await t.run(['batch', 'run', t.input, '--out', full, '--prices', t.prices])).exitCode).toBe(0);
    const real =
      (parse<Status>(await t.run(['batch', 'status', full, '--json'])).spend.implied_by_usage.USD as number) /
      4;
    expect(real).toBeLessThan(each / 10);
    // b's bound fits beside a's real spend; c's does not beside a's and b's (half a line's spend short).
    const cap = Math.round((real + each + real / 2) * 1e6) / 1e6;
    const r = await t.batch(['--budget', `${cap}USD`, '--json']);
    expect(r.exitCode).toBe(1);
    const doc = JSON.parse(r.stdout) as RunDoc;
    expect(doc).toMatchObject({ succeeded: 2, not_submitted: 2, reason: 'budget' });
    // The note shows the amounts to a millionth (cents would read 0.00): the real spend of a and b, c's bound.
    const micro = (x: number): number => Math.round(x * 1e6) / 1e6;
    expect(doc.budget_note).toBe(
      `budget ${cap} USD reached (${micro(2 * real)} submitted; c would add ${micro(each)})`,
    );
    const st = await t.status();
    expect(st.spend.implied_by_usage.USD).toBeLessThanOrEqual(cap);
  });

  it('a text line without max_tokens is unpriced: --budget refuses to start, naming why; nothing is sent', async () => {
    const t = await setup([
      line('x', '/v1/chat/completions', {
        model: 'chat-3.7-plus',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    ]);
    const r = await t.batch(['--budget', '1USD']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no max_tokens');
    expect(t.sim.requests.filter((q) => q.method === 'POST')).toHaveLength(0);
    const plan = await t.plan();
    expect(plan).toMatchObject({
      unpriced: 1,
      unpriced_reason: expect.stringContaining('no max_tokens') as unknown,
    });
  });

  it('retry and a resume without --prices price the same way (the run keeps the file)', async () => {
    const t = await setup([chatLine('one', 3, 100), chatLine('two', 3, 100)]);
    const plan = await t.plan();
    const each = (plan.estimated_total.USD as number) / 2;
    // Room for one bound: 'two' does not fit beside the real spend of 'one'.
    const first = await t.batch(['--budget', `${each.toFixed(6)}USD`]);
    expect(first.exitCode).toBe(1);
    expect(first.stderr).toContain('--prices');
    // The file is gone: the run recorded what it read.
    writeFileSync(t.prices, 'not json');
    const again = await t.batch(['--budget', `${(each * 2.5).toFixed(6)}USD`], false);
    expect(again.exitCode, again.stderr).toBe(0);
    const st = await t.status();
    expect(st.spend.implied_by_usage.USD).toBeGreaterThan(0);
    expect(st.spend.estimated.USD).toBeCloseTo(each * 2, 9);
    const resumedPlan = await t.plan(false);
    expect(resumedPlan.upper_bound).toBe(true);
    const state = readFileSync(join(t.out, 'state.jsonl'), 'utf8');
    expect(state).toContain('"input_per_million":3');
  });
});

describe('gw batch --prices after a crash', () => {
  it('a line whose answer reached results.jsonl before its state record is counted at its spend', async () => {
    const t = await setup(['a', 'b', 'c'].map((id) => chatLine(id, 5, 1000)));
    const plan = await t.plan();
    const each = (plan.estimated_total.USD as number) / 3;
    const r = await t.batch(['--concurrency', '1']);
    expect(r.exitCode, r.stderr).toBe(0);
    const all = (await t.status()).spend.implied_by_usage.USD as number;
    const real = all / 3;
    // The log of a run killed just after b's answer was written (results.jsonl is made durable before the state
    // record that finishes its item): b's "done", and all of c, are not there.
    const statePath = join(t.out, 'state.jsonl');
    const records = readFileSync(statePath, 'utf8').trimEnd().split('\n');
    const cut = records.findIndex(
      (l) => (JSON.parse(l) as { e: string; id?: string }).e === 'done' && l.includes('"id":"b"'),
    );
    writeFileSync(statePath, `${records.slice(0, cut).join('\n')}\n`);
    const results = join(t.out, 'results.jsonl');
    const kept = readFileSync(results, 'utf8')
      .trimEnd()
      .split('\n')
      .filter((l) => !l.includes('"custom_id":"c"'));
    writeFileSync(results, `${kept.join('\n')}\n`);
    // Room for c's bound only beside the real spend of a and b: were b counted at its bound, c would not go.
    const cap = Math.round((2 * real + each + real / 2) * 1e6) / 1e6;
    const again = await t.batch(['--budget', `${cap}USD`, '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ succeeded: 3, not_submitted: 0, reason: 'complete' });
    // b was not sent again, and its spend is in the status as the uncut run had it.
    const creates = t.sim.requests.filter((q) => q.method === 'POST');
    expect(creates).toHaveLength(4);
    expect((await t.status()).spend.implied_by_usage.USD).toBeCloseTo(all, 9);
  });
});

describe('gw batch retry --prices', () => {
  it('retries with the prices and budget its run recorded, though the file is gone', async () => {
    const fault = { route: 'POST /v1/chat/completions', kind: 'status' as const, status: 400, times: 1 };
    const t = await setup([chatLine('one', 3, 100)], { faults: [fault] });
    const first = await t.batch(['--budget', '1USD']);
    expect(first.exitCode).toBe(1);
    writeFileSync(t.prices, 'not json');
    const retry = await t.run(['batch', 'retry', t.out]);
    expect(retry.exitCode, retry.stderr).toBe(0);
    const st = await t.status();
    expect(st.spend.implied_by_usage.USD).toBeGreaterThan(0);
    expect(st.spend.implied_by_usage.USD).toBeLessThanOrEqual(st.spend.estimated.USD as number);
  });
});

describe('gw batch without --prices: nothing changes', () => {
  it('the dry run, the run and the status have the keys and figures they had', async () => {
    const t = await setup([...(SHAPES.chat as Line[]), ...(SHAPES.video as Line[])]);
    const plan = parse<Record<string, unknown>>(await t.batch(['--dry-run', '--json'], false));
    expect(Object.keys(plan).sort()).toEqual(
      ['already_finished', 'estimated_total', 'groups', 'in_shard', 'lines', 'unpriced'].sort(),
    );
    expect(plan).toMatchObject({ estimated_total: { CNY: 3.6 }, unpriced: 5 });
    const human = await t.batch(['--dry-run'], false);
    expect(human.stdout).toContain('estimated total: CNY 3.60 (list prices; nothing was sent)');
    expect(human.stdout).toContain(
      'unpriced lines: 5 (billed by tokens, images or a default length the request does not fix)',
    );
    const r = await t.batch(['--json'], false);
    expect(r.exitCode, r.stderr).toBe(0);
    const st = await t.status();
    expect(st.spend).toEqual({ estimated: { CNY: 3.6 }, implied_by_usage: { CNY: 3.6 } });
    expect(readFileSync(join(t.out, 'state.jsonl'), 'utf8')).not.toContain('"prices"');
  });
});
