/**
 * What every chart shares: the figure and its accessible title, axes with gridlines, the legend, marker
 * shapes and fill patterns. Colours come from the page's CSS classes (so dark mode and print restyle them);
 * every series also differs by dash style, marker shape or fill pattern, so nothing depends on colour alone.
 */
import { clock, esc, linear, niceDomain, num, px, ticks, timeTicks, type Scale } from './svg.js';

/** The drawing size of every chart (the SVG scales to its container through its viewBox). */
export const WIDTH = 680;

/** An axis: its label (with unit), label format, fixed bounds, and whether values are epoch ms. */
export interface AxisSpec {
  label: string;
  format?: (v: number) => string;
  min?: number;
  max?: number;
  time?: boolean;
}

/** A labelled line across the plot at a value (an SLO, a budget, a percentile). */
export interface Rule {
  value: number;
  label: string;
}

/** A labelled point (the knee of a sweep, a change in the history). */
export interface Mark {
  x: number;
  y?: number;
  label: string;
}

/** Inner margins of the plot area. */
export interface Margin {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

/** Fill patterns, by name; `solid` draws none. */
export type PatternName = 'solid' | 'hatch' | 'cross' | 'dots' | 'vert' | 'none';
const PATTERNS: Record<Exclude<PatternName, 'solid' | 'none'>, string> = {
  hatch: '<path class="pat" d="M-1 1L1 -1M0 6L6 0M5 7L7 5"/>',
  cross: '<path class="pat" d="M0 0L6 6M6 0L0 6"/>',
  dots: '<circle class="pat-dot" cx="3" cy="3" r="1.1"/>',
  vert: '<path class="pat" d="M3 0V6"/>',
};

/** `<defs>` with the fill patterns, ids prefixed by the chart's id. */
export function patternDefs(id: string, names: readonly PatternName[]): string {
  const used = [...new Set(names)].filter((n): n is keyof typeof PATTERNS => n in PATTERNS);
  if (used.length === 0) return '';
  return `<defs>${used
    .map(
      (n) =>
        `<pattern id="${esc(id)}-${n}" width="6" height="6" patternUnits="userSpaceOnUse">${PATTERNS[n]}</pattern>`,
    )
    .join('')}</defs>`;
}

/** A rectangle in a tone (0..7) with an optional pattern drawn over its fill. */
export function toneRect(
  id: string,
  x: number,
  y: number,
  w: number,
  h: number,
  tone: number,
  pattern: PatternName,
  extra = '',
): string {
  const box = `x="${px(x)}" y="${px(y)}" width="${px(Math.max(0, w))}" height="${px(Math.max(0, h))}"`;
  const base =
    pattern === 'none'
      ? `<rect class="t${tone} hollow" ${box}${extra}/>`
      : `<rect class="t${tone}" ${box}${extra}/>`;
  return pattern === 'solid' || pattern === 'none'
    ? base
    : `${base}<rect ${box} fill="url(#${esc(id)}-${pattern})" aria-hidden="true"/>`;
}

/** Marker shapes, by series index: circle, square, triangle, diamond, cross, plus. */
export function marker(shape: number, x: number, y: number, cls: string, r = 3.5): string {
  const X = px(x);
  const Y = px(y);
  switch (shape % 6) {
    case 0:
      return `<circle class="${cls}" cx="${X}" cy="${Y}" r="${px(r)}"/>`;
    case 1:
      return `<rect class="${cls}" x="${px(x - r)}" y="${px(y - r)}" width="${px(2 * r)}" height="${px(2 * r)}"/>`;
    case 2:
      return `<path class="${cls}" d="M${X} ${px(y - r * 1.2)}L${px(x + r * 1.1)} ${px(y + r * 0.9)}H${px(x - r * 1.1)}Z"/>`;
    case 3:
      return `<path class="${cls}" d="M${X} ${px(y - r * 1.3)}L${px(x + r * 1.3)} ${Y}L${X} ${px(y + r * 1.3)}L${px(x - r * 1.3)} ${Y}Z"/>`;
    case 4:
      return `<path class="${cls} open" d="M${px(x - r)} ${px(y - r)}L${px(x + r)} ${px(y + r)}M${px(x + r)} ${px(y - r)}L${px(x - r)} ${px(y + r)}"/>`;
    default:
      return `<path class="${cls} open" d="M${px(x - r)} ${Y}H${px(x + r)}M${X} ${px(y - r)}V${px(y + r)}"/>`;
  }
}

/** Approximate width of a label in the report's sans-serif font. */
export function textWidth(text: string, size = 11): number {
  return text.length * size * 0.58;
}

/** The figure around a chart: a caption a person reads and an SVG a screen reader names. */
export function figure(
  id: string,
  kind: string,
  title: string,
  description: string,
  height: number,
  body: string,
): string {
  return (
    `<figure class="chart" id="${esc(id)}">` +
    `<figcaption><strong>${esc(title)}</strong>${description ? ` <span>${esc(description)}</span>` : ''}</figcaption>` +
    `<svg class="plot" data-kind="${esc(kind)}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${esc(id)}-t ${esc(id)}-d" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="${esc(id)}-t">${esc(title)}</title><desc id="${esc(id)}-d">${esc(description)}</desc>` +
    body +
    '</svg></figure>'
  );
}

/**
 * A scale for an axis over data values, widened to nice bounds unless fixed: to the tick step of about `count`
 * ticks (the count the axis draws with), so a value axis ends on a drawn tick just past the data. A time axis
 * runs from the first instant to the last.
 */
export function axisScale(
  spec: AxisSpec,
  values: readonly number[],
  range: readonly [number, number],
  zero: boolean,
  count = 5,
): Scale {
  const finite = values.filter(Number.isFinite);
  let lo = spec.min ?? (finite.length ? Math.min(...finite) : 0);
  let hi = spec.max ?? (finite.length ? Math.max(...finite) : 1);
  if (zero && spec.min === undefined) lo = Math.min(0, lo);
  if (spec.time) {
    if (hi <= lo) hi = lo + 60_000;
    return linear([lo, hi], range);
  }
  const [nlo, nhi] = niceDomain(lo, hi, count);
  return linear([spec.min ?? nlo, spec.max ?? nhi], range);
}

function axisTicks(spec: AxisSpec, s: Scale, count: number): number[] {
  const [lo, hi] = s.domain;
  return spec.time ? timeTicks(lo, hi, count) : ticks(lo, hi, count);
}

/** The label of a tick on an axis. */
export function tickLabel(spec: AxisSpec, s: Scale, v: number): string {
  if (spec.format) return spec.format(v);
  if (spec.time) return clock(v, s.domain[1] - s.domain[0]);
  return num(v);
}

/**
 * The ticks of an x axis whose labels do not run together: about `count`, fewer while two neighbours' labels
 * would come closer than a few pixels (a narrow plot at a ~2 s scale: `200 ms400 ms600 ms`).
 */
function readableTicks(spec: AxisSpec, x: Scale, count: number): number[] {
  for (let c = count; c > 2; c--) {
    const t = axisTicks(spec, x, c);
    const boxes = t.map((v) => labelBox(x(v), 0, tickLabel(spec, x, v), 'middle'));
    if (boxes.every((b, i) => i === 0 || !overlaps(boxes[i - 1] as Box, b, 6))) return t;
  }
  return axisTicks(spec, x, 2);
}

/** X axis along the bottom of the plot: baseline, ticks, labels, and the axis label at the right end. */
export function xAxis(spec: AxisSpec, x: Scale, y0: number, count = 6): string {
  const [r0, r1] = x.range;
  let out = `<g class="axis x"><path class="domain" d="M${px(r0)} ${px(y0)}H${px(r1)}"/>`;
  for (const v of readableTicks(spec, x, count)) {
    const X = x(v);
    out += `<path class="tick" d="M${px(X)} ${px(y0)}v5"/><text x="${px(X)}" y="${px(y0 + 17)}" text-anchor="middle">${esc(tickLabel(spec, x, v))}</text>`;
  }
  out += `<text class="label" x="${px(r1)}" y="${px(y0 + 33)}" text-anchor="end">${esc(spec.label)} →</text></g>`;
  return out;
}

/**
 * Y axis with horizontal gridlines across the plot, labels at the left, the axis label above (`lift` px higher
 * when the band just above the plot is taken, e.g. by the flags of marks).
 */
export function yAxis(spec: AxisSpec, y: Scale, x0: number, x1: number, count = 5, lift = 0): string {
  let out = '<g class="axis y">';
  for (const v of axisTicks(spec, y, count)) {
    const Y = y(v);
    out += `<path class="grid" d="M${px(x0)} ${px(Y)}H${px(x1)}"/><text x="${px(x0 - 6)}" y="${px(Y + 4)}" text-anchor="end">${esc(tickLabel(spec, y, v))}</text>`;
  }
  const [top] = [Math.min(...y.range)];
  out += `<text class="label" x="${px(x0 - 6)}" y="${px(top - 12 - lift)}" text-anchor="start">↑ ${esc(spec.label)}</text></g>`;
  return out;
}

/** A label's box in drawing units (to keep labels from overlapping one another). */
export interface Box {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** The box of a text drawn at (x, baseline y) with this anchor, in the charts' 11 px font (bold a little wider). */
export function labelBox(
  x: number,
  y: number,
  text: string,
  anchor: 'start' | 'middle' | 'end',
  size = 11,
): Box {
  const w = textWidth(text, size) * 1.08;
  const x0 = anchor === 'start' ? x : anchor === 'end' ? x - w : x - w / 2;
  return { x0, x1: x0 + w, y0: y - size * 0.8, y1: y + size * 0.3 };
}

/** True when two boxes come closer than `gap` in both directions. */
export function overlaps(a: Box, b: Box, gap = 2): boolean {
  return a.x0 < b.x1 + gap && b.x0 < a.x1 + gap && a.y0 < b.y1 + gap && b.y0 < a.y1 + gap;
}

/** The height of a row of rule labels, px (an 11 px bold label's box and a little air). */
export const RULE_ROW = 14;

/**
 * Vertical rules at x (thresholds of an x quantity: SLOs, percentiles), each labelled near its top: right of its
 * line, or left of it near the right end; a label that would overlap another one is moved a row (RULE_ROW px) down.
 * Returns the markup, the label boxes, and how many rows the labels took.
 */
export function vRules(
  rules: readonly Rule[],
  x: Scale,
  top: number,
  bottom: number,
): { svg: string; boxes: Box[]; rows: number } {
  const placed: Box[] = [];
  let rows = 0;
  let svg = '';
  for (const r of [...rules].sort((a, b) => a.value - b.value)) {
    const X = x(r.value);
    if (!Number.isFinite(X) || X < Math.min(...x.range) - 0.5 || X > Math.max(...x.range) + 0.5) continue;
    const anchor = X > (x.range[0] + x.range[1]) / 2 + 120 ? 'end' : 'start';
    const dx = anchor === 'end' ? -4 : 4;
    let row = 0;
    let box = labelBox(X + dx, top + 10, r.label, anchor);
    while (r.label && placed.some((b) => overlaps(b, box, 1)) && row < 8) {
      row++;
      box = labelBox(X + dx, top + 10 + RULE_ROW * row, r.label, anchor);
    }
    if (r.label) {
      placed.push(box);
      rows = Math.max(rows, row + 1);
    }
    const text = r.label
      ? `<text x="${px(X + dx)}" y="${px(top + 10 + RULE_ROW * row)}" text-anchor="${anchor}">${esc(r.label)}</text>`
      : '';
    svg += `<g class="rule"><path d="M${px(X)} ${px(top)}V${px(bottom)}"/>${text}</g>`;
  }
  return { svg, boxes: placed, rows };
}

/**
 * A horizontal rule at y (an SLO, a budget), labelled above the line at its right end (the axis title is at the
 * left); returns the markup and the label's box, or an empty string off the axis.
 */
export function hRule(r: Rule, y: Scale, left: number, right: number): { svg: string; box?: Box } {
  const Y = y(r.value);
  if (!Number.isFinite(Y) || Y < Math.min(...y.range) - 0.5 || Y > Math.max(...y.range) + 0.5)
    return { svg: '' };
  const box = labelBox(right - 4, Y - 4, r.label, 'end');
  return {
    svg: `<g class="rule"><path d="M${px(left)} ${px(Y)}H${px(right)}"/><text x="${px(right - 4)}" y="${px(Y - 4)}" text-anchor="end">${esc(r.label)}</text></g>`,
    box,
  };
}

/** One legend entry: a sample (line with marker, or a filled swatch) and its name. */
export interface LegendItem {
  name: string;
  sample: (x: number, y: number) => string;
}

/** A legend in one or more rows at the top of the chart; returns its markup and the height it took. */
export function legend(
  items: readonly LegendItem[],
  left: number,
  top: number,
): { svg: string; height: number } {
  if (items.length === 0) return { svg: '', height: 0 };
  let x = left;
  let y = top;
  let out = '<g class="legend">';
  for (const it of items) {
    const w = 30 + textWidth(it.name) + 16;
    if (x + w > WIDTH - 8 && x > left) {
      x = left;
      y += 18;
    }
    out += `${it.sample(x, y)}<text x="${px(x + 30)}" y="${px(y + 4)}">${esc(it.name)}</text>`;
    x += w;
  }
  out += '</g>';
  return { svg: out, height: y - top + 22 };
}

/** Pushes labels apart vertically (at least `gap` px) keeping their order; returns the new positions. */
export function spread(ys: readonly number[], gap: number, min: number, max: number): number[] {
  const order = ys.map((y, i) => ({ y, i })).sort((a, b) => a.y - b.y);
  const placed: number[] = [];
  for (const o of order) {
    const prev = placed.length ? (placed[placed.length - 1] as number) : -Infinity;
    placed.push(Math.max(o.y, prev + gap, min));
  }
  // Shift the whole column up if it ran past the bottom.
  const over = (placed[placed.length - 1] ?? 0) - max;
  if (over > 0) for (let i = placed.length - 1; i >= 0; i--) placed[i] = (placed[i] as number) - over;
  const out = new Array<number>(ys.length);
  order.forEach((o, k) => (out[o.i] = placed[k] as number));
  return out;
}

/** Where a flag's label goes: centred on x, moved inside the drawing when it would run past an edge. */
export function flagText(x: number, y: number, label: string): { svg: string; x0: number; x1: number } {
  const w = textWidth(label);
  if (x + w / 2 > WIDTH - 4) {
    return {
      svg: `<text x="${px(x + 4)}" y="${px(y)}" text-anchor="end">${esc(label)}</text>`,
      x0: x + 4 - w,
      x1: x + 4,
    };
  }
  if (x - w / 2 < 4) {
    return {
      svg: `<text x="${px(x - 4)}" y="${px(y)}" text-anchor="start">${esc(label)}</text>`,
      x0: x - 4,
      x1: x - 4 + w,
    };
  }
  return {
    svg: `<text x="${px(x)}" y="${px(y)}" text-anchor="middle">${esc(label)}</text>`,
    x0: x - w / 2,
    x1: x + w / 2,
  };
}
