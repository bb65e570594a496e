/**
 * `gw batch status --html`: the items by state over time (stacked; per item when the batch is small), the
 * estimated spend over time, failures by code, what is in doubt, and the counts of `--json`.
 */
import {
  failureBars,
  lineChart,
  stackedArea,
  timeline,
  type LineSeries,
  type StateStyle,
  type TimelineRow,
} from './charts.js';
import { figures, page, section, table, utc, type ReportMeta } from './page.js';
import type { StatusDoc } from '../batch/status.js';
import type { Currency } from '../contract/estimate.js';
import { amountText, totalsText } from '../contract/money.js';

const STATES: StateStyle[] = [
  { id: 'done', label: 'succeeded', tone: 2, pattern: 'solid' },
  { id: 'failed', label: 'failed', tone: 1, pattern: 'hatch' },
  { id: 'doubt', label: 'in doubt', tone: 4, pattern: 'cross' },
  { id: 'running', label: 'created, running', tone: 0, pattern: 'vert' },
  { id: 'sending', label: 'sending', tone: 3, pattern: 'dots' },
];

/** The report's state of an item after an event of the state log. */
export function stateOfEvent(event: string): string | undefined {
  if (event === 'sending') return 'sending';
  if (event === 'done') return 'done';
  if (event === 'failed') return 'failed';
  if (event === 'doubt') return 'doubt';
  if (event === 'reset' || event.startsWith('unsent')) return undefined;
  // created, and every task state the gateway reported (queued, running, …)
  return 'running';
}

/** Counts per state at `samples` instants from the first event to the last. */
export function itemsOverTime(
  items: StatusDoc['items'],
  samples = 200,
): { x: number; counts: Record<string, number> }[] {
  const changes: { t: number; from: string | undefined; to: string | undefined }[] = [];
  for (const it of items) {
    let cur: string | undefined;
    for (const [ev, t] of [...it.events].sort((a, b) => a[1] - b[1])) {
      const next = stateOfEvent(ev);
      if (next !== cur) changes.push({ t, from: cur, to: next });
      cur = next;
    }
  }
  if (changes.length === 0) return [];
  changes.sort((a, b) => a.t - b.t);
  const t0 = (changes[0] as { t: number }).t;
  const t1 = (changes[changes.length - 1] as { t: number }).t;
  const counts: Record<string, number> = Object.fromEntries(STATES.map((s) => [s.id, 0]));
  const out: { x: number; counts: Record<string, number> }[] = [];
  const n = t1 > t0 ? samples : 1;
  let k = 0;
  for (let i = 0; i <= n; i++) {
    const at = n === 1 && i === 1 ? t1 : t0 + ((t1 - t0) * i) / n;
    while (k < changes.length && (changes[k] as { t: number }).t <= at) {
      const c = changes[k] as { from: string | undefined; to: string | undefined };
      if (c.from !== undefined) counts[c.from] = (counts[c.from] ?? 0) - 1;
      if (c.to !== undefined) counts[c.to] = (counts[c.to] ?? 0) + 1;
      k++;
    }
    out.push({ x: at, counts: { ...counts } });
  }
  return out;
}

const STATUS_WORD: Record<string, string> = { done: 'succeeded', doubt: 'in doubt', created: 'running' };

/** Small batches also get one bar per item. */
const MAX_ITEM_ROWS = 30;

function itemRows(items: StatusDoc['items']): TimelineRow[] {
  return items.slice(0, MAX_ITEM_ROWS).map((it) => {
    const ev = [...it.events].sort((a, b) => a[1] - b[1]);
    const segs: TimelineRow['segments'][number][] = [];
    ev.forEach(([name, t], i) => {
      const st = stateOfEvent(name);
      const next = ev[i + 1];
      if (st === undefined) return;
      // A final state is drawn as a short tick after the last event.
      const end = next !== undefined ? next[1] : t;
      if (next === undefined && (st === 'done' || st === 'failed' || st === 'doubt')) {
        segs.push({ start: t, end: t, state: st });
      } else if (end > t) segs.push({ start: t, end, state: st });
    });
    return { label: it.custom_id, note: STATUS_WORD[it.status] ?? it.status, segments: segs };
  });
}

function money(m: Partial<Record<string, number>>): string {
  return totalsText(m, '–');
}

/** The estimated spend over the runs' time span (the state chart's), per currency, with the budgets. */
function spendChart(b: StatusDoc, over: ReturnType<typeof itemsOverTime>): string {
  // Every key of a spend point but `at` is a currency.
  const currencies = [
    ...new Set(
      b.spend_over_time.flatMap((p) =>
        Object.entries(p)
          .filter((e): e is [Currency, number] => e[0] !== 'at' && typeof e[1] === 'number')
          .map(([cur]) => cur),
      ),
    ),
  ];
  // The spend shares the state chart's time: from the runs' first event to their last, the running total held
  // flat after the last item was sent.
  const t0 = over[0]?.x;
  const t1 = over[over.length - 1]?.x;
  const spendSeries: LineSeries[] = currencies.map((cur) => {
    const points = b.spend_over_time.flatMap((p) => {
      const amount = p[cur];
      return amount !== undefined ? [[Date.parse(p.at), amount] as const] : [];
    });
    const end = points[points.length - 1];
    if (end !== undefined && t1 !== undefined && t1 > end[0]) points.push([t1, end[1]] as const);
    return {
      name: cur,
      step: true,
      markers: 'sparse',
      points,
      endLabel: `${cur} ${amountText(b.spend.estimated[cur] ?? 0)}`,
    };
  });
  return spendSeries.length > 0
    ? lineChart({
        id: 'batch-spend',
        title: 'Estimated spend over time',
        description: `Running total of the list price of submitted items${currencies.length > 1 ? ', per currency' : ''}${b.budgets ? '; dashed lines are the budgets' : ''}.`,
        x: {
          label: 'time (UTC)',
          time: true,
          ...(t0 !== undefined && t1 !== undefined ? { min: t0, max: t1 } : {}),
        },
        y: { label: currencies.length === 1 ? `spend (${currencies[0] as string})` : 'spend' },
        series: spendSeries,
        yRules: Object.entries(b.budgets ?? {})
          .filter(
            (e): e is [Currency, number] =>
              typeof e[1] === 'number' && currencies.some((cur) => cur === e[0]),
          )
          .map(([cur, v]) => ({ value: v, label: `budget ${cur} ${amountText(v)}` })),
      })
    : '';
}

/** Failed items, by the error code of their last attempt. */
function failuresChart(b: StatusDoc): string {
  return failureBars({
    id: 'batch-failures',
    title: 'Failures by code',
    description: 'Failed items, by the error code of their last attempt.',
    x: { label: 'items' },
    counts: Object.entries(b.failures_by_code),
  });
}

/** The report's HTML. */
export function batchHtml(b: StatusDoc, meta: ReportMeta): string {
  const c = b.counts;
  const verdict =
    c.failed > 0 || c.in_doubt > 0
      ? {
          text: `${c.failed} failed, ${c.in_doubt} in doubt of ${c.total}${b.finished ? '' : ' (stopped before its end)'}`,
          tone: 'bad' as const,
        }
      : b.finished && c.succeeded === c.total
        ? { text: `OK: all ${c.total} items succeeded`, tone: 'ok' as const }
        : {
            text: `${c.succeeded} of ${c.total} succeeded so far${b.finished ? '' : ' (not finished)'}`,
            tone: 'warn' as const,
          };

  const over = itemsOverTime(b.items);
  const stacked =
    over.length > 0
      ? stackedArea({
          id: 'batch-states',
          title: 'Items by state over time',
          description:
            'How many items were sending, running at the gateway, succeeded, failed or in doubt, at each moment of the runs.',
          x: { label: 'time (UTC)', time: true },
          y: { label: 'items' },
          states: STATES,
          points: over,
        })
      : '';
  const perItem =
    b.items.length > 0 && b.items.length <= MAX_ITEM_ROWS
      ? timeline({
          id: 'batch-items',
          title: 'Each item over time',
          description: 'One bar per item: when it was being sent, running, and how it ended.',
          x: { label: 'time (UTC)', time: true },
          states: STATES,
          rows: itemRows(b.items),
        })
      : '';

  const spend = spendChart(b, over);
  const failures = failuresChart(b);
  const body =
    figures([
      { label: 'items', value: String(c.total) },
      { label: 'succeeded', value: String(c.succeeded), tone: 'ok' },
      { label: 'failed', value: String(c.failed), ...(c.failed ? { tone: 'bad' as const } : {}) },
      { label: 'in doubt', value: String(c.in_doubt), ...(c.in_doubt ? { tone: 'bad' as const } : {}) },
      { label: 'running', value: String(c.running) },
      { label: 'sending', value: String(c.sending) },
      { label: 'estimated spend', value: money(b.spend.estimated) },
      { label: 'implied by usage', value: money(b.spend.implied_by_usage) },
    ]) +
    (stacked || perItem ? section('Timeline', stacked + perItem) : '') +
    (spend ? section('Spend', spend) : '') +
    (failures ? section('Failures', failures) : '') +
    (b.in_doubt.length > 0
      ? section(
          'In doubt',
          `<p class="lead">Created or maybe created, answer lost: not resent unless asked (gw batch retry &lt;dir&gt; --in-doubt).</p>` +
            table({
              head: ['custom_id'],
              rows: b.in_doubt.slice(0, 200).map((id) => [id]),
              ...(b.in_doubt.length > 200 ? { caption: `the first 200 of ${b.in_doubt.length}` } : {}),
            }),
        )
      : '') +
    section(
      'Runs',
      table({
        head: ['started', 'input', 'command'],
        rows: b.runs.map((r) => [utc(r.at), r.input, r.command]),
        nowrap: [0],
      }),
    );
  return page({
    title: 'gw batch status',
    meta,
    verdict,
    extraMeta: [
      { label: 'Directory', value: b.dir },
      { label: 'State', value: b.finished ? 'finished' : 'not finished' },
    ],
    body,
  });
}
