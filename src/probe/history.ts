/**
 * The probe history: one JSON line per probe run in `<state dir>/probe-history.jsonl`, appended (O_APPEND, one
 * write per line) after each run. Bounded: past `maxBytes` the file is rotated to `probe-history.1.jsonl` (the
 * previous rotated file is dropped), so the history holds between one and two files' worth of the latest runs.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { maskUserinfo } from '../client/base-url.js';
import { askSchema } from './report-schema.js';
import type { ProbeAsk, ProbeReport } from './runner.js';

export const HISTORY_FILE = 'probe-history.jsonl';
export const HISTORY_ROTATED = 'probe-history.1.jsonl';
/** Rotation size: 8 MiB (about a week of runs every 30 s with a dozen checks). */
export const HISTORY_MAX_BYTES = 8 * 1024 * 1024;

/** One check of a run, as stored (short keys keep a week of runs small). */
export interface HistoryCheck {
  /** Check id (`chat`, `chat-stream`, …). */
  c: string;
  /** Model ('' for the checklist's `models` check). */
  m: string;
  /** pass | fail | warn | skip. */
  s: string;
  /** Latency, ms. */
  l?: number;
  /** Time to first token, ms. */
  t?: number;
  /** Error code of a failure. */
  e?: string;
  /** Failure class (auth, quota, rate-limit, timeout, model, unknown-kind). */
  k?: string;
}

/** One run, as stored. */
export interface HistoryRun {
  v: 1;
  /** Start, ISO time. */
  at: string;
  /** Duration, ms. */
  d: number;
  /** The gateway's base URL (a base URL holds no credentials: normalizeBaseUrl refuses them). */
  gateway: string;
  ok: boolean;
  /** What the run asked for (runs are compared only when they asked the same); absent from older lines. */
  asked?: ProbeAsk;
  checks: HistoryCheck[];
}

/** A stored line as read back: what the writer above writes (older lines have no `asked`). */
const historyRunSchema = z.object({
  v: z.literal(1),
  at: z.string().refine((t) => Number.isFinite(Date.parse(t)), 'is not a time'),
  d: z.number(),
  gateway: z.string(),
  ok: z.boolean(),
  asked: askSchema.optional(),
  checks: z.array(
    z.object({
      c: z.string(),
      m: z.string(),
      s: z.string(),
      l: z.number().optional(),
      t: z.number().optional(),
      e: z.string().optional(),
      k: z.string().optional(),
    }),
  ),
});

/** The model a record's check used: an `--all-models` row's own, else the checklist's planned model. */
function modelOf(c: ProbeReport['checks'][number]): string {
  if (c.model !== undefined) return c.model;
  const m = c.data?.model;
  return typeof m === 'string' ? m : '';
}

/** The stored form of a report. */
export function toHistoryRun(r: ProbeReport, models?: Record<string, string>): HistoryRun {
  return {
    v: 1,
    at: r.startedAt,
    d: r.durationMs,
    gateway: r.gateway,
    ok: r.summary.failed === 0,
    ...(r.asked !== undefined ? { asked: r.asked } : {}),
    checks: r.checks.map((c) => {
      const h: HistoryCheck = { c: c.check ?? c.id, m: models?.[c.id] ?? modelOf(c), s: c.status };
      if (c.status !== 'skip') h.l = c.latencyMs;
      if (c.ttftMs !== undefined) h.t = c.ttftMs;
      if (c.error !== undefined) h.e = c.error.code;
      if (c.class !== undefined) h.k = c.class;
      return h;
    }),
  };
}

/** Appends a run; rotates first when the file is past `maxBytes`. Errors are returned, never thrown. */
export function appendHistory(
  dir: string,
  run: HistoryRun,
  maxBytes = HISTORY_MAX_BYTES,
): string | undefined {
  try {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, HISTORY_FILE);
    let size = 0;
    try {
      size = statSync(file).size;
    } catch {
      // no file yet
    }
    if (size >= maxBytes) renameSync(file, join(dir, HISTORY_ROTATED));
    appendFileSync(file, `${JSON.stringify(run)}\n`, { mode: 0o600 });
    return undefined;
  } catch (e) {
    return `cannot append to the probe history in ${dir}: ${(e as Error).message}`;
  }
}

/**
 * Every stored run, oldest first (rotated file, then current). A line that does not parse or breaks the schema (a
 * torn last line of a crashed writer, a hand edit) is skipped: a log, not a document. Gateways are named without
 * credentials masked, should a line an older gw wrote hold them.
 */
export function readHistory(dir: string): HistoryRun[] {
  const runs: HistoryRun[] = [];
  for (const name of [HISTORY_ROTATED, HISTORY_FILE]) {
    const file = join(dir, name);
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        continue;
      }
      const run = historyRunSchema.safeParse(json);
      if (run.success) runs.push({ ...(run.data as HistoryRun), gateway: maskUserinfo(run.data.gateway) });
    }
  }
  return runs;
}
