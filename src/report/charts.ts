/**
 * The chart primitives of the reports, each a function from data to one `<figure>` with an inline SVG:
 * lines and steps (CDFs, series over time, a sweep's curve with its knee), histograms, horizontal bars,
 * timelines of states (uptime), and stacked areas (a batch's items by state). Every data point is an SVG
 * element or a vertex of a path with a `data-n` count, so a test (or a person with devtools) can tell a
 * chart with data from an empty frame.
 */
import {
  axisScale,
  figure,
  flagText,
  hRule,
  legend,
  marker,
  patternDefs,
  spread,
  textWidth,
  tickLabel,
  toneRect,
  vRules,
  RULE_ROW,
  WIDTH,
  xAxis,
  yAxis,
  labelBox,
  overlaps,
  type AxisSpec,
  type Box,
  type LegendItem,
  type Mark,
  type PatternName,
  type Rule,
} from './frame.js';
import { downsample, esc, linePath, px, type Scale } from './svg.js';

export type { AxisSpec, Mark, PatternName, Rule } from './frame.js';

/** Dash styles by series index (solid, dashed, dotted, dash-dot, long dash, dense dots). */
const DASH = ['', '7 4', '2 3', '9 3 2 3', '14 4', '1 2'];
/** Most vertices a path is drawn with; longer series are downsampled keeping their spikes. */
export const MAX_POINTS = 400;

/** A series of (x, y) points. */
export interface LineSeries {
  name: string;
  points: readonly (readonly [number, number])[];
  /** Draw as a step function (a CDF, a running total). */
  step?: boolean;
  /** Markers at every point (a sweep), at a few points (identifies long series without colour), or none. */
  markers?: 'all' | 'sparse' | 'none';
  /** A label at the series' last point (direct labelling). */
  endLabel?: string;
  /** A small label per point (a sweep's step values); one that would overlap an earlier label is left out. */
  pointLabels?: readonly string[];
}

/** A line/step chart. */
export interface LineChartSpec {
  id: string;
  title: string;
  description: string;
  x: AxisSpec;
  y: AxisSpec;
  series: readonly LineSeries[];
  xRules?: readonly Rule[];
  yRules?: readonly Rule[];
  /** Labelled points: the knee of a sweep, a change. Drawn as a ring with a leader and label. */
  marks?: readonly Mark[];
  height?: number;
}

function dashAttr(i: number): string {
  const d = DASH[i % DASH.length] as string;
  return d ? ` stroke-dasharray="${d}"` : '';
}

function seriesSample(i: number, withMarker: boolean): (x: number, y: number) => string {
  return (x, y) =>
    `<path class="line s${i % 8}" d="M${px(x)} ${px(y)}h24"${dashAttr(i)}/>` +
    (withMarker ? marker(i, x + 12, y, `mk s${i % 8}`) : '');
}

/** Lines (or steps) on linear or time axes, with rules, marks, a legend and direct end labels. */
export function lineChart(spec: LineChartSpec): string {
  const H = spec.height ?? 300;
  const multi = spec.series.length > 1;
  const lg = legend(
    multi
      ? spec.series.map((s, i) => ({
          name: s.name,
          sample: seriesSample(i, (s.markers ?? 'sparse') !== 'none'),
        }))
      : [],
    56,
    14,
  );
  const endLabels = spec.series.some((s) => s.endLabel !== undefined);
  const flags = (spec.marks ?? []).some((mk) => mk.y === undefined);
  const m = { top: 34 + lg.height + (flags ? 22 : 0), right: endLabels ? 96 : 20, bottom: 44, left: 56 };
  const xs = spec.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = spec.series.flatMap((s) => s.points.map((p) => p[1]));
  // About one tick per 45 px of height, so a short chart (a small multiple) is not crowded.
  const yTicks = Math.max(2, Math.round((H - m.bottom - m.top) / 45));
  const x = axisScale(
    spec.x,
    [...xs, ...(spec.xRules ?? []).map((r) => r.value)],
    [m.left, WIDTH - m.right],
    false,
    6,
  );
  const y = axisScale(
    spec.y,
    [...ys, ...(spec.yRules ?? []).map((r) => r.value)],
    [H - m.bottom, m.top],
    true,
    yTicks,
  );
  let body =
    lg.svg +
    yAxis(spec.y, y, m.left, WIDTH - m.right, yTicks, flags ? 22 : 0) +
    xAxis(spec.x, x, H - m.bottom);
  // Every label drawn so far that a point label must keep clear of.
  const placedLabels: Box[] = [];
  for (const r of spec.yRules ?? []) {
    const h = hRule(r, y, m.left, WIDTH - m.right);
    body += h.svg;
    if (h.box !== undefined) placedLabels.push(h.box);
  }
  const v = vRules(spec.xRules ?? [], x, m.top, H - m.bottom);
  body += v.svg;
  placedLabels.push(...v.boxes);
  const ends: { y: number; text: string; i: number }[] = [];
  spec.series.forEach((s, i) => {
    const pts = downsample(s.points, MAX_POINTS).map(([a, b]) => [x(a), y(b)] as const);
    if (pts.length === 0) return;
    body += `<path class="line s${i % 8}" d="${linePath(pts, s.step === true)}" data-n="${s.points.length}"${dashAttr(i)}><title>${esc(s.name)}</title></path>`;
    body += seriesMarkers(pts, i, s.markers ?? 'sparse', spec.series.length);
    if (s.pointLabels && pts.length === s.points.length)
      body += pointLabels(pts, s.pointLabels, placedLabels, { left: m.left, right: WIDTH - m.right });
    const last = pts[pts.length - 1];
    if (s.endLabel !== undefined && last) ends.push({ y: last[1], text: s.endLabel, i });
  });
  const placed = spread(
    ends.map((e) => e.y + 4),
    13,
    m.top,
    H - m.bottom,
  );
  ends.forEach((e, k) => {
    body += `<text class="end s${e.i % 8}" x="${px(WIDTH - m.right + 6)}" y="${px(placed[k] as number)}">${esc(e.text)}</text>`;
  });
  // Flags (marks without y) whose label would overlap the previous one keep their line and lose the label.
  let flagEnd = -Infinity;
  for (const mk of [...(spec.marks ?? [])].sort((a, b) => a.x - b.x)) {
    let label = mk.label;
    if (mk.y === undefined) {
      const t = flagText(x(mk.x), 0, label);
      if (t.x0 <= flagEnd + 4) label = '';
      else flagEnd = t.x1;
    }
    body += markAt({ ...mk, label }, x, y, m.top, H - m.bottom, placedLabels);
  }
  return figure(spec.id, 'line', spec.title, spec.description, H, body);
}

/** The markers of series `i`: at every point, or a few (offset per series, so two lines over the same points still
 * show both shapes), or none. */
function seriesMarkers(
  pts: readonly (readonly [number, number])[],
  i: number,
  mode: 'all' | 'sparse' | 'none',
  seriesCount: number,
): string {
  if (mode === 'none') return '';
  const every = mode === 'all' ? 1 : Math.max(1, Math.ceil(pts.length / 6));
  const offset = mode === 'all' ? 0 : Math.floor((every * i) / Math.max(2, seriesCount)) % every;
  let out = '<g class="pts">';
  pts.forEach(([px0, py0], k) => {
    if ((k - offset) % every === 0) out += marker(i, px0, py0, `mk s${i % 8}`);
  });
  return `${out}</g>`;
}

/**
 * Small labels at the points (a sweep's step values): left of the point, or right of it where the left would leave
 * the plot (`left`..`right`); one that would overlap a label already placed is left out.
 */
function pointLabels(
  pts: readonly (readonly [number, number])[],
  labels: readonly string[],
  placed: Box[],
  plot: { left: number; right: number },
): string {
  let out = '<g class="ptlabels">';
  pts.forEach(([X, Y], k) => {
    const text = labels[k];
    if (text === undefined || text === '') return;
    const spot = (['end', 'start'] as const)
      .map((anchor) => ({ anchor, x: anchor === 'end' ? X - 6 : X + 6 }))
      .map((p) => ({ ...p, box: labelBox(p.x, Y - 8, text, p.anchor, 10) }))
      .find(
        (p) => p.box.x0 >= plot.left && p.box.x1 <= plot.right && !placed.some((b) => overlaps(b, p.box)),
      );
    if (spot === undefined) return;
    placed.push(spot.box);
    out += `<text class="ptlabel" x="${px(spot.x)}" y="${px(Y - 8)}" text-anchor="${spot.anchor}">${esc(text)}</text>`;
  });
  return `${out}</g>`;
}

/** A labelled mark: a ring at (x, y) with the label above it, or a flag at x alone. */
function markAt(mk: Mark, x: Scale, y: Scale, top: number, bottom: number, placed: Box[] = []): string {
  const X = x(mk.x);
  if (mk.y === undefined) {
    const text = mk.label ? flagText(X, top - 10, mk.label).svg : '';
    return `<g class="mark"><path d="M${px(X)} ${px(top)}V${px(bottom)}"/><path class="flag" d="M${px(X)} ${px(top)}l-4 -7h8z"/>${text}</g>`;
  }
  const Y = y(mk.y);
  // Above the ring on the side with room, else below it, else on the other side: the first place no label holds.
  const side: 'start' | 'end' = X > WIDTH - 160 ? 'end' : 'start';
  const other: 'start' | 'end' = side === 'end' ? 'start' : 'end';
  const at = (anchor: 'start' | 'end', ty: number) => ({
    anchor,
    tx: anchor === 'end' ? X - 10 : X + 10,
    ty,
  });
  const above = Math.max(top + 10, Y - 14);
  const below = Math.min(bottom - 4, Y + 24);
  const first = at(side, above);
  const spots = [first, at(side, below), at(other, above), at(other, below)];
  const boxOf = (p: typeof first): Box => labelBox(p.tx, p.ty, mk.label, p.anchor);
  const spot = spots.find((p) => !placed.some((b) => overlaps(b, boxOf(p)))) ?? first;
  placed.push(boxOf(spot));
  const { anchor, tx, ty } = spot;
  const from = ty < Y ? Y - 6 : Y + 6;
  return `<g class="mark"><circle cx="${px(X)}" cy="${px(Y)}" r="8"/><path d="M${px(X + (anchor === 'end' ? -6 : 6))} ${px(from)}L${px(tx)} ${px(ty < Y ? ty + 3 : ty - 10)}"/><text x="${px(tx)}" y="${px(ty)}" text-anchor="${anchor}">${esc(mk.label)}</text></g>`;
}

/** One bin of a histogram: [x0, x1) and its count. */
export interface Bin {
  x0: number;
  x1: number;
  count: number;
}

/** A histogram. */
export interface HistogramSpec {
  id: string;
  title: string;
  description: string;
  x: AxisSpec;
  y: AxisSpec;
  bins: readonly Bin[];
  /** Vertical rules (percentiles, an SLO). */
  rules?: readonly Rule[];
  height?: number;
}

/** Bars of counts over contiguous bins. */
export function histogram(spec: HistogramSpec): string {
  const H = spec.height ?? 260;
  const m = { top: 34, right: 20, bottom: 44, left: 56 };
  const bins = spec.bins.filter((b) => Number.isFinite(b.x0) && Number.isFinite(b.x1) && b.x1 >= b.x0);
  const x = axisScale(
    spec.x,
    [...bins.flatMap((b) => [b.x0, b.x1]), ...(spec.rules ?? []).map((r) => r.value)],
    [m.left, WIDTH - m.right],
    false,
    6,
  );
  const y = axisScale(
    spec.y,
    bins.map((b) => b.count),
    [H - m.bottom, m.top],
    true,
  );
  let body = yAxis(spec.y, y, m.left, WIDTH - m.right) + `<g class="bars" data-n="${bins.length}">`;
  for (const b of bins) {
    const x0 = x(b.x0);
    const w = Math.max(1, x(b.x1) - x0 - 1);
    const top = y(b.count);
    body += `<rect class="bar" x="${px(x0 + 0.5)}" y="${px(top)}" width="${px(w)}" height="${px(y(0) - top)}"><title>${esc(`${tickLabel(spec.x, x, b.x0)}–${tickLabel(spec.x, x, b.x1)}: ${b.count}`)}</title></rect>`;
  }
  body += '</g>' + xAxis(spec.x, x, H - m.bottom) + vRules(spec.rules ?? [], x, m.top, H - m.bottom).svg;
  return figure(spec.id, 'histogram', spec.title, spec.description, H, body);
}

/** A row of a horizontal bar chart. */
export interface BarRow {
  label: string;
  value: number;
  /** A second, inner value drawn as a solid bar inside the first (time to first token inside latency). */
  inner?: number;
  /** Text at the bar's end (the value with its unit, a status). */
  note: string;
  /** Tone 0..7 and pattern of the bar (a failed check is hatched). */
  tone?: number;
  pattern?: PatternName;
}

/** Horizontal bars, one row per item, labelled on the left and at their end. */
export interface BarChartSpec {
  id: string;
  title: string;
  description: string;
  x: AxisSpec;
  rows: readonly BarRow[];
  rules?: readonly Rule[];
  /** Legend entries (e.g. what the outer and inner bars mean). */
  keys?: readonly { name: string; tone: number; pattern: PatternName; inner?: boolean }[];
}

/** Horizontal bars (per check latency, failures by code). */
export function barChart(spec: BarChartSpec): string {
  const rowH = 26;
  const labelW = Math.min(200, Math.max(60, ...spec.rows.map((r) => textWidth(r.label) + 14)));
  const noteW = Math.min(220, Math.max(40, ...spec.rows.map((r) => textWidth(r.note) + 12)));
  const id = spec.id;
  const keys = spec.keys ?? [];
  const lg = legend(
    keys.map((k): LegendItem => ({
      name: k.name,
      sample: (lx, ly) =>
        k.inner === true
          ? `<rect class="inner" x="${px(lx + 2)}" y="${px(ly - 3)}" width="22" height="6"/>`
          : toneRect(id, lx + 2, ly - 6, 22, 12, k.tone, k.pattern),
    })),
    labelW,
    14,
  );
  const x = axisScale(
    spec.x,
    [...spec.rows.flatMap((r) => [r.value, r.inner ?? 0]), ...(spec.rules ?? []).map((r) => r.value)],
    [labelW, WIDTH - noteW],
    true,
    6,
  );
  // The rules' labels take a band above the bars: one more row each time two would overlap.
  const ruleRows = vRules(spec.rules ?? [], x, 0, 0).rows;
  const band = ruleRows > 0 ? 2 + RULE_ROW * ruleRows : 0;
  const m = { top: 14 + band + lg.height, right: noteW, bottom: 44, left: labelW };
  const H = m.top + spec.rows.length * rowH + m.bottom;
  const patterns = [...spec.rows.map((r) => r.pattern ?? 'solid'), ...keys.map((k) => k.pattern)];
  let body = patternDefs(id, patterns) + lg.svg;
  // Vertical gridlines at the ticks, then the bars over them.
  body += xAxis(spec.x, x, H - m.bottom);
  body += `<g class="bars" data-n="${spec.rows.length}">`;
  spec.rows.forEach((r, i) => {
    const top = m.top + i * rowH;
    const x0 = x(0);
    const w = Number.isFinite(r.value) ? x(r.value) - x0 : 0;
    body += `<text class="rowlabel" x="${px(m.left - 8)}" y="${px(top + rowH / 2 + 4)}" text-anchor="end">${esc(r.label)}</text>`;
    body += toneRect(id, x0, top + 4, w, rowH - 8, r.tone ?? 0, r.pattern ?? 'solid', ' data-bar="outer"');
    if (r.inner !== undefined && Number.isFinite(r.inner)) {
      body += `<rect class="inner" x="${px(x0)}" y="${px(top + rowH / 2 - 3)}" width="${px(Math.max(1, x(r.inner) - x0))}" height="6" data-bar="inner"/>`;
    }
    body += `<text class="note" x="${px(x0 + Math.max(0, w) + 6)}" y="${px(top + rowH / 2 + 4)}">${esc(r.note)}</text>`;
  });
  body += '</g>';
  body += vRules(spec.rules ?? [], x, m.top - band, H - m.bottom).svg;
  return figure(id, 'bars', spec.title, spec.description, H, body);
}

/**
 * Failures counted by code (a batch's failed items, a load run's errors, the checks failing now): one hatched bar
 * per code, most first; nothing when there is none.
 */
export function failureBars(
  spec: Pick<BarChartSpec, 'id' | 'title' | 'description' | 'x'> & {
    counts: Iterable<readonly [string, number]>;
  },
): string {
  const counts = [...spec.counts].sort((a, b) => b[1] - a[1]);
  if (counts.length === 0) return '';
  return barChart({
    id: spec.id,
    title: spec.title,
    description: spec.description,
    x: spec.x,
    rows: counts.map(([code, n]) => ({
      label: code,
      value: n,
      note: String(n),
      tone: 1,
      pattern: 'hatch' as const,
    })),
  });
}

/** A state a timeline or stacked area draws: its legend name, tone and pattern. */
export interface StateStyle {
  id: string;
  label: string;
  tone: number;
  pattern: PatternName;
}

/** A row of a timeline: contiguous or gapped segments, each in one state. */
export interface TimelineRow {
  label: string;
  /** A note at the row's right end (e.g. `99.2% up`). */
  note?: string;
  segments: readonly { start: number; end: number; state: string }[];
}

/** Width of the cap that shows a final state after its instant, px. */
const CAP = 8;

/** The time that `px` pixels stand for on a time axis over `values` that also makes room for them. */
function timeFor(
  spec: AxisSpec,
  values: readonly number[],
  range: readonly [number, number],
  px: number,
): number {
  const s = axisScale(spec, values, range, false);
  const width = Math.abs(range[1] - range[0]);
  return ((s.domain[1] - s.domain[0]) * px) / Math.max(1, width - px);
}

/** Timelines of states over time (uptime per check and model), with change marks. */
export interface TimelineSpec {
  id: string;
  title: string;
  description: string;
  x: AxisSpec;
  states: readonly StateStyle[];
  rows: readonly TimelineRow[];
  marks?: readonly Mark[];
}

/** Horizontal bars over time: one row per label, one segment per interval, coloured and patterned by state. */
export function timeline(spec: TimelineSpec): string {
  const rowH = 22;
  const id = spec.id;
  const labelW = Math.min(220, Math.max(60, ...spec.rows.map((r) => textWidth(r.label) + 14)));
  const noteW = Math.min(120, Math.max(20, ...spec.rows.map((r) => textWidth(r.note ?? '') + 12)));
  const style = new Map(spec.states.map((s) => [s.id, s]));
  const lg = legend(
    spec.states.map((s) => ({
      name: s.label,
      sample: (lx: number, ly: number) => toneRect(id, lx + 2, ly - 6, 22, 12, s.tone, s.pattern),
    })),
    labelW,
    14,
  );
  const marksH = (spec.marks ?? []).length > 0 ? 18 : 0;
  const m = { top: 30 + lg.height + marksH, right: noteW, bottom: 44, left: labelW };
  const H = m.top + spec.rows.length * rowH + m.bottom;
  const xSpec = { ...spec.x, time: spec.x.time ?? true };
  const range = [m.left, WIDTH - m.right] as const;
  const all = spec.rows.flatMap((r) => r.segments.flatMap((s) => [s.start, s.end]));
  const points = spec.rows.flatMap((r) => r.segments.filter((s) => s.end <= s.start).map((s) => s.start));
  // A point in time (an item's final state) is drawn as a cap CAP px wide after its instant; the axis runs on to
  // the end of the last cap, so the data ends where the axis does.
  const capMs = points.length > 0 ? timeFor(xSpec, all, range, CAP) : 0;
  const x = axisScale(xSpec, [...all, ...points.map((t) => t + capMs)], range, false);
  let body =
    patternDefs(
      id,
      spec.states.map((s) => s.pattern),
    ) +
    lg.svg +
    xAxis(xSpec, x, H - m.bottom);
  let n = 0;
  let segs = '';
  spec.rows.forEach((r, i) => {
    const top = m.top + i * rowH;
    body += `<text class="rowlabel" x="${px(m.left - 8)}" y="${px(top + rowH / 2 + 4)}" text-anchor="end">${esc(r.label)}</text>`;
    // Runs of one state are drawn as one rectangle (no seams between equal neighbours; a smaller file).
    const merged: { start: number; end: number; state: string }[] = [];
    for (const s of [...r.segments].sort((a, b) => a.start - b.start)) {
      const prev = merged[merged.length - 1];
      if (prev && prev.state === s.state && prev.end === s.start && s.end > s.start) prev.end = s.end;
      else merged.push({ ...s });
    }
    n += r.segments.length;
    for (const s of merged) {
      const st = style.get(s.state) ?? { tone: 7, pattern: 'none' as PatternName, label: s.state };
      const x0 = x(s.start);
      const w = s.end > s.start ? Math.max(1, x(s.end) - x0) : x(s.start + capMs) - x0;
      segs += toneRect(id, x0, top + 3, w, rowH - 6, st.tone, st.pattern, ` data-state="${esc(s.state)}"`);
    }
    if (r.note !== undefined) {
      body += `<text class="note" x="${px(WIDTH - m.right + 6)}" y="${px(top + rowH / 2 + 4)}">${esc(r.note)}</text>`;
    }
  });
  body += `<g class="segs" data-n="${n}">${segs}</g>`;
  const flags = (spec.marks ?? []).map((mk) => ({ ...mk, X: x(mk.x) })).sort((a, b) => a.X - b.X);
  let lastEnd = -Infinity;
  for (const f of flags) {
    const top = m.top - 4;
    // Labels that would overlap the previous one are shortened to a number, listed in the figure's table.
    const t = flagText(f.X, top - 10, f.label);
    const text = t.x0 > lastEnd + 4 ? t.svg : '';
    if (text) lastEnd = t.x1;
    body += `<g class="mark"><path d="M${px(f.X)} ${px(top)}V${px(H - m.bottom)}"/><path class="flag" d="M${px(f.X)} ${px(top)}l-4 -7h8z"/>${text}<title>${esc(f.label)}</title></g>`;
  }
  return figure(id, 'timeline', spec.title, spec.description, H, body);
}

/** Counts per state at instants, stacked (a batch's items over time). */
export interface StackedSpec {
  id: string;
  title: string;
  description: string;
  x: AxisSpec;
  y: AxisSpec;
  states: readonly StateStyle[];
  /** Instants (x) with a count per state id. */
  points: readonly { x: number; counts: Readonly<Record<string, number>> }[];
  height?: number;
}

/** Stacked areas, bottom to top in the order of `states`, each labelled directly at its right end. */
export function stackedArea(spec: StackedSpec): string {
  const H = spec.height ?? 300;
  const id = spec.id;
  const lg = legend(
    spec.states.map((s) => ({
      name: s.label,
      sample: (lx: number, ly: number) => toneRect(id, lx + 2, ly - 6, 22, 12, s.tone, s.pattern),
    })),
    56,
    14,
  );
  const m = { top: 34 + lg.height, right: 20, bottom: 44, left: 56 };
  const pts = [...spec.points].sort((a, b) => a.x - b.x);
  const range = [m.left, WIDTH - m.right] as const;
  // Each count holds until the next instant: the last one (how the run ended) is held for a cap CAP px wide, or
  // it would have no width at all.
  const last = pts[pts.length - 1];
  if (last !== undefined) {
    const xs = pts.map((p) => p.x);
    pts.push({ x: last.x + timeFor(spec.x, xs, range, CAP), counts: last.counts });
  }
  const sampled =
    pts.length > MAX_POINTS
      ? pts.filter((_, i) => i % Math.ceil(pts.length / MAX_POINTS) === 0 || i === pts.length - 1)
      : pts;
  const totals = sampled.map((p) => spec.states.reduce((t, s) => t + (p.counts[s.id] ?? 0), 0));
  const x = axisScale(
    spec.x,
    sampled.map((p) => p.x),
    range,
    false,
  );
  const y = axisScale(spec.y, totals, [H - m.bottom, m.top], true);
  let body =
    patternDefs(
      id,
      spec.states.map((s) => s.pattern),
    ) +
    lg.svg +
    yAxis(spec.y, y, m.left, WIDTH - m.right);
  const base = sampled.map(() => 0);
  body += `<g class="areas" data-n="${sampled.length}">`;
  for (const s of spec.states) {
    const lower = sampled.map((p, i) => [x(p.x), y(base[i] as number)] as const);
    sampled.forEach((p, i) => (base[i] = (base[i] as number) + (p.counts[s.id] ?? 0)));
    const upper = sampled.map((p, i) => [x(p.x), y(base[i] as number)] as const);
    if (upper.every((u, i) => u[1] === (lower[i] as readonly [number, number])[1])) continue;
    const d = `${linePath(upper, true)}${linePath([...lower].reverse(), false).replace(/^M/, 'L')}Z`;
    body += `<path class="area t${s.tone}" d="${d}" data-state="${esc(s.id)}"><title>${esc(s.label)}</title></path>`;
    if (s.pattern !== 'solid' && s.pattern !== 'none')
      body += `<path d="${d}" fill="url(#${esc(id)}-${s.pattern})" aria-hidden="true"/>`;
  }
  body += '</g>' + xAxis(spec.x, x, H - m.bottom);
  return figure(id, 'stacked', spec.title, spec.description, H, body);
}
