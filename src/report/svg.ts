/**
 * The small pieces every chart is made of: text escaping, linear scales, "nice" ticks, number and duration
 * labels, path data and downsampling. Pure functions on numbers and strings (no DOM), unit-tested.
 */

/** Escapes text for HTML/SVG content and attribute values; drops characters XML cannot carry. */
export function esc(text: string | number): string {
  return (
    String(text)
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;')
  );
}

/** A coordinate rounded to 0.1 px: enough for any screen or printer, and keeps path data short. */
export function px(v: number): string {
  const r = Math.round(v * 10) / 10;
  return Object.is(r, -0) ? '0' : String(r);
}

/** A linear map from a domain to a range. */
export interface Scale {
  (v: number): number;
  domain: readonly [number, number];
  range: readonly [number, number];
}

/** Linear scale; a degenerate domain (min = max) maps everything to the middle of the range. */
export function linear(domain: readonly [number, number], range: readonly [number, number]): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0;
  const f = ((v: number) => (span === 0 ? (r0 + r1) / 2 : r0 + ((v - d0) / span) * (r1 - r0))) as Scale;
  f.domain = domain;
  f.range = range;
  return f;
}

/** The tick step of ~`count` ticks over [min, max]: 1, 2 or 5 times a power of ten. */
export function tickStep(min: number, max: number, count: number): number {
  const span = Math.abs(max - min);
  if (!(span > 0) || !Number.isFinite(span)) return 0;
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const err = raw / power;
  const mult = err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1;
  return mult * power;
}

/** Rounds a tick value so binary floating point noise (0.30000000000000004) never reaches a label. */
function clean(v: number, step: number): number {
  const digits = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  return Number(v.toFixed(Math.min(20, digits)));
}

/** Ticks at multiples of a nice step inside [min, max]. */
export function ticks(min: number, max: number, count = 5): number[] {
  const step = tickStep(min, max, count);
  if (step === 0) return Number.isFinite(min) ? [min] : [];
  const out: number[] = [];
  const first = Math.ceil(min / step - 1e-9);
  const last = Math.floor(max / step + 1e-9);
  for (let i = first; i <= last; i++) out.push(clean(i * step, step));
  return out;
}

/**
 * The domain widened to whole tick steps (0 kept as the floor of non-negative data), such that the ticks drawn over
 * it (`ticks(lo, hi, count)`, whose step follows the widened span) land on both its ends.
 */
export function niceDomain(min: number, max: number, count = 5): [number, number] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (min === max) return min === 0 ? [0, 1] : min > 0 ? [0, min * 2] : [min * 2, 0];
  let lo = min;
  let hi = max;
  // Widening can make the span's own step coarser (0–800 at 2 ticks steps by 500): widen again to that step.
  for (let i = 0; i < 4; i++) {
    const step = tickStep(lo, hi, count);
    const next: [number, number] = [
      clean(Math.floor(lo / step) * step, step),
      clean(Math.ceil(hi / step) * step, step),
    ];
    if (next[0] === lo && next[1] === hi) break;
    [lo, hi] = next;
  }
  return [lo, hi];
}

/** A number for a label: at most 3 significant decimals, thousands with k/M. */
export function num(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 1e6) return `${trim((v / 1e6).toFixed(a >= 1e7 ? 0 : 1))}M`;
  if (a >= 1e4) return `${trim((v / 1e3).toFixed(a >= 1e5 ? 0 : 1))}k`;
  if (a >= 100 || Number.isInteger(v)) return String(Math.round(v));
  if (a >= 10) return trim(v.toFixed(1));
  if (a >= 1) return trim(v.toFixed(2));
  return trim(v.toPrecision(2));
}

function trim(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** A duration in milliseconds as a label: `850 ms`, `1.25 s`, `2.5 min`, `3 h`. */
export function ms(v: number): string {
  const a = Math.abs(v);
  if (a < 1000) return `${num(v)} ms`;
  if (a < 120_000) return `${num(v / 1000)} s`;
  if (a < 7_200_000) return `${num(v / 60_000)} min`;
  return `${num(v / 3_600_000)} h`;
}

/** A percentage (0..1 in) as a label: `99.5%`. */
export function pct(ratio: number): string {
  return `${num(ratio * 100)}%`;
}

/** An instant as a short UTC label for an axis spanning `spanMs`. */
export function clock(t: number, spanMs: number): string {
  const iso = new Date(t).toISOString();
  if (spanMs > 3 * 86_400_000) return iso.slice(5, 10);
  if (spanMs > 86_400_000) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
  if (spanMs > 600_000) return iso.slice(11, 16);
  return iso.slice(11, 19);
}

/** Time ticks at whole seconds/minutes/hours/days over [t0, t1] (epoch ms). */
export function timeTicks(t0: number, t1: number, count = 6): number[] {
  const span = t1 - t0;
  if (!(span > 0)) return [t0];
  const steps = [
    1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000,
    3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 172_800_000, 604_800_000,
  ];
  const step = steps.find((s) => span / s <= count) ?? Math.ceil(span / count / 86_400_000) * 86_400_000;
  const out: number[] = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
  return out;
}

/** Path data through points (`M x y L x y …`); `step`: horizontal then vertical (a step function / CDF). */
export function linePath(points: readonly (readonly [number, number])[], step = false): string {
  let d = '';
  points.forEach(([x, y], i) => {
    if (i === 0) d += `M${px(x)} ${px(y)}`;
    else if (step) d += `H${px(x)}V${px(y)}`;
    else d += `L${px(x)} ${px(y)}`;
  });
  return d;
}

/**
 * At most `max` points, keeping each bucket's first, lowest and highest point (so spikes survive): a
 * 10 000-point series draws with the same silhouette in a few hundred.
 */
export function downsample<T extends readonly [number, number]>(points: readonly T[], max: number): T[] {
  if (points.length <= max || max < 4) return [...points];
  const buckets = Math.max(1, Math.floor(max / 3));
  const size = points.length / buckets;
  const out: T[] = [];
  for (let b = 0; b < buckets; b++) {
    const start = Math.floor(b * size);
    const end = Math.min(points.length, Math.floor((b + 1) * size));
    let lo = start;
    let hi = start;
    for (let i = start; i < end; i++) {
      if ((points[i] as T)[1] < (points[lo] as T)[1]) lo = i;
      if ((points[i] as T)[1] > (points[hi] as T)[1]) hi = i;
    }
    for (const i of [...new Set([start, lo, hi])].sort((a, b2) => a - b2)) out.push(points[i] as T);
  }
  const last = points[points.length - 1] as T;
  if (out[out.length - 1] !== last) out.push(last);
  return out;
}
