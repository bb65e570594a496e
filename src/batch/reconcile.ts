/**
 * After a crash: an item whose last record is "sending" had its create in flight when the process died. If its
 * answer reached results.jsonl / errors.jsonl (written before the state record), it is finished. If the journal
 * holds the task its create made (journaled before the state record), it is created: followed like any other.
 * Otherwise the create may or may not have reached the gateway: it is in doubt, and only resent on request. An
 * item whose last record is "created" (a task being followed) is finished the same way when its line made it to a
 * file before the state record did; otherwise it is followed again.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PriceTable } from '../contract/prices.js';
import { impliedBy } from './spend.js';
import { readRecords } from './lines.js';
import type { BatchJournal, JournaledKind } from './options.js';
import { outputLine, outputLineSchema } from './output.js';
import { ERRORS_FILE, RESULTS_FILE, type BatchState, type BatchWriter, type TaskKind } from './state.js';

/** What a line of results.jsonl / errors.jsonl says of an item. */
interface Found {
  file: 'results' | 'errors';
  code?: string;
  /** The followed task's final record (the line's `task`). */
  task?: Record<string, unknown>;
  /** The answer to the create (the line's `response.body`): a sync item's spend is priced from it. */
  body?: unknown;
}

const CUSTOM_ID = /"custom_id":("(?:[^"\\]|\\.)*")/;

/** The custom_id a line names, read without parsing the whole line (most lines are not wanted). */
function customIdOf(text: string): string | undefined {
  const m = CUSTOM_ID.exec(text);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1] as string) as string;
  } catch {
    return undefined;
  }
}

async function findLines(
  path: string,
  ids: Set<string>,
  found: Map<string, Found>,
  file: 'results' | 'errors',
): Promise<void> {
  try {
    await stat(path);
  } catch {
    return;
  }
  const wanted = (text: string): boolean => {
    const id = customIdOf(text);
    return id !== undefined && ids.has(id);
  };
  for await (const { value: o } of readRecords(path, outputLineSchema, 'a batch output line', wanted)) {
    const code = o.error?.code;
    const task =
      o.task !== null && typeof o.task === 'object' ? (o.task as Record<string, unknown>) : undefined;
    found.set(o.custom_id, {
      file,
      ...(code !== undefined ? { code } : {}),
      ...(task !== undefined ? { task } : {}),
      ...(o.response !== null ? { body: o.response.body } : {}),
    });
  }
}

const KIND_OF: Record<JournaledKind, TaskKind> = { video: 'video', alpha: 'alpha', 'beta-task': 'beta' };

/** Options of reconcile. */
export interface ReconcileOptions {
  /** Forget every in-doubt item so it is sent again. */
  resendInDoubt: boolean;
  journal?: BatchJournal | undefined;
  now: () => number;
  /** --prices: the spend a found answer or task record implies. */
  prices?: PriceTable | undefined;
}

/** Settles "sending" items from a crashed run; with `resendInDoubt`, forgets every in-doubt item so it is sent again. */
export async function reconcile(
  dir: string,
  state: BatchState,
  writer: BatchWriter,
  o: ReconcileOptions,
): Promise<void> {
  const sending = new Set<string>();
  const open = new Set<string>();
  for (const [id, s] of state.status) {
    if (s === 'sending') sending.add(id);
    if (s === 'sending' || s === 'created') open.add(id);
  }
  if (open.size > 0) {
    const found = new Map<string, Found>();
    await findLines(join(dir, RESULTS_FILE), open, found, 'results');
    await findLines(join(dir, ERRORS_FILE), open, found, 'errors');
    const lost = new Map<string, number>();
    for (const id of open) {
      const f = found.get(id);
      // A followed task whose line is not in a file is simply followed again.
      if (!sending.has(id) && (f === undefined || f.code === 'in_doubt')) continue;
      if (f !== undefined && f.code !== 'in_doubt') await settle(state, writer, id, f, o);
      else lost.set(id, state.sentAt.get(id) ?? Number.NaN);
    }
    await fromJournal(dir, state, writer, lost, o);
    for (const id of lost.keys()) await inDoubt(state, writer, id, o.now());
  }
  if (o.resendInDoubt) {
    for (const [id, s] of [...state.status]) {
      if (s !== 'doubt') continue;
      const r = { e: 'reset' as const, id, at: o.now() };
      state.apply(r);
      await writer.append(r);
    }
  }
}

/** An item whose line made it to a file: finished as that line says. */
async function settle(
  state: BatchState,
  writer: BatchWriter,
  id: string,
  f: Found,
  o: ReconcileOptions,
): Promise<void> {
  const at = o.now();
  if (f.file === 'results') {
    // The spend the line implies, as the run would have recorded it: a followed task's from its final record, a
    // sync item's (its create in flight at the crash) from its answer.
    const c = state.created.get(id);
    const url = c?.url ?? state.urlOf.get(id);
    const model = c?.model ?? state.modelOf.get(id) ?? '';
    const answer = c !== undefined ? f.task : f.body;
    const implied = url !== undefined ? impliedBy(url, model, undefined, answer, o.prices) : undefined;
    const r = { e: 'done' as const, id, at, status: 200, ...(implied !== undefined ? { implied } : {}) };
    state.apply(r);
    await writer.append(r);
    return;
  }
  const r = { e: 'failed' as const, id, at, code: f.code ?? 'error' };
  state.apply(r);
  await writer.append(r);
}

/** Items in flight whose create the journal holds (found by their send's time): created, so followed. */
async function fromJournal(
  dir: string,
  state: BatchState,
  writer: BatchWriter,
  lost: Map<string, number>,
  o: ReconcileOptions,
): Promise<void> {
  if (o.journal === undefined || lost.size === 0) return;
  const tasks = await o.journal.find(dir, lost);
  for (const [id, t] of tasks) {
    const rid = t.requestId !== undefined ? { rid: t.requestId } : {};
    const r = { e: 'created' as const, id, at: o.now(), task: t.id, kind: KIND_OF[t.kind], ...rid };
    state.apply(r);
    await writer.append(r);
    lost.delete(id);
  }
}

async function inDoubt(state: BatchState, writer: BatchWriter, id: string, at: number): Promise<void> {
  const reason = 'no answer recorded: the run stopped while this create was in flight';
  const r = { e: 'doubt' as const, id, at, reason };
  state.apply(r);
  await writer.append(r, {
    file: 'errors',
    line: JSON.stringify(
      outputLine(id, null, {
        code: 'in_doubt',
        message: `${reason}; not resent (gw batch retry --in-doubt resends it)`,
      }),
    ),
  });
}
