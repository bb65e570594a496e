/**
 * Charts that read right, checked on the SVG (the browser test checks every report the same way on screen): axis
 * labels that never run together, rule labels that never overlap, value axes ending on a tick just past the data,
 * a final state with a visible width, and a history whose time ends when the view was made.
 */
import { describe, expect, it } from 'vitest';
import { lineChart, stackedArea } from '../../../src/report/charts.js';
import { labelBox, overlaps, vRules, xAxis } from '../../../src/report/frame.js';
import { historyHtml } from '../../../src/report/history.js';
import { linear, ms, niceDomain, ticks } from '../../../src/report/svg.js';
import type { HistoryView } from '../../../src/probe/history-view.js';

/** [x, text] of every `<text>` centred under an x axis. */
function tickLabels(svg: string): [number, string][] {
  return [...svg.matchAll(/<text x="([\d.]+)" y="[\d.]+" text-anchor="middle">([^<]*)<\/text>/g)].map((m) => [
    Number(m[1]),
    m[2] as string,
  ]);
}

describe('chart layout', () => {
  it('x axis labels never run together: a narrow axis at a ~2 s scale gets fewer ticks', () => {
    for (const width of [120, 260, 400, 600]) {
      const labels = tickLabels(xAxis({ label: 'latency', format: ms }, linear([0, 2000], [0, width]), 100));
      expect(labels.length).toBeGreaterThanOrEqual(2);
      const boxes = labels.map(([x, t]) => labelBox(x, 0, t, 'middle'));
      boxes.forEach(
        (b, i) => i > 0 && expect(overlaps(boxes[i - 1]!, b), `${width}px: ${labels.join()}`).toBe(false),
      );
    }
  });

  it('rule labels that would overlap take separate rows', () => {
    const r = vRules(
      [
        { value: 300, label: 'warn TTFT 300 ms' },
        { value: 420, label: 'SLO latency 420 ms' },
      ],
      linear([0, 2000], [0, 400]),
      0,
      100,
    );
    expect(r.rows).toBe(2);
    expect(overlaps(r.boxes[0]!, r.boxes[1]!, 0)).toBe(false);
  });

  it('a value domain ends on a tick the axis draws, whatever the tick count', () => {
    for (const count of [2, 3, 5, 6])
      for (const max of [0.7, 3, 41, 116, 631, 698, 999, 1951, 12_345]) {
        const [lo, hi] = niceDomain(0, max, count);
        const t = ticks(lo, hi, count);
        expect([t[0], t[t.length - 1]], `${max} at ${count} ticks`).toEqual([lo, hi]);
        expect(hi).toBeGreaterThanOrEqual(max);
      }
  });

  it("a stacked area's final state is drawn with a width: all five succeeded shows succeeded", () => {
    const t0 = Date.UTC(2026, 0, 1);
    const points = [0, 1000, 2000, 3000, 4000].map((dt, i) => ({
      x: t0 + dt,
      counts: { running: 4 - i, done: i + (i === 4 ? 1 : 0) },
    }));
    const svg = stackedArea({
      id: 's',
      title: 'items',
      description: '',
      x: { label: 'time', time: true },
      y: { label: 'items' },
      states: [
        { id: 'done', label: 'succeeded', tone: 2, pattern: 'solid' },
        { id: 'running', label: 'running', tone: 0, pattern: 'vert' },
      ],
      points,
    });
    // The top edge of the succeeded area: where it first reaches its highest point, and where it ends.
    const d = /<path class="area t2" d="([^"]+)" data-state="done"/.exec(svg)?.[1] ?? '';
    const upper = d.split('L')[0] as string;
    const xs = [...upper.matchAll(/[MH]([\d.]+)/g)].map((m) => Number(m[1]));
    const ys = [...upper.matchAll(/(?:M[\d.]+ |V)([\d.]+)/g)].map((m) => Number(m[1]));
    const top = Math.min(...ys);
    const reached = xs[ys.indexOf(top)] as number;
    expect(Math.max(...xs) - reached).toBeGreaterThanOrEqual(6);
  });

  it("probe history's time ends when the view was made: the last run's segment stops there", () => {
    const gap = 300_000;
    const t0 = Date.UTC(2026, 0, 1);
    const points: [number, string, number | null][] = Array.from({ length: 6 }, (_, i) => [
      t0 + i * gap,
      i % 2 === 0 ? 'pass' : 'fail',
      100,
    ]);
    const last = (points[points.length - 1] as [number, string, number | null])[0];
    const view: HistoryView = {
      generatedAt: new Date(last + 10_000).toISOString(),
      since: null,
      filters: {},
      runs: points.map(([t]) => ({
        gateway: 'https://gw.example',
        at: new Date(t).toISOString(),
        durationMs: 1,
        ok: true,
        passed: 1,
        failed: 0,
        warned: 0,
      })),
      series: [
        {
          gateway: 'https://gw.example',
          check: 'chat',
          model: 'm',
          runs: 6,
          uptime: { '5m': 1 },
          latencyMs: { p50: 100, p90: 100, p99: 100, max: 100 },
          ttftMs: null,
          last: { at: new Date(last).toISOString(), status: 'fail' },
          failingFor: 1,
          points,
        },
      ],
      changes: [],
      markers: [],
    };
    const html = historyHtml(view, {
      command: 'gw probe history',
      version: '0',
      gateway: 'g',
      madeAt: new Date(last + 10_000),
    });
    const uptime = html.slice(html.indexOf('id="history-uptime"'));
    const widths = [
      ...uptime.matchAll(/<rect class="t\d[^"]*" x="[\d.]+" y="[\d.]+" width="([\d.]+)"[^>]*data-state/g),
    ].map((m) => Number(m[1]));
    expect(widths).toHaveLength(6);
    // Every run lasts until the next (5 minutes), the last one 10 s: until the view was made.
    const run = widths[0] as number;
    expect(widths.at(-1)).toBeCloseTo((run * 10_000) / gap, 0);
  });

  it("a point label near the y axis goes right of its point, never over the axis's tick labels", () => {
    const svg = lineChart({
      id: 'sweep',
      title: 'sweep',
      description: '',
      x: { label: 'throughput' },
      y: { label: 'latency', format: ms },
      series: [
        {
          name: 'p95',
          points: [
            [0.2, 100],
            [5, 400],
          ],
          markers: 'all',
          pointLabels: ['c=1', 'c=2'],
        },
      ],
    });
    const labels = [
      ...svg.matchAll(/<text class="ptlabel" x="([\d.]+)" y="[\d.]+" text-anchor="(\w+)">([^<]*)</g),
    ];
    const first = labels.find((m) => m[3] === 'c=1');
    expect(first?.[2]).toBe('start');
    // The plot starts at x = 56 (the y axis): the label's box starts right of it.
    expect(labelBox(Number(first?.[1]), 0, 'c=1', 'start', 10).x0).toBeGreaterThanOrEqual(56);
  });
});
