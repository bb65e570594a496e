import { describe, expect, it } from 'vitest';
import { batchHtml, itemsOverTime, stateOfEvent } from '../../../src/report/batch.js';
import { historyHtml } from '../../../src/report/history.js';
import { binsOf, latencyTerms, loadHtml } from '../../../src/report/load.js';
import { probeHtml } from '../../../src/report/probe.js';
import type { ProbeReport } from '../../../src/probe/runner.js';
import { ms, pct } from '../../../src/report/svg.js';
import { batchFixture, historyFixture, loadFixture } from '../../helpers/report-fixtures.js';

const meta = {
  command: 'gw test',
  version: '9.9.9',
  gateway: 'https://user:sk-secret@gw.example.com/base?key=sk-secret',
  madeAt: new Date(Date.UTC(2026, 10, 23, 14, 0, 0)),
};

/** The kinds of the charts of a page, in order. */
function kinds(html: string): string[] {
  return [...html.matchAll(/<svg class="plot" data-kind="(\w+)"/g)].map((m) => m[1] as string);
}

/** Asserts `html` contains `text` without printing the whole page when it does not. */
function has(html: string, text: string): void {
  if (!html.includes(text)) expect.fail(`the report lacks ${JSON.stringify(text)}`);
}

/** Facts every report carries; no script, nothing fetched, no secret. */
function expectSelfContained(html: string): void {
  expect(html).toMatch(/^<!doctype html>/);
  has(html, `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
  expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\((?!#)|src=|href=/i);
  has(html, 'gw 9.9.9');
  has(html, 'https://gw.example.com/base');
  expect(html).not.toContain('sk-secret');
  has(html, '2026-11-23 14:00:00 UTC');
  has(html, '@media (prefers-color-scheme:dark)');
  has(html, '@media print');
  expect(html).not.toMatch(/NaN|undefined|Infinity/);
}

describe('load report', () => {
  it('a 10 000-request run stays under 500 KB, with CDFs, histograms, requests/s and errors', () => {
    const doc = loadFixture({ requests: 10_000 });
    const html = loadHtml(doc, meta);
    expectSelfContained(html);
    expect(Buffer.byteLength(html)).toBeLessThan(500 * 1024);
    expect(kinds(html)).toEqual(['line', 'line', 'line', 'histogram', 'histogram', 'line', 'bars']);
    const step = doc.steps[0]!;
    // The figures are the JSON's, as written there.
    has(html, `>${step.requests}</dd>`);
    has(html, `p99 ${ms(step.latency_ms.ttft.p99)}`);
    has(html, `${ms(step.latency_ms.e2e.p50)} / ${ms(step.latency_ms.e2e.p99)}`);
    for (const code of Object.keys(step.errors_by_code)) has(html, `>${code}</text>`);
  });

  it('a sweep draws one CDF line per step and the throughput-latency curve with its knee', () => {
    const doc = loadFixture({
      requests: 400,
      sweep: [2, 4, 8, 16, 32, 64],
      slo: 'e2e.p95<2s,ttft.p95<500ms',
    });
    const html = loadHtml(doc, meta);
    expectSelfContained(html);
    expect(kinds(html)[0]).toBe('line');
    has(html, 'id="load-sweep"');
    const knee = doc.sweep!.knee!;
    has(html, `knee c=${knee.value}`);
    has(html, 'SLO e2e.p95&lt;2s');
    has(html, 'SLO ttft.p95&lt;500ms');
    has(html, 'SLO missed: e2e.p95&lt;2s,ttft.p95&lt;500ms');
    // One CDF line per step in the e2e chart.
    const e2e = /<figure class="chart" id="load-cdf-e2e">.*?<\/figure>/s.exec(html)?.[0] ?? '';
    expect(e2e.match(/<path class="line s\d" d="[^"]+" data-n=/g)).toHaveLength(6);
  });

  it('histogram bins are shares of requests summing to 100% with what is above p99.9', () => {
    const step = loadFixture({ requests: 3000 }).steps[0]!;
    const b = binsOf(step.histograms.ttft)!;
    const sum = b.bins.reduce((t, x) => t + x.count, 0) + b.clippedAbove;
    expect(sum).toBeCloseTo(100, 0);
    expect(b.bins[0]!.x0).toBeCloseTo(step.cdf_ms.ttft[0]![1], 0);
    expect(binsOf('')).toBeUndefined();
  });

  it('reads the latency terms of an SLO expression', () => {
    expect(
      latencyTerms('ttft.p95<800ms, e2e.p99<10s,errors<1%,itl<50,latency.max<=2m,tpot.mean<5ms'),
    ).toEqual([
      { metric: 'ttft', p: 95, ms: 800, text: 'ttft.p95<800ms' },
      { metric: 'e2e', p: 99, ms: 10_000, text: 'e2e.p99<10s' },
      { metric: 'itl', p: 100, ms: 50, text: 'itl<50' },
      { metric: 'e2e', p: 100, ms: 120_000, text: 'latency.max<=2m' },
    ]);
  });
});

describe('probe history report', () => {
  it('uptime bars per check and model, a segment per run, the change flagged, latency over time', () => {
    const doc = historyFixture(6);
    const html = historyHtml(doc, meta);
    expectSelfContained(html);
    expect(kinds(html)).toEqual(['timeline', 'line', 'line', 'line', 'line', 'line', 'line']);
    const runs = doc.series.reduce((t, s) => t + s.points.length, 0);
    has(html, `<g class="segs" data-n="${runs}">`);
    expect(html).toMatch(/data-state="fail"/);
    has(html, '>appeared: embeddings · text-embedding-v4</text>');
    has(html, 'text-embedding-v4 is listed now');
    has(html, `>1d ${pct(doc.series[0]!.uptime['1d']!)}</text>`);
  });

  it('an empty history says so instead of drawing empty charts', () => {
    const html = historyHtml(
      {
        generatedAt: '2026-11-23T14:00:00.000Z',
        since: null,
        filters: {},
        runs: [],
        series: [],
        changes: [],
        markers: [],
      },
      meta,
    );
    expectSelfContained(html);
    expect(kinds(html)).toEqual([]);
    has(html, 'No probe runs recorded yet');
  });
});

describe('batch status report', () => {
  it('items by state over time (and per item when small), spend with its budget, failures by code', () => {
    const doc = batchFixture(24);
    const html = batchHtml(doc, meta);
    expectSelfContained(html);
    expect(kinds(html)).toEqual(['stacked', 'timeline', 'line', 'bars']);
    has(html, 'budget CNY 100.00');
    for (const code of Object.keys(doc.failures_by_code)) has(html, `>${code}</text>`);
    has(html, `>${doc.in_doubt[0]}</td>`);
    has(html, `>CNY ${doc.spend.estimated.CNY!.toFixed(2)}</dd>`);
  });

  it('the stack at the end holds every item in its final state (the counts of --json)', () => {
    const doc = batchFixture(24);
    const last = itemsOverTime(doc.items).at(-1)!;
    expect(last.counts).toEqual({
      done: doc.counts.succeeded,
      failed: doc.counts.failed,
      doubt: doc.counts.in_doubt,
      running: 0,
      sending: 0,
    });
    expect(stateOfEvent('queued')).toBe('running');
    expect(stateOfEvent('unsent:rate_limit_exceeded')).toBeUndefined();
  });

  it('a large batch draws the stack only; ids are escaped', () => {
    const doc = batchFixture(300);
    doc.items[0]!.custom_id = '<script>x</script>';
    doc.in_doubt.push('<b>y</b>');
    const html = batchHtml(doc, meta);
    expectSelfContained(html);
    expect(kinds(html)).toEqual(['stacked', 'line', 'bars']);
    has(html, '&lt;b&gt;y&lt;/b&gt;');
  });
});

describe('probe report', () => {
  it('SLO bounds of --slo / --warn-slo are drawn as rules; failures hatched', () => {
    const report: ProbeReport & { slo: { fail: Record<string, number>; warn: Record<string, number> } } = {
      gateway: 'https://gw.example.com',
      startedAt: '2026-11-23T14:00:00.000Z',
      finishedAt: '2026-11-23T14:00:02.000Z',
      durationMs: 2000,
      checks: [
        { id: 'chat', title: 'chat', status: 'pass', latencyMs: 420, detail: 'ok', requestId: 'req-1' },
        {
          id: 'chat-stream',
          title: 'chat-stream',
          status: 'fail',
          latencyMs: 1900,
          ttftMs: 1200,
          detail: 'SLO missed: ttft',
          requestId: 'req-2',
        },
        { id: 'video', title: 'video', status: 'skip', latencyMs: 0, detail: 'skipped' },
      ],
      summary: { passed: 1, failed: 1, warned: 0, skipped: 1 },
      slo: { fail: { ttft: 1000, latency: 10_000 }, warn: { ttft: 800 } },
    };
    const html = probeHtml(report, meta);
    expectSelfContained(html);
    expect(kinds(html)).toEqual(['bars']);
    has(html, 'SLO TTFT 1 s');
    has(html, 'warn TTFT 800 ms');
    has(html, 'fill="url(#probe-latency-hatch)"');
    has(html, 'FAILED: 1 of 3 checks failed');
    has(html, '>req-2</td>');
  });
});
