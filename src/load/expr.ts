/**
 * The expressions of `gw load --slo` and `--stop-on`: comma-separated terms `<metric>[.<stat>] <op> <value>`, e.g.
 * `ttft.p95<800ms,e2e.p99<10s,errors<1%`. `--stop-on` also takes the word `saturation`.
 *
 * - latency metrics: `ttft` (time to first token), `e2e` (end to end; alias `latency`), `itl` (inter-token gap),
 *   `tpot` (time per output token); stats `p50 p90 p95 p99 p999 max mean`; without a stat, `max` (every request);
 *   values are durations (`800ms`, `2s`, `1m`; a bare number is milliseconds).
 * - `errors`: the share of failed requests, in percent (`errors<1%`).
 * - `rps` (completed requests/s), `goodput` (requests/s meeting every latency term), `tps` (output tokens/s):
 *   plain numbers.
 */
import { UsageError } from '../core/errors.js';

export const LATENCY_METRICS = ['ttft', 'e2e', 'itl', 'tpot'] as const;
export type LatencyMetric = (typeof LATENCY_METRICS)[number];
export const STATS = ['p50', 'p90', 'p95', 'p99', 'p999', 'max', 'mean'] as const;
export type Stat = (typeof STATS)[number];
export type Op = '<' | '<=' | '>' | '>=';

/** One term of an expression. */
export type Term =
  | { kind: 'latency'; metric: LatencyMetric; stat: Stat; op: Op; ms: number; text: string }
  | { kind: 'errors'; op: Op; percent: number; text: string }
  | { kind: 'rate'; metric: 'rps' | 'goodput' | 'tps'; op: Op; value: number; text: string };

/** A parsed expression. */
export interface Expr {
  terms: Term[];
  /** `--stop-on saturation`. */
  saturation: boolean;
  text: string;
}

const TERM = /^([a-z][a-z0-9]*)(?:\.([a-z0-9]+))?\s*(<=|>=|<|>)\s*(.+)$/;
const UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function fail(flag: string, text: string, rule: string): never {
  throw new UsageError(`${flag}: "${text}" ${rule}`, { field: flag });
}

function latencyValue(flag: string, text: string, v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(us|ms|s|m)?$/.exec(v.trim());
  if (!m) fail(flag, text, 'needs a duration such as 800ms, 2s or 1m');
  return Number(m[1]) * (UNITS[m[2] ?? 'ms'] as number);
}

/** Parses `--slo` (saturation not allowed) or `--stop-on` (saturation allowed). Throws UsageError naming the flag. */
export function parseExpr(input: string, flag: '--slo' | '--stop-on' | '--baseline-slo' = '--slo'): Expr {
  const out: Expr = { terms: [], saturation: false, text: input };
  const parts = input.split(',').map((s) => s.trim());
  if (parts.every((p) => p === '')) fail(flag, input, 'is empty (e.g. ttft.p95<800ms,errors<1%)');
  for (const part of parts) {
    if (part === '') fail(flag, input, 'has an empty term (terms are separated by one comma)');
    if (part === 'saturation') {
      if (flag !== '--stop-on') fail(flag, part, 'is only a --stop-on condition');
      out.saturation = true;
      continue;
    }
    const m = TERM.exec(part);
    if (!m) fail(flag, part, 'is not <metric>[.<stat>]<op><value> (e.g. ttft.p95<800ms, errors<1%)');
    const [, metric = '', stat, op = '<', value = ''] = m;
    if ((LATENCY_METRICS as readonly string[]).includes(metric) || metric === 'latency') {
      const s = stat ?? 'max';
      if (!(STATS as readonly string[]).includes(s)) {
        fail(flag, part, `has an unknown statistic "${s}" (use ${STATS.join(', ')})`);
      }
      out.terms.push({
        kind: 'latency',
        metric: (metric === 'latency' ? 'e2e' : metric) as LatencyMetric,
        stat: s as Stat,
        op: op as Op,
        ms: latencyValue(flag, part, value),
        text: part,
      });
    } else if (metric === 'errors') {
      if (stat !== undefined) fail(flag, part, 'takes no statistic (errors<1%)');
      const v = /^(\d+(?:\.\d+)?)\s*%$/.exec(value.trim());
      if (!v) fail(flag, part, 'needs a percentage such as 1% or 0.5%');
      const percent = Number(v[1]);
      if (percent > 100) fail(flag, part, 'is above 100%');
      out.terms.push({ kind: 'errors', op: op as Op, percent, text: part });
    } else if (metric === 'rps' || metric === 'goodput' || metric === 'tps') {
      if (stat !== undefined) fail(flag, part, `takes no statistic (${metric}>10)`);
      if (!/^\d+(\.\d+)?$/.test(value.trim())) fail(flag, part, 'needs a number (per second)');
      out.terms.push({ kind: 'rate', metric, op: op as Op, value: Number(value.trim()), text: part });
    } else {
      fail(
        flag,
        part,
        `has an unknown metric "${metric}" (use ttft, e2e, itl, tpot, errors, rps, goodput, tps${flag === '--stop-on' ? ' or saturation' : ''})`,
      );
    }
  }
  return out;
}

/** True when `actual op limit` holds. */
export function holds(actual: number, op: Op, limit: number): boolean {
  switch (op) {
    case '<':
      return actual < limit;
    case '<=':
      return actual <= limit;
    case '>':
      return actual > limit;
    case '>=':
      return actual >= limit;
  }
}

/**
 * The latency terms one request must meet to count towards goodput: a percentile term `ttft.p95<800ms` asks every
 * good request for ttft < 800 ms (the usual reading of goodput: requests meeting the SLO's thresholds).
 */
export function perRequestTerms(e: Expr | undefined): Array<Extract<Term, { kind: 'latency' }>> {
  return (e?.terms ?? []).filter(
    (t): t is Extract<Term, { kind: 'latency' }> => t.kind === 'latency' && (t.op === '<' || t.op === '<='),
  );
}
