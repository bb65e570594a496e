import { describe, expect, it } from 'vitest';
import { barChart, histogram, lineChart, stackedArea, timeline } from '../../../src/report/charts.js';

/** All matches of a regex's first group. */
function all(re: RegExp, text: string): string[] {
  return [...text.matchAll(new RegExp(re.source, 'g'))].map((m) => m[1] as string);
}

/** Numbers of an attribute over the elements that have a class. */
function attrs(svg: string, cls: string, attr: string): number[] {
  return all(new RegExp(`<[a-z]+ class="${cls}"[^>]*? ${attr}="([-\\d.]+)"`), svg).map(Number);
}

describe('lineChart', () => {
  const chart = lineChart({
    id: 'c1',
    title: 'Latency <CDF> & "tail"',
    description: 'p50 < p99',
    x: { label: 'latency (ms)' },
    y: { label: 'fraction', min: 0, max: 1 },
    series: [
      {
        name: 'chat <a>',
        points: [
          [0, 0],
          [100, 0.5],
          [200, 1],
        ],
        step: true,
        endLabel: 'chat',
      },
      {
        name: 'responses',
        points: [
          [0, 0],
          [150, 0.5],
          [400, 1],
        ],
        step: true,
        markers: 'all',
        endLabel: 'responses',
      },
    ],
    xRules: [
      { value: 300, label: 'SLO p95 300 ms' },
      { value: 10_000, label: 'off the chart' },
    ],
    marks: [{ x: 150, y: 0.5, label: 'knee' }],
  });

  it('is one accessible figure: escaped title and description, role img, labelled', () => {
    expect(chart).toMatch(/^<figure class="chart" id="c1">/);
    expect(chart).toContain('<title id="c1-t">Latency &lt;CDF&gt; &amp; &quot;tail&quot;</title>');
    expect(chart).toContain('<desc id="c1-d">p50 &lt; p99</desc>');
    expect(chart).toContain('role="img" aria-labelledby="c1-t c1-d"');
    expect(chart).not.toMatch(/<a>|<CDF>/);
    expect(chart).not.toMatch(/NaN|undefined|Infinity/);
  });

  it('draws each series as a step path through its scaled points, with its own dash style', () => {
    const paths = all(/<path class="line s\d" d="([^"]+)" data-n/, chart);
    expect(paths).toHaveLength(2);
    // x: 0..400 over [56, 660]; y: 0..1 over [256, 34+legend]. Steps go H then V.
    expect(paths[0]).toMatch(/^M56 256H[\d.]+V[\d.]+H[\d.]+V[\d.]+$/);
    expect(chart).toMatch(/<path class="line s1" d="[^"]+" data-n="3" stroke-dasharray="7 4">/);
    expect(chart).toMatch(/<path class="line s0" d="[^"]+" data-n="3">/);
  });

  it('markers: a shape per series (circle, square, …), at every point or a few, plus one in the legend', () => {
    const groups = all(/<g class="pts">(.*?)<\/g>/, chart);
    expect(groups).toHaveLength(2);
    expect(all(/<(circle) class="mk s0"/, groups[0] as string).length).toBeGreaterThan(0);
    expect(all(/<(rect) class="mk s1"/, groups[1] as string)).toHaveLength(3); // markers: 'all'
    expect(all(/<rect class="(mk s1)"/, chart)).toHaveLength(4); // and the legend's sample
  });

  it('rules inside the domain are drawn and labelled; outside, left out', () => {
    // The x domain stretches to include the rules: 10 000 is inside now, so both are drawn.
    expect(chart).toContain('SLO p95 300 ms');
    const ruleless = lineChart({
      id: 'c2',
      title: 't',
      description: '',
      x: { label: 'x', min: 0, max: 100 },
      y: { label: 'y' },
      series: [
        {
          name: 'a',
          points: [
            [0, 1],
            [100, 2],
          ],
        },
      ],
      xRules: [{ value: 500, label: 'beyond' }],
    });
    expect(ruleless).not.toContain('beyond');
  });

  it('a mark is a ring with its label; direct end labels sit right of the plot, pushed apart', () => {
    expect(chart).toMatch(/<g class="mark"><circle cx="[\d.]+" cy="[\d.]+" r="8"\/>.*?>knee<\/text>/);
    const ends = all(/<text class="end s\d" x="[\d.]+" y="([\d.]+)"/, chart).map(Number);
    expect(ends).toHaveLength(2);
    expect(Math.abs((ends[0] as number) - (ends[1] as number))).toBeGreaterThanOrEqual(13);
  });

  it('a legend names every series when there are several, with a sample of its dash and marker', () => {
    expect(chart).toContain('<g class="legend">');
    expect(chart).toContain('>chat &lt;a&gt;</text>');
    expect(chart).toContain('>responses</text>');
  });

  it('a 10 000-point series is drawn with a few hundred vertices and still says how many it had', () => {
    const big = lineChart({
      id: 'big',
      title: 'rps',
      description: '',
      x: { label: 't', time: true },
      y: { label: 'req/s' },
      series: [
        {
          name: 'rps',
          points: Array.from({ length: 10_000 }, (_, i) => [i * 1000, (i * 7919) % 113] as const),
        },
      ],
    });
    expect(big).toContain('data-n="10000"');
    const d = all(/<path class="line s0" d="([^"]+)"/, big)[0] as string;
    expect((d.match(/[ML]/g) ?? []).length).toBeLessThanOrEqual(401);
    expect(big.length).toBeLessThan(20_000);
  });
});

describe('histogram', () => {
  it('one bar per bin, heights proportional to counts from a zero baseline, with percentile rules', () => {
    const h = histogram({
      id: 'h',
      title: 'TTFT',
      description: '',
      x: { label: 'ms' },
      y: { label: 'requests' },
      bins: [
        { x0: 0, x1: 10, count: 5 },
        { x0: 10, x1: 20, count: 10 },
        { x0: 20, x1: 30, count: 0 },
      ],
      rules: [{ value: 12, label: 'p50 12 ms' }],
    });
    expect(h).toContain('data-n="3"');
    const heights = attrs(h, 'bar', 'height');
    expect(heights).toHaveLength(3);
    expect(heights[1]).toBeCloseTo((heights[0] as number) * 2, 0);
    expect(heights[2]).toBe(0);
    expect(h).toContain('p50 12 ms');
    expect(h).toContain('<title>0–10: 5</title>');
  });
});

describe('barChart', () => {
  it('rows with labels, an outer bar per value, an inner bar for TTFT, notes, SLO rule and patterns', () => {
    const b = barChart({
      id: 'b',
      title: 'per check',
      description: '',
      x: { label: 'ms' },
      rows: [
        { label: 'chat', value: 200, note: '200 ms' },
        {
          label: 'chat-stream',
          value: 400,
          inner: 100,
          note: '400 ms · TTFT 100 ms',
          tone: 1,
          pattern: 'hatch',
        },
      ],
      rules: [{ value: 300, label: 'SLO 300 ms' }],
      keys: [{ name: 'failed', tone: 1, pattern: 'hatch' }],
    });
    expect(b).toContain('data-n="2"');
    const outer = all(/<rect class="t\d" x="[\d.]+" y="[\d.]+" width="([\d.]+)"[^>]*data-bar="outer"/, b).map(
      Number,
    );
    expect(outer).toHaveLength(2);
    expect(outer[1]).toBeCloseTo((outer[0] as number) * 2, 0);
    const inner = all(/<rect class="inner" x="[\d.]+" y="[\d.]+" width="([\d.]+)"/, b).map(Number);
    expect(inner.at(-1)).toBeCloseTo((outer[1] as number) / 4, 0);
    expect(b).toContain('<pattern id="b-hatch"');
    expect(b).toContain('fill="url(#b-hatch)"');
    expect(b).toContain('SLO 300 ms');
    expect(b).toContain('>chat-stream</text>');
  });
});

describe('timeline', () => {
  it('segments per row by state (pattern per state), notes, and change flags', () => {
    const t0 = Date.UTC(2026, 0, 1);
    const t = timeline({
      id: 'up',
      title: 'uptime',
      description: '',
      x: { label: 'time (UTC)' },
      states: [
        { id: 'up', label: 'up', tone: 2, pattern: 'solid' },
        { id: 'down', label: 'down', tone: 1, pattern: 'hatch' },
      ],
      rows: [
        {
          label: 'chat',
          note: '50% up',
          segments: [
            { start: t0, end: t0 + 60_000, state: 'up' },
            { start: t0 + 60_000, end: t0 + 120_000, state: 'down' },
          ],
        },
      ],
      marks: [{ x: t0 + 60_000, label: 'chat failed' }],
    });
    expect(t).toContain('data-n="2"');
    expect(all(/data-state="(\w+)"/, t)).toEqual(['up', 'down']);
    expect(t).toContain('fill="url(#up-hatch)"');
    expect(t).toContain('>50% up</text>');
    expect(t).toContain('>chat failed</text>');
  });
});

describe('stackedArea', () => {
  it('stacks states bottom-up; the top of the stack is the total', () => {
    const s = stackedArea({
      id: 'st',
      title: 'items',
      description: '',
      x: { label: 't', time: true },
      y: { label: 'items' },
      states: [
        { id: 'done', label: 'succeeded', tone: 2, pattern: 'solid' },
        { id: 'failed', label: 'failed', tone: 1, pattern: 'hatch' },
      ],
      points: [
        { x: 0, counts: { done: 0, failed: 0 } },
        { x: 60_000, counts: { done: 5, failed: 5 } },
      ],
    });
    expect(all(/<path class="area t\d" d="[^"]+" data-state="(\w+)"/, s)).toEqual(['done', 'failed']);
    expect(s).toContain('fill="url(#st-hatch)"');
  });
});
