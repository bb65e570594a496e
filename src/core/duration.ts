import { UsageError } from './errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The longest duration accepted (about 24.8 days): Node timers turn longer delays into 1 ms. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * Parses a duration as CLI.md writes it: `90` (seconds), `90s`, `15m`, `1h`, `500ms`, or a sum like `1m30s`.
 * Returns milliseconds; throws a UsageError naming `field` for anything else.
 */
export function parseDuration(input: string, field = 'duration'): number {
  const text = input.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return bounded(Math.round(Number(text) * 1000), input, field);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    total += Number(m[1]) * (UNITS[m[2] as string] as number);
    matched = re.lastIndex;
  }
  if (text.length === 0 || matched !== text.length) {
    throw new UsageError(`${field}: "${input}" is not a duration (use 90, 90s, 15m or 1h)`, { field });
  }
  return bounded(Math.round(total), input, field);
}

function bounded(ms: number, input: string, field: string): number {
  if (ms > MAX_DURATION_MS) {
    throw new UsageError(
      `${field}: "${input}" is too long (at most ${Math.floor(MAX_DURATION_MS / 3_600_000)}h)`,
      {
        field,
      },
    );
  }
  return ms;
}

/** Formats milliseconds for people: `850ms`, `12.3s`, `4m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * A duration that must be more than zero (`--timeout`, `--interval`): `0` would mean "give up at once" or "poll
 * without pause", neither of which a user means. A UsageError (exit 2) naming the field otherwise.
 */
export function parsePositiveDuration(input: string, field = 'duration'): number {
  const ms = parseDuration(input, field);
  if (ms <= 0) {
    throw new UsageError(`${field}: "${input}" must be more than zero (e.g. 500ms, 30s, 5m)`, { field });
  }
  return ms;
}
