/** `gw load --prices`: a step's spend summed exactly, read back by the report schema, and merged exactly. */
import { describe, expect, it } from 'vitest';
import { PriceTable, pricesSchema } from '../../../src/contract/prices.js';
import { UsageError } from '../../../src/core/errors.js';
import { mergeReports } from '../../../src/load/merge.js';
import { Recorder } from '../../../src/load/recorder.js';
import { stepReport } from '../../../src/load/report.js';
import { TextBudget } from '../../../src/load/spend.js';
import type { Hold } from '../../../src/core/budget.js';
import type { Outcome, Sendable } from '../../../src/load/exchange.js';
import { checkReport, type RunReport } from '../../../src/load/schema.js';
import { loadFixture } from '../../helpers/report-fixtures.js';

const prices = new PriceTable(
  pricesSchema.parse({
    currency: 'USD',
    models: {
      a: { per_image: 0.1 },
      b: { per_image: 0.2 },
      t: { input_per_million: 0.37, output_per_million: 15, cached_per_million: 0.05 },
      v: { per_video_second: 0.9, currency: 'CNY' },
    },
  }),
);

function outcome(o: Partial<Outcome>): Outcome {
  return {
    api: 'chat',
    stream: false,
    ok: true,
    status: 200,
    startMs: 0,
    lagMs: 0,
    e2eMs: 5,
    itlMs: [],
    sent: true,
    ...o,
  };
}

describe('a step priced at --prices', () => {
  it('sums each request in millionths: 0.1 + 0.2 is 0.3, per currency, beside the tokens', () => {
    const rec = new Recorder([], prices);
    const outcomes = [
      outcome({ api: 'images', model: 'a', images: 1 }),
      outcome({ api: 'images', model: 'b', images: 1 }),
      // 100 input (40 cached) and 8 output: 60 × 0.37 + 40 × 0.05 + 8 × 15 = 144.2 millionths, rounded to 144.
      outcome({ model: 't', inputTokens: 100, cachedTokens: 40, outputTokens: 8 }),
      outcome({ api: 'video', model: 'v', videoSeconds: 3 }),
    ];
    for (const o of outcomes) rec.add(o);
    const st = stepReport(rec, { label: 'concurrency=1', mode: 'closed' }, undefined);
    expect(st.spend).toEqual({
      total: { CNY: 2.7, USD: 0.300144 },
      priced: 4,
      unpriced: 0,
      unpriced_models: [],
    });
    expect(st.input_tokens).toBe(100);
    expect(st.cached_tokens).toBe(40);
    // Each request carries its own price (the --csv row shows it).
    expect(outcomes.map((o) => o.spend?.amount)).toEqual([0.1, 0.2, 0.000144, 2.7]);
  });

  it('counts a successful request it cannot price as unpriced, never as 0, and names models not in the file', () => {
    const rec = new Recorder([], prices);
    rec.add(outcome({ model: 'elsewhere', inputTokens: 5, outputTokens: 1 }));
    rec.add(outcome({ model: 't' })); // no usage reported
    rec.add(outcome({ model: 'other', ok: false, code: 'service_error', status: 500 }));
    const st = stepReport(rec, { label: 'rate=5/s', mode: 'open' }, undefined);
    expect(st.spend).toEqual({ total: {}, priced: 0, unpriced: 2, unpriced_models: ['elsewhere'] });
  });

  it('without --prices the step has no spend, no input or cached tokens: the report is as before', () => {
    const rec = new Recorder([]);
    rec.add(outcome({ model: 't', inputTokens: 100, cachedTokens: 40, outputTokens: 8 }));
    const st = stepReport(rec, { label: 'concurrency=1', mode: 'closed' }, undefined);
    expect(Object.keys(st)).not.toContain('spend');
    expect(Object.keys(st)).not.toContain('input_tokens');
    expect(Object.keys(st)).not.toContain('cached_tokens');
  });
});

/** A fixture report priced at `sha` whose one step spent `usd`. */
function priced(usd: number, sha: string | undefined, at: string): RunReport {
  const r = loadFixture({ requests: 40 });
  r.created_at = at;
  if (sha !== undefined) {
    r.config = { ...r.config, prices: { sha256: sha } };
    const st = r.steps[0] as RunReport['steps'][number];
    st.input_tokens = 1000;
    st.cached_tokens = 10;
    st.spend = { total: { USD: usd }, priced: 3, unpriced: 1, unpriced_models: ['m'] };
    r.spend = { USD: usd };
  }
  return r;
}

describe('the report schema reads spend back', () => {
  it('keeps a step spend and the run total; a report written without them parses as before', () => {
    const old = loadFixture({ requests: 40 });
    const read = checkReport(JSON.parse(JSON.stringify(old)));
    expect(read.ok).toBe(true);
    if (read.ok) {
      expect(read.report.spend).toBeUndefined();
      expect(read.report.steps[0]?.spend).toBeUndefined();
      expect(JSON.stringify(read.report)).toBe(JSON.stringify(old));
    }
    const withSpend = checkReport(JSON.parse(JSON.stringify(priced(0.25, 'ab', '2026-01-01T00:00:00Z'))));
    expect(withSpend.ok && withSpend.report.steps[0]?.spend?.total).toEqual({ USD: 0.25 });
    expect(withSpend.ok && withSpend.report.spend).toEqual({ USD: 0.25 });
    expect(withSpend.ok && withSpend.report.steps[0]?.input_tokens).toBe(1000);
  });

  it('refuses a damaged spend naming its field', () => {
    const bad = JSON.parse(JSON.stringify(priced(0.25, 'ab', '2026-01-01T00:00:00Z'))) as RunReport;
    (bad.steps[0]?.spend as { total: Record<string, number> }).total = { USD: -1 };
    expect(checkReport(bad)).toMatchObject({ ok: false, field: 'steps[0].spend.total.USD' });
  });
});

describe('gw load merge with --prices', () => {
  it('adds the spend of the parts exactly (in millionths) with their tokens and counts', () => {
    const merged = mergeReports([
      { path: 'a.json', report: priced(0.1, 'ab', '2026-01-01T00:00:00Z') },
      { path: 'b.json', report: priced(0.2, 'ab', '2026-01-01T00:00:01Z') },
      { path: 'c.json', report: priced(0.000001, 'ab', '2026-01-01T00:00:02Z') },
    ]);
    expect(merged.steps[0]?.spend).toEqual({
      total: { USD: 0.300001 },
      priced: 9,
      unpriced: 3,
      unpriced_models: ['m'],
    });
    expect(merged.spend).toEqual({ USD: 0.300001 });
    expect(merged.steps[0]?.input_tokens).toBe(3000);
    expect(merged.steps[0]?.cached_tokens).toBe(30);
    expect(merged.config.prices).toEqual({ sha256: 'ab' });
  });

  it('refuses parts priced with different files, or one priced and one not (exit 2)', () => {
    const a = { path: 'a.json', report: priced(0.1, 'ab', '2026-01-01T00:00:00Z') };
    const other = { path: 'b.json', report: priced(0.1, 'cd', '2026-01-01T00:00:01Z') };
    const none = { path: 'c.json', report: priced(0.1, undefined, '2026-01-01T00:00:02Z') };
    expect(() => mergeReports([a, other])).toThrow(UsageError);
    expect(() => mergeReports([a, other])).toThrow(
      'merge: a.json and b.json were priced with different --prices files',
    );
    expect(() => mergeReports([none, a])).toThrow(
      'merge: c.json ran without --prices and a.json with --prices',
    );
  });

  it('merges reports without --prices as before: no spend appears', () => {
    const merged = mergeReports([
      { path: 'a.json', report: priced(0, undefined, '2026-01-01T00:00:00Z') },
      { path: 'b.json', report: priced(0, undefined, '2026-01-01T00:00:01Z') },
    ]);
    expect(merged.spend).toBeUndefined();
    expect(Object.keys(merged.steps[0] ?? {})).not.toContain('spend');
    expect(Object.keys(merged.steps[0] ?? {})).not.toContain('input_tokens');
  });
});

describe('TextBudget: a request held at its bound until its answer ends', () => {
  const req = {
    api: 'chat',
    model: 't',
    stream: true,
    path: '/v1/chat/completions',
    body: Buffer.from('{}'),
    bound: { currency: 'USD', amount: 0.001 },
  } as unknown as Sendable;

  it('releases what billed nothing, settles with the usage, keeps the bound when the spend is unknown', () => {
    const budget = new TextBudget(new Map([['USD', 0.0025]]), prices);
    const holds = [budget.reserve(req), budget.reserve(req)];
    expect(holds.every((h) => typeof h === 'object')).toBe(true);
    // A third does not fit beside the two held, but may once they settle.
    expect(budget.reserve(req)).toBe('wait');
    budget.settle(holds[0] as Hold, outcome({ model: 't', ok: false, status: 429, code: 'rate_limited' }));
    expect(budget.ledger.spent('USD')).toBe(0.001);
    // 100 input and 10 output tokens: 37 + 150 millionths replace the bound.
    budget.settle(holds[1] as Hold, outcome({ model: 't', inputTokens: 100, outputTokens: 10 }));
    expect(budget.ledger.spent('USD')).toBe(0.000187);
    const cut = budget.reserve(req) as Hold;
    budget.settle(cut, outcome({ model: 't', ok: false, status: 200, code: 'stream_incomplete' }));
    expect(budget.ledger.spent('USD')).toBe(0.001187);
    const never = budget.reserve(req) as Hold;
    budget.settle(
      never,
      outcome({ model: 't', ok: false, status: 0, sent: false, code: 'connection_refused' }),
    );
    expect(budget.ledger.spent('USD')).toBe(0.001187);
    const last = budget.reserve(req) as Hold;
    // 0.002187 counted with it: another fits only if it settles for less.
    expect(budget.reserve(req)).toBe('wait');
    budget.settle(last, outcome({ model: 't', ok: false, status: 0, code: 'timeout' }));
    // Its bound kept (a timeout may have billed): no room can come.
    expect(budget.reserve(req)).toBe('stop');
  });
});
