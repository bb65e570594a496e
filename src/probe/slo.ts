/**
 * Service level objectives of `gw probe --slo` / `--warn-slo`: `ttft<2s,latency<10s`. A check that passed but
 * misses a `--slo` bound fails; one that misses only a `--warn-slo` bound is degraded (status `warn`: the run
 * still exits 0). Latency bounds do not apply to task checks (videos run for minutes by design).
 */
import { formatDuration, parseDuration } from '../core/duration.js';
import { UsageError } from '../core/errors.js';
import type { CheckRecord } from './runner.js';

/** The measures an SLO may bound. */
export const SLO_METRICS = ['ttft', 'latency'] as const;
export type SloMetric = (typeof SLO_METRICS)[number];

/** Bounds in milliseconds (a measure at or above its bound misses it). */
export type SloBounds = Partial<Record<SloMetric, number>>;

/** The SLO verdict of one check, as the report carries it. */
export interface SloResult {
  verdict: 'pass' | 'degraded' | 'failed';
  /** What missed, e.g. `latency 12.3s ≥ 10s`. */
  missed: string[];
}

/** Checks whose latency is a task's whole life (minutes): only their ttft, never their latency, is bounded. */
const TASK_CHECKS = /^(video|alpha|beta)(:|$)/;

/** Parses `ttft<2s,latency<10s` (`e2e` is accepted for latency); a bad term is a UsageError naming the flag. */
export function parseSlo(text: string, flag: string): SloBounds {
  const out: SloBounds = {};
  for (const term of text.split(',').map((t) => t.trim())) {
    if (term === '') continue;
    const m = /^([a-z0-9]+)\s*<\s*(\S+)$/.exec(term);
    const name = m?.[1] === 'e2e' ? 'latency' : m?.[1];
    if (m === null || name === undefined || !(SLO_METRICS as readonly string[]).includes(name)) {
      throw new UsageError(
        `${flag}: "${term}" is not <measure><<duration> with measure ttft or latency (e.g. 'ttft<2s,latency<10s')`,
        { field: flag },
      );
    }
    out[name as SloMetric] = parseDuration(m[2] as string, flag);
  }
  if (Object.keys(out).length === 0)
    throw new UsageError(`${flag}: no bound given (e.g. 'ttft<2s')`, { field: flag });
  return out;
}

function misses(rec: CheckRecord, bounds: SloBounds): string[] {
  const out: string[] = [];
  const key = rec.check ?? rec.id;
  const ttft = bounds.ttft;
  if (ttft !== undefined && rec.ttftMs !== undefined && rec.ttftMs >= ttft) {
    out.push(`ttft ${formatDuration(rec.ttftMs)} ≥ ${formatDuration(ttft)}`);
  }
  const latency = bounds.latency;
  if (latency !== undefined && !TASK_CHECKS.test(key) && rec.latencyMs >= latency) {
    out.push(`latency ${formatDuration(rec.latencyMs)} ≥ ${formatDuration(latency)}`);
  }
  return out;
}

/**
 * Applies the bounds to the records that passed (or warned): a `fail` bound missed fails the check, a `warn` bound
 * missed degrades it. Failed and skipped checks are left as they are. Mutates and returns the records.
 */
export function applySlo(
  records: CheckRecord[],
  fail: SloBounds | undefined,
  warn: SloBounds | undefined,
): CheckRecord[] {
  for (const rec of records) {
    if (rec.status !== 'pass' && rec.status !== 'warn') continue;
    const failed = fail !== undefined ? misses(rec, fail) : [];
    if (failed.length > 0) {
      rec.status = 'fail';
      rec.slo = { verdict: 'failed', missed: failed };
      rec.detail = `SLO missed: ${failed.join(', ')}; ${rec.detail}`;
      rec.error = { code: 'slo_missed', message: `SLO missed: ${failed.join(', ')}` };
      continue;
    }
    const degraded = warn !== undefined ? misses(rec, warn) : [];
    if (degraded.length > 0) {
      rec.status = 'warn';
      rec.slo = { verdict: 'degraded', missed: degraded };
      rec.detail = `degraded: ${degraded.join(', ')}; ${rec.detail}`;
      continue;
    }
    rec.slo = { verdict: 'pass', missed: [] };
  }
  return records;
}
