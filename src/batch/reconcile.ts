/**
 * After a crash: an item whose last record is "sending" had its create in flight when the process died. If its
 * answer reached results.jsonl / errors.jsonl (written before the state record), it is finished; otherwise the
 * create may or may not have reached the gateway: it is in doubt, and only resent on request. An item whose last
 * record is "created" (a task being followed) is finished the same way when its line made it to a file before the
 * state record did; otherwise it is followed again.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { impliedSpend } from '../contract/estimate.js';
import { outputLine } from './output.js';
import { ERRORS_FILE, RESULTS_FILE, type BatchState, type BatchWriter } from './state.js';

/** What a line of results.jsonl / errors.jsonl says of an item. */
interface Found {
  file: 'results' | 'errors';
  code?: string;
  /** The followed task's final record (the line's `task`). */
  task?: Record<string, unknown>;
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
  const input = createReadStream(path, { highWaterMark: 256 * 1024 });
  const rl = createInterface({ input, crlfDelay: Infinity });
  for await (const line of rl) {
    const m = /"custom_id":("(?:[^"\\]|\\.)*")/.exec(line);
    if (!m) continue;
    let id: string;
    try {
      id = JSON.parse(m[1] as string) as string;
    } catch {
      continue;
    }
    if (!ids.has(id)) continue;
    let code: string | undefined;
    let task: Record<string, unknown> | undefined;
    try {
      const o = JSON.parse(line) as { error?: { code?: string } | null; task?: unknown };
      code = o.error?.code;
      if (o.task !== null && typeof o.task === 'object') task = o.task as Record<string, unknown>;
    } catch {
      code = undefined;
    }
    found.set(id, { file, ...(code !== undefined ? { code } : {}), ...(task !== undefined ? { task } : {}) });
  }
}

/** Settles "sending" items from a crashed run; with `resendInDoubt`, forgets every in-doubt item so it is sent again. */
export async function reconcile(
  dir: string,
  state: BatchState,
  writer: BatchWriter,
  resendInDoubt: boolean,
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
    for (const id of open) {
      const f = found.get(id);
      const at = Date.now();
      // A followed task whose line is not in a file is simply followed again.
      if (!sending.has(id) && (f === undefined || f.code === 'in_doubt')) continue;
      if (f?.file === 'results') {
        // A followed task's line carries its final record: the spend it implies, as the run would have recorded.
        const url = state.created.get(id)?.url;
        const spend = url !== undefined ? impliedSpend(url, undefined, f.task) : undefined;
        const implied = spend !== undefined ? { c: spend.currency, a: spend.amount } : undefined;
        const r = { e: 'done' as const, id, at, status: 200, ...(implied !== undefined ? { implied } : {}) };
        state.apply(r);
        await writer.append(r);
      } else if (f?.file === 'errors' && f.code !== 'in_doubt') {
        const r = { e: 'failed' as const, id, at, code: f.code ?? 'error' };
        state.apply(r);
        await writer.append(r);
      } else {
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
    }
  }
  if (resendInDoubt) {
    for (const [id, s] of [...state.status]) {
      if (s !== 'doubt') continue;
      const r = { e: 'reset' as const, id, at: Date.now() };
      state.apply(r);
      await writer.append(r);
    }
  }
}
