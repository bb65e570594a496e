/**
 * Checks an SLO expression against a step. A failed request counts against every term: for a latency percentile
 * the failures are ranked as infinitely slow (so `e2e.p95<1s` misses as soon as more than 5 % of requests failed,
 * whatever the successes did), `max` and `mean` are infinite when anything failed, and `errors` is the failed share.
 */
import { holds, type Expr, type Term } from './expr.js';
import type { LatencyHistogram } from './histogram.js';
import type { SloCheck } from './schema.js';

/** What the checks read from a step. */
export interface StepFigures {
  requests: number;
  errors: number;
  requests_per_s: number;
  goodput_per_s: number;
  output_tokens_per_s: number;
  hist: (m: 'e2e' | 'ttft' | 'itl' | 'tpot') => LatencyHistogram;
}

const PCT: Record<string, number> = { p50: 50, p90: 90, p95: 95, p99: 99, p999: 99.9 };

/** The value of a term on a step; Infinity when failures decide it; undefined when there is no data. */
export function actual(t: Term, s: StepFigures): number | undefined {
  if (t.kind === 'errors') return s.requests === 0 ? undefined : (100 * s.errors) / s.requests;
  if (t.kind === 'rate') {
    return t.metric === 'rps'
      ? s.requests_per_s
      : t.metric === 'goodput'
        ? s.goodput_per_s
        : s.output_tokens_per_s;
  }
  const h = s.hist(t.metric);
  const n = h.count;
  const f = s.errors;
  if (n + f === 0) return undefined;
  if (t.stat === 'max' || t.stat === 'mean') {
    if (f > 0) return Infinity;
    return t.stat === 'max' ? h.summary().max : h.summary().mean;
  }
  if (n === 0) return Infinity;
  const p = PCT[t.stat] as number;
  const rank = Math.ceil((p / 100) * (n + f));
  if (rank > n) return Infinity;
  return h.percentileMs(Math.min(100, (100 * rank) / n));
}

/** Checks every term of an expression (the saturation word is not a term). */
export function check(e: Expr, s: StepFigures): { pass: boolean; checks: SloCheck[] } {
  const checks: SloCheck[] = e.terms.map((t) => {
    const v = actual(t, s);
    if (v === undefined) return { term: t.text, actual: null, pass: false };
    const limit = t.kind === 'latency' ? t.ms : t.kind === 'errors' ? t.percent : t.value;
    return {
      term: t.text,
      actual: Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null,
      pass: holds(v, t.op, limit),
    };
  });
  return { pass: checks.every((c) => c.pass), checks };
}

/** The first term of a --stop-on expression that holds now (needs at least `minRequests` finished). */
export function firstHolding(e: Expr, s: StepFigures, minRequests = 20): string | undefined {
  if (s.requests < minRequests) return undefined;
  for (const t of e.terms) {
    const v = actual(t, s);
    if (v === undefined) continue;
    const limit = t.kind === 'latency' ? t.ms : t.kind === 'errors' ? t.percent : t.value;
    if (holds(v, t.op, limit)) return t.text;
  }
  return undefined;
}
