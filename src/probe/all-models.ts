/**
 * `gw probe --all-models`: every model of `GET /v1/models` gets the cheapest request of its kind (the kind table of
 * src/contract/model-kinds.ts), one row per model and mode. Bounded: a few requests in flight, a small output
 * budget (more for reasoning models), and a time limit per row. Authentication, quota and rate-limit answers are
 * classified as such: they say nothing about the model.
 */
import type { Exchange, GatewayClient } from '../client/gateway-client.js';
import { formatDuration } from '../core/duration.js';
import { InterruptedError, TimeLimitError } from '../core/errors.js';
import { TASK_KINDS, modelKindOf, type ModelKind, type ModelKindInfo } from '../contract/model-kinds.js';
import {
  VIDEO_REFERENCE_RULES,
  minVideoSecondsFor,
  videoListPrice,
  type VideoReferenceRule,
} from '../contract/video.js';
import type { Currency } from '../contract/money.js';
import type { PriceTable } from '../contract/prices.js';
import { BudgetLedger, isRefusal, type Amount, type Hold } from '../core/budget.js';
import { rowRequest } from './row-requests.js';
import type { Check, CheckContext } from './checks.js';
import {
  DEFAULT_PLAN,
  errorOf,
  finalize,
  recordSpend,
  summarize,
  type CheckError,
  type CheckOutcome,
  type CheckRecord,
  type CreatedKind,
  type ProbeReport,
} from './runner.js';
import { TEXT_APIS, type TextApi } from './stream-grammar.js';
import { sendRow } from './row-requests.js';
import { list } from '../client/resources/models.js';

/** Requests in flight at most. */
export const ALL_MODELS_CONCURRENCY = 3;

/** Options of an `--all-models` run. */
export interface AllModelsOptions {
  gateway: string;
  kinds: readonly ModelKind[];
  skipGlobs: readonly string[];
  bothStreamModes: boolean;
  /** --budget: the amount allowed per currency. */
  budget: ReadonlyMap<Currency, number>;
  allowUnpriced: boolean;
  /**
   * --prices: the rows of the models it prices count their upper bound against the --budget of their currency
   * (text, embeddings and images too), until their answer's spend replaces it; a row it cannot bound is unpriced.
   */
  prices?: PriceTable | undefined;
  /** Time limit of one row (a task row: `taskTimeoutMs`). */
  rowTimeoutMs: number;
  taskTimeoutMs: number;
  videoPoll: { initialMs: number; maxMs: number };
  /** A public https image (image edits and alpha's first frame). */
  probeImage: string | undefined;
  signal: AbortSignal;
  client(o: { validate: boolean; onExchange: (x: Exchange) => void }): Promise<GatewayClient>;
  note(text: string): void;
  /** Called right after a billable task was created, before any wait (the command journals it). */
  onCreated?(kind: CreatedKind, id: string, model: string, requestId: string | undefined): void;
  onFinish?(record: CheckRecord): void;
  now?: () => number;
  clock?: () => Date;
  concurrency?: number;
}

/** A planned row: a model, the check it gets, or why it is not probed. */
export interface PlannedRow {
  model: string;
  check: string;
  kind?: ModelKind;
  info?: ModelKindInfo;
  /** The text API a text row calls (a chat model is probed on each text API --kind selects). */
  api?: TextApi;
  stream: boolean;
  /** Set when the row is not sent. */
  skip?: { detail: string; class?: string };
  /** What the row holds against --budget until its answer's spend is known (a task's list price, a bound). */
  cost?: Amount;
}

/** `*` and `?` globs, anchored, case-sensitive. */
export function globToRegExp(glob: string): RegExp {
  const re = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`);
}

/**
 * The rows of a model of `kind`: a text model gets one per text API it serves (a chat model: every text API among
 * `kinds`; a responses or messages model: its own) and, with both modes, a streamed one each (`chat-stream`); a
 * model of another kind gets one row named after its kind.
 */
function rowsOf(
  kind: ModelKind,
  kinds: readonly ModelKind[],
  both: boolean,
): Array<{ check: string; api?: TextApi; stream: boolean }> {
  if (!(TEXT_APIS as readonly string[]).includes(kind)) return [{ check: kind, stream: false }];
  const served = kind === 'chat' ? TEXT_APIS.filter((a) => kinds.includes(a)) : [kind as TextApi];
  // Not selected at all: one row says so.
  if (served.length === 0) return [{ check: kind, api: kind as TextApi, stream: false }];
  return served.flatMap((api) => [
    { check: api, api, stream: false },
    ...(both ? [{ check: `${api}-stream`, api, stream: true }] : []),
  ]);
}

/**
 * Plans the rows for the listed models: kind, selection, globs, and what each costs against the budget (whether
 * it fits is decided as the rows run: `Admissions`).
 */
export function planRows(models: readonly string[], o: AllModelsOptions): PlannedRow[] {
  const globs = o.skipGlobs.map((g) => [g, globToRegExp(g)] as const);
  const rows: PlannedRow[] = [];
  for (const model of models) {
    const info = modelKindOf(model);
    if (info === undefined) {
      rows.push({
        model,
        check: 'unknown',
        stream: false,
        skip: {
          detail:
            'not probed: unknown kind (the name is in no model table and follows no known naming convention)',
          class: 'unknown-kind',
        },
      });
      continue;
    }
    const kind = info.kind;
    const base = { model, kind, info };
    const glob = globs.find(([, re]) => re.test(model));
    for (const { check, api, stream } of rowsOf(kind, o.kinds, o.bothStreamModes)) {
      const row: PlannedRow = { ...base, check, stream, ...(api !== undefined ? { api } : {}) };
      if (glob !== undefined) row.skip = { detail: `skipped (--skip-model ${glob[0]})` };
      else if (!o.kinds.includes(api ?? kind)) {
        row.skip = {
          detail: TASK_KINDS.includes(kind)
            ? `not probed: ${kind} creates a paid task (add --kind ${kind} and a --budget to probe it)`
            : `not selected (--kind)`,
        };
      } else if (kind === 'video' && needsReferences(model)) {
        row.skip = {
          detail: 'not probed: this video model needs reference media (the probe sends a text-only request)',
        };
      } else if (TASK_KINDS.includes(kind)) {
        costOf(row, taskCost(model, kind, o.allowUnpriced));
      } else if ((kind === 'image-edit' || kind === 'alpha') && o.probeImage === undefined) {
        row.skip = { detail: 'not probed: needs --probe-image <public https url> (the gateway fetches it)' };
      } else {
        costOf(row, pricedCost(row, o));
      }
      if (row.skip === undefined && kind === 'alpha' && o.probeImage === undefined) {
        row.skip = { detail: 'not probed: needs --probe-image <public https url>' };
      }
      rows.push(row);
    }
  }
  return rows;
}

/** True when a video model of the table rejects a text-only request (common.md §2.3 reference table). */
function needsReferences(model: string): boolean {
  const rule = (VIDEO_REFERENCE_RULES as Readonly<Record<string, VideoReferenceRule | undefined>>)[model];
  return (
    rule !== undefined &&
    ((rule.images?.min ?? 0) > 0 || rule.needsReference === true || rule.needsVideo === true)
  );
}

/** A row's cost (held against the budget as it runs) or the reason it is not probed. */
type RowCost = Amount | { reason: string } | undefined;

function costOf(row: PlannedRow, c: RowCost): void {
  if (c === undefined) return;
  if ('reason' in c) row.skip = { detail: `not probed: ${c.reason}` };
  else row.cost = c;
}

/** The list price of a task row, counted against the budget; a reason when it cannot be. */
function taskCost(model: string, kind: ModelKind, allowUnpriced: boolean): RowCost {
  const price = kind === 'video' ? videoListPrice(model, minVideoSecondsFor(model), '720p') : undefined;
  if (price?.amount === undefined) {
    if (allowUnpriced) return undefined;
    return {
      reason: `its list price is not documented, so --budget cannot bound it (--allow-unpriced to probe it anyway)`,
    };
  }
  return { currency: price.currency, amount: price.amount };
}

/**
 * A text, embeddings or image row of a model --prices prices: its request's upper bound, counted against the
 * --budget of its currency (a currency without one is not capped); a reason when it has no bound.
 */
function pricedCost(row: PlannedRow, o: AllModelsOptions): RowCost {
  const req = o.prices !== undefined ? rowRequest(row, o.probeImage) : undefined;
  const b = req !== undefined ? o.prices?.bound(req.url, req.body) : undefined;
  if (b === undefined) return undefined;
  if ('reason' in b) {
    return o.allowUnpriced || o.budget.size === 0
      ? undefined
      : { reason: `${b.reason}, so --budget cannot bound it (--allow-unpriced to probe it anyway)` };
  }
  return o.budget.has(b.currency) ? { currency: b.currency, amount: b.amount } : undefined;
}

/**
 * The budget of a run's rows. Rows are admitted one after another in plan order: a row's cost is held when it fits
 * beside what earlier rows spent (their answers' spend once known, else their cost); a row that would fit only if
 * rows still running spend less than their bound waits for them. So which rows are probed depends on what the
 * answers cost, never on which answer came first.
 */
export class Admissions {
  readonly #ledger: BudgetLedger;
  #turn: Promise<unknown> = Promise.resolve();

  constructor(
    budget: ReadonlyMap<Currency, number>,
    private readonly signal: AbortSignal,
  ) {
    this.#ledger = new BudgetLedger(budget);
  }

  /** The row's hold, or why it is not probed (undefined: it costs nothing here). Call in plan order. */
  admit(row: PlannedRow): Promise<Hold | string | undefined> {
    const cost = row.cost;
    if (row.skip !== undefined || cost === undefined) return Promise.resolve(undefined);
    const decided = this.#turn.then(() => this.#decide(cost));
    this.#turn = decided;
    return decided;
  }

  /** Ends a row's hold with the spend its answer reported (undefined keeps its cost). */
  settle(hold: Hold, spend: Amount | undefined): void {
    this.#ledger.settle(hold, spend);
  }

  async #decide(cost: Amount): Promise<Hold | string> {
    for (;;) {
      const r = this.#ledger.reserve(cost.currency, cost.amount);
      if (!isRefusal(r)) return r;
      if (!r.later || this.signal.aborted) return r.reason;
      await this.#ledger.changed();
    }
  }
}

/** How an error is classified: answers about the token, the quota or the rate say nothing about the model. */
export function classify(e: CheckError): string {
  const code = e.code.toLowerCase();
  if (/quota|insufficient|balance|billing|credit|payment/.test(code) || e.status === 402) return 'quota';
  if (e.status === 401 || /invalid_api_key|authentication|unauthori[sz]ed|^1002$/.test(code)) return 'auth';
  if (e.status === 429 || /rate_limit|too_many/.test(code)) return 'rate-limit';
  if (e.status === 403 && /permission|forbidden|access/.test(code)) return 'auth';
  if (code === 'timeout') return 'timeout';
  return 'model';
}

const NOTE: Record<string, string> = {
  auth: 'the token was refused: not a model fault',
  quota: 'quota or balance exhausted: not a model fault',
  'rate-limit': 'rate limited: not a model fault',
  timeout: 'no answer within the row time limit',
};

/**
 * Runs one planned row once the budget admits it (asked at once, so rows are admitted in plan order); its hold
 * ends with the spend its answer reported (--prices), or keeps its cost when that is not known.
 */
async function runAdmitted(
  row: PlannedRow,
  o: AllModelsOptions,
  now: () => number,
  budget: Admissions,
): Promise<CheckRecord> {
  const hold = await budget.admit(row);
  if (typeof hold === 'string') return runRow({ ...row, skip: { detail: `not probed: ${hold}` } }, o, now);
  let spend: Amount | undefined;
  try {
    const record = await runRow(row, o, now);
    spend = o.prices !== undefined ? recordSpend(record, o.prices) : undefined;
    return record;
  } finally {
    if (hold !== undefined) budget.settle(hold, spend);
  }
}

/** Runs one planned row within its time limit; returns its record. */
async function runRow(row: PlannedRow, o: AllModelsOptions, now: () => number): Promise<CheckRecord> {
  const id = `${row.check}:${row.model}`;
  const check: Check = {
    id,
    title: `${row.check} ${row.model}`,
    run: () => Promise.reject(new Error('unused')),
  };
  const base = { check: row.check, model: row.model, ...(row.kind !== undefined ? { kind: row.kind } : {}) };
  if (row.skip !== undefined) {
    return {
      id,
      title: check.title,
      status: 'skip',
      latencyMs: 0,
      detail: row.skip.detail,
      ...base,
      ...(row.skip.class !== undefined ? { class: row.skip.class } : {}),
    };
  }
  const task = TASK_KINDS.includes(row.kind as ModelKind);
  const limit = task ? o.taskTimeoutMs + 30_000 : o.rowTimeoutMs;
  // The row's own signal: aborted by its time limit or by the run's signal (linked by hand: AbortSignal.any on a
  // signal that lives as long as a watch keeps every row's signal reachable on some Node versions).
  const timer = new AbortController();
  const t = setTimeout(
    () => timer.abort(new TimeLimitError(`no answer within ${formatDuration(limit)}`)),
    limit,
  );
  const forward = (): void => timer.abort(o.signal.reason);
  o.signal.addEventListener('abort', forward, { once: true });
  const signal = timer.signal;
  const exchanges: Exchange[] = [];
  const client = await o.client({ validate: true, onExchange: (x) => exchanges.push(x) });
  const checkContext = (): CheckContext => ({
    plan: { ...DEFAULT_PLAN, models: [], videoModel: row.model },
    signal,
    videoTimeoutMs: o.taskTimeoutMs,
    videoPoll: o.videoPoll,
    now,
    client: () => Promise.resolve(client),
    exchanges: () => exchanges,
    note: (text) => o.note(text),
    update: () => {},
    created: (kind, cid, model, requestId) => o.onCreated?.(kind, cid, model, requestId),
  });
  const started = now();
  let outcome: CheckOutcome;
  try {
    outcome = await sendRow(row, {
      client,
      signal,
      now,
      probeImage: o.probeImage,
      taskTimeoutMs: o.taskTimeoutMs,
      videoPoll: o.videoPoll,
      checkContext,
      ...(o.onCreated !== undefined ? { onCreated: o.onCreated.bind(o) } : {}),
    });
  } catch (e) {
    if (o.signal.aborted) throw e instanceof InterruptedError ? e : new InterruptedError();
    const flag = task ? '--video-timeout' : '--model-timeout';
    const error: CheckError = timer.signal.aborted
      ? { code: 'timeout', message: `no answer within ${formatDuration(limit)} (${flag})` }
      : errorOf(e);
    outcome = { status: 'fail', detail: `${error.code}: ${error.message}`, error };
  } finally {
    clearTimeout(t);
    o.signal.removeEventListener('abort', forward);
  }
  const record: CheckRecord = { ...finalize(check, outcome, now() - started, exchanges), ...base };
  if (record.status === 'fail' && record.error !== undefined) {
    const cls = classify(record.error);
    record.class = cls;
    if (cls === 'rate-limit') record.status = 'warn';
    const note = NOTE[cls];
    if (note !== undefined) record.detail = `${cls}: ${note}; ${record.detail}`;
  } else if (record.status === 'fail') record.class = 'model';
  return record;
}

/** Runs `tasks` with at most `n` in flight, keeping their order in the result. */
async function pool<T>(n: number, tasks: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const out = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, tasks.length) }, worker));
  return out;
}

/** The model list, then one row per model and mode. */
export async function runAllModels(o: AllModelsOptions): Promise<ProbeReport> {
  const now = o.now ?? (() => Number(process.hrtime.bigint()) / 1e6);
  const clock = o.clock ?? (() => new Date());
  const startedAt = clock();
  const t0 = now();
  const exchanges: Exchange[] = [];
  const listCheck: Check = {
    id: 'models',
    title: 'model list (GET /v1/models)',
    run: () => Promise.reject(new Error('unused')),
  };
  let models: string[] = [];
  let listOutcome: CheckOutcome;
  const started = now();
  try {
    const client = await o.client({ validate: true, onExchange: (x) => exchanges.push(x) });
    const res = await list(client, { signal: o.signal });
    models = res.data.data.map((m) => m.id);
    listOutcome = {
      status: 'pass',
      detail: `${models.length} visible`,
      requestId: res.requestId,
      data: { visible: models.length },
    };
  } catch (e) {
    if (o.signal.aborted) throw e instanceof InterruptedError ? e : new InterruptedError();
    const error = errorOf(e);
    listOutcome = { status: 'fail', detail: `${error.code}: ${error.message}`, error };
  }
  const listRecord = finalize(listCheck, listOutcome, now() - started, exchanges);
  if (listRecord.status === 'fail' && listRecord.error !== undefined)
    listRecord.class = classify(listRecord.error);
  o.onFinish?.(listRecord);
  const rows = planRows(models, o);
  const budget = new Admissions(o.budget, o.signal);
  const records = await pool(
    o.concurrency ?? ALL_MODELS_CONCURRENCY,
    rows.map((row) => async () => {
      const r = await runAdmitted(row, o, now, budget);
      o.onFinish?.(r);
      return r;
    }),
  );
  const checks = [listRecord, ...records];
  return {
    gateway: o.gateway,
    startedAt: startedAt.toISOString(),
    finishedAt: clock().toISOString(),
    durationMs: Math.round(now() - t0),
    checks,
    summary: summarize(checks),
  };
}
