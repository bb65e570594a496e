import { describe, expect, it } from 'vitest';
import {
  clock,
  downsample,
  esc,
  linear,
  linePath,
  ms,
  niceDomain,
  num,
  pct,
  px,
  tickStep,
  ticks,
  timeTicks,
} from '../../../src/report/svg.js';
import { safeUrl } from '../../../src/report/page.js';

describe('esc', () => {
  it('escapes markup and quotes and drops characters XML cannot carry', () => {
    expect(esc(`<script>alert("x")</script> & 'y'`)).toBe(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;',
    );
    expect(esc('a\u0000b\u001Fc\tn\n')).toBe('abc\tn\n');
    expect(esc(12.5)).toBe('12.5');
  });
});

describe('scales and ticks', () => {
  it('linear maps domain to range, inverted ranges too, and a degenerate domain to the middle', () => {
    const x = linear([0, 100], [50, 650]);
    expect(x(0)).toBe(50);
    expect(x(50)).toBe(350);
    expect(x(100)).toBe(650);
    const y = linear([0, 10], [250, 30]);
    expect(y(0)).toBe(250);
    expect(y(10)).toBe(30);
    expect(linear([5, 5], [0, 100])(5)).toBe(50);
  });

  it('tick steps are 1, 2 or 5 times a power of ten', () => {
    expect(tickStep(0, 100, 5)).toBe(20);
    expect(tickStep(0, 1, 5)).toBe(0.2);
    expect(tickStep(0, 1234, 5)).toBe(200);
    expect(tickStep(0, 7, 5)).toBe(1);
    expect(tickStep(3, 3, 5)).toBe(0);
  });

  it('ticks are clean numbers inside the domain (no floating point noise)', () => {
    expect(ticks(0, 1, 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(ticks(0.1, 0.35, 5)).toEqual([0.1, 0.15, 0.2, 0.25, 0.3, 0.35]);
    expect(ticks(-10, 10, 4)).toEqual([-10, -5, 0, 5, 10]);
    expect(ticks(3, 3)).toEqual([3]);
  });

  it('niceDomain widens to whole steps; a flat series still gets a visible range', () => {
    expect(niceDomain(3, 97)).toEqual([0, 100]);
    expect(niceDomain(0.13, 0.91)).toEqual([0, 1]);
    expect(niceDomain(0, 0)).toEqual([0, 1]);
    expect(niceDomain(5, 5)).toEqual([0, 10]);
    expect(niceDomain(NaN, 3)).toEqual([0, 1]);
  });

  it('time ticks fall on whole seconds, minutes, hours', () => {
    const t0 = Date.UTC(2026, 0, 1, 10, 0, 7);
    expect(timeTicks(t0, t0 + 60_000, 6)).toEqual(
      [10_000, 20_000, 30_000, 40_000, 50_000, 60_000].map((d) => t0 - 7000 + d),
    );
    const hourly = timeTicks(t0, t0 + 6 * 3_600_000, 6);
    expect(hourly.every((t) => t % 3_600_000 === 0)).toBe(true);
    expect(hourly).toHaveLength(6);
    expect(clock(Date.UTC(2026, 0, 1, 10, 5, 0), 3_600_000)).toBe('10:05');
    expect(clock(Date.UTC(2026, 0, 1, 10, 5, 9), 60_000)).toBe('10:05:09');
    expect(clock(Date.UTC(2026, 0, 1, 10, 5, 9), 7 * 86_400_000)).toBe('01-01');
  });
});

describe('labels', () => {
  it('numbers, durations and percentages read as a person writes them', () => {
    expect(num(0)).toBe('0');
    expect(num(0.25)).toBe('0.25');
    expect(num(0.0012345)).toBe('0.0012');
    expect(num(3.14159)).toBe('3.14');
    expect(num(42.42)).toBe('42.4');
    expect(num(812.6)).toBe('813');
    expect(num(12_500)).toBe('12.5k');
    expect(num(250_000)).toBe('250k');
    expect(num(3_400_000)).toBe('3.4M');
    expect(ms(52.66)).toBe('52.7 ms');
    expect(ms(1234)).toBe('1.23 s');
    expect(ms(90_000)).toBe('90 s');
    expect(ms(600_000)).toBe('10 min');
    expect(ms(3 * 3_600_000)).toBe('3 h');
    expect(pct(0.995)).toBe('99.5%');
  });

  it('coordinates are rounded to 0.1 px, never "-0"', () => {
    expect(px(1.26)).toBe('1.3');
    expect(px(-0.01)).toBe('0');
    expect(px(100)).toBe('100');
  });
});

describe('paths', () => {
  it('line and step path data', () => {
    const pts = [
      [0, 10],
      [5, 20],
      [10, 15],
    ] as const;
    expect(linePath(pts)).toBe('M0 10L5 20L10 15');
    expect(linePath(pts, true)).toBe('M0 10H5V20H10V15');
    expect(linePath([])).toBe('');
  });

  it('downsample keeps at most max points, the first and last, and every spike', () => {
    const pts = Array.from(
      { length: 10_000 },
      (_, i) => [i, i === 4321 ? 1000 : i === 777 ? -50 : 1] as const,
    );
    const out = downsample(pts, 300);
    expect(out.length).toBeLessThanOrEqual(301);
    expect(out[0]).toEqual([0, 1]);
    expect(out[out.length - 1]).toEqual([9999, 1]);
    expect(out).toContainEqual([4321, 1000]);
    expect(out).toContainEqual([777, -50]);
    // x stays in order
    expect(out.every((p, i) => i === 0 || p[0] > (out[i - 1] as readonly number[])[0]!)).toBe(true);
    expect(downsample(pts.slice(0, 10), 300)).toHaveLength(10);
  });
});

describe('safeUrl', () => {
  it('drops user info, query and fragment, keeps scheme, host, port and path', () => {
    expect(safeUrl('https://user:sk-secret@gw.example.com:8443/base?token=sk-abc#x')).toBe(
      'https://gw.example.com:8443/base',
    );
    expect(safeUrl('http://127.0.0.1:4000/')).toBe('http://127.0.0.1:4000');
    expect(safeUrl('not a url?key=1')).toBe('not a url');
    expect(safeUrl('me:pw@host/x')).toBe('host/x');
  });
});
