/**
 * `gw batch status <dir>`: counts per state, spend (estimated at list price, and implied by reported usage), what
 * is in doubt, failures by code, and — with --json — the timeline a report draws: every item's state changes with
 * their times, and the estimated spend over time.
 */
import { parseBudget, type Currency } from '../contract/estimate.js';
import { byCurrency, CURRENCIES, loadState, moneyDigits, roundMoney, type StateRecord } from './state.js';

/** One item's history. */
export interface ItemTimeline {
  custom_id: string;
  url?: string;
  model?: string;
  status: string;
  task_id?: string;
  /** [state, epoch milliseconds] in order: sending, unsent, created, queued/running…, done/failed/doubt. */
  events: Array<[string, number]>;
  error_code?: string;
}

/** The status document (`--json`). */
export interface StatusDoc {
  dir: string;
  runs: Array<{ at: string; input: string; command: string }>;
  counts: {
    total: number;
    succeeded: number;
    failed: number;
    in_doubt: number;
    running: number;
    sending: number;
    /** Running items whose last follow stopped short (a download cut): the next run or retry resumes them. */
    unfinished: number;
  };
  spend: {
    estimated: Partial<Record<Currency, number>>;
    implied_by_usage: Partial<Record<Currency, number>>;
  };
  spend_over_time: Array<{ at: string } & Partial<Record<Currency, number>>>;
  failures_by_code: Record<string, number>;
  in_doubt: string[];
  items: ItemTimeline[];
  finished: boolean;
  /** The --budget of the last run, per currency (absent without one). */
  budgets?: Partial<Record<Currency, number>>;
  /** The shard the directory's last run worked on (absent when it was not a shard), and its run. */
  shard?: { shard: string; run: string | null };
  /** A merged directory: the run merged, its shards merged and missing (as k/n). */
  merge?: { run: string | null; n: number; merged: string[]; missing: string[] };
}

/** Builds the status of a batch directory; undefined when it holds no batch. */
export async function batchStatus(dir: string, withItems: boolean): Promise<StatusDoc | undefined> {
  const items = new Map<string, ItemTimeline>();
  const over: Array<{ at: number; c: Currency; a: number }> = [];
  let lastEnd: StateRecord | undefined;
  let merge: Extract<StateRecord, { e: 'merge' }> | undefined;
  const state = await loadState(dir, (r) => {
    if (r.e === 'run' || r.e === 'end') {
      lastEnd = r;
      return;
    }
    if (r.e === 'merge') {
      merge = r;
      return;
    }
    if (r.e === 'send' && r.est !== undefined) over.push({ at: r.at, c: r.est.c, a: r.est.a });
    if (!withItems) return;
    let it = items.get(r.id);
    if (it === undefined) {
      it = { custom_id: r.id, status: '', events: [] };
      items.set(r.id, it);
    }
    switch (r.e) {
      case 'send':
        it.url = r.url;
        it.model = r.model;
        it.events.push(['sending', r.at]);
        break;
      case 'created':
        it.task_id = r.task;
        it.events.push(['created', r.at]);
        break;
      case 'task':
        it.events.push([r.state, r.at]);
        break;
      case 'unsent':
        it.events.push([`unsent:${r.code}`, r.at]);
        break;
      case 'failed':
        it.error_code = r.code;
        it.events.push(['failed', r.at]);
        break;
      case 'unfinished':
        it.events.push([`unfinished:${r.code}`, r.at]);
        break;
      default:
        it.events.push([r.e, r.at]);
    }
  });
  if (state === undefined) return undefined;
  const c = state.counts();
  const failures: Record<string, number> = {};
  for (const code of state.failureCode.values()) failures[code] = (failures[code] ?? 0) + 1;
  const inDoubt = [...state.status].filter(([, s]) => s === 'doubt').map(([id]) => id);
  // Amounts at --prices are fractions of a cent: shown to a millionth when a run priced with it.
  const digits = moneyDigits(state.runs.find((r) => r.opts?.prices !== undefined));
  // Spend over time: the running total of estimates at each send (resends after a 429 count once per send).
  const running: Partial<Record<Currency, number>> = {};
  const spendOverTime = over
    .sort((a, b) => a.at - b.at)
    .map((p) => {
      running[p.c] = roundMoney((running[p.c] ?? 0) + p.a, digits);
      const point: { at: string } & Partial<Record<Currency, number>> = { at: new Date(p.at).toISOString() };
      for (const cur of CURRENCIES) if (running[cur] !== undefined) point[cur] = running[cur];
      return point;
    });
  for (const it of items.values()) it.status = state.status.get(it.custom_id) ?? 'not sent';
  return {
    dir,
    runs: state.runs.map((r) => ({
      at: new Date(r.at).toISOString(),
      input: r.input,
      command: r.argv.join(' '),
    })),
    counts: {
      total: state.status.size,
      succeeded: c.done,
      failed: c.failed,
      in_doubt: c.doubt,
      running: c.created,
      sending: c.sending,
      unfinished: state.unfinished.size,
    },
    spend: {
      estimated: byCurrency(state.estimate.values(), digits),
      implied_by_usage: byCurrency(state.implied.values(), digits),
    },
    spend_over_time: spendOverTime,
    failures_by_code: failures,
    in_doubt: inDoubt,
    items: [...items.values()],
    finished: lastEnd?.e === 'end',
    ...budgetsOf(state.runs[state.runs.length - 1]?.opts?.budgets),
    ...shardsOf(state.runs.at(-1), merge),
  };
}

/** Which shard a directory holds, or which shards a merge joined (the merge's own record wins). */
function shardsOf(
  last: Extract<StateRecord, { e: 'run' }> | undefined,
  merge: Extract<StateRecord, { e: 'merge' }> | undefined,
): Pick<StatusDoc, 'shard' | 'merge'> {
  if (merge !== undefined) {
    const { run, n, merged, missing } = merge;
    return { merge: { run: run ?? null, n, merged, missing } };
  }
  const shard = last?.opts?.shard ?? last?.shard;
  return shard !== undefined ? { shard: { shard, run: last?.run ?? null } } : {};
}

/** `{budgets: {CNY: 50}}` from a run's `--budget` texts, or nothing without one. */
function budgetsOf(texts: readonly string[] | undefined): { budgets?: Partial<Record<Currency, number>> } {
  const amounts = (texts ?? []).flatMap((t) => {
    const b = parseBudget(t);
    return b !== undefined ? [{ c: b.currency, a: b.amount }] : [];
  });
  const out = byCurrency(amounts);
  return Object.keys(out).length > 0 ? { budgets: out } : {};
}
