import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/errors.js';
import { holds, parseExpr, perRequestTerms } from '../../../src/load/expr.js';

function usage(f: () => unknown): UsageError {
  try {
    f();
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error('no UsageError');
}

describe('SLO / stop-on expressions', () => {
  it('parses latency, error and rate terms with units', () => {
    const e = parseExpr('ttft.p95<800ms,e2e.p99<10s,errors<1%,itl.max<=0.5s,latency.p50<2m,rps>=10,tpot<50');
    expect(e.terms).toEqual([
      { kind: 'latency', metric: 'ttft', stat: 'p95', op: '<', ms: 800, text: 'ttft.p95<800ms' },
      { kind: 'latency', metric: 'e2e', stat: 'p99', op: '<', ms: 10_000, text: 'e2e.p99<10s' },
      { kind: 'errors', op: '<', percent: 1, text: 'errors<1%' },
      { kind: 'latency', metric: 'itl', stat: 'max', op: '<=', ms: 500, text: 'itl.max<=0.5s' },
      { kind: 'latency', metric: 'e2e', stat: 'p50', op: '<', ms: 120_000, text: 'latency.p50<2m' },
      { kind: 'rate', metric: 'rps', op: '>=', value: 10, text: 'rps>=10' },
      { kind: 'latency', metric: 'tpot', stat: 'max', op: '<', ms: 50, text: 'tpot<50' },
    ]);
    expect(e.saturation).toBe(false);
  });

  it('accepts saturation only in --stop-on', () => {
    expect(parseExpr('errors>5%,saturation', '--stop-on').saturation).toBe(true);
    const e = usage(() => parseExpr('saturation', '--slo'));
    expect(e.message).toMatch(/^--slo: "saturation" is only a --stop-on condition/);
    expect(e.field).toBe('--slo');
  });

  it.each([
    ['', /is empty/],
    ['ttft.p95<800ms,', /empty term/],
    ['ttft.p42<1s', /unknown statistic "p42"/],
    ['speed<1s', /unknown metric "speed"/],
    ['errors<1', /needs a percentage/],
    ['errors<101%', /above 100%/],
    ['ttft.p95<fast', /needs a duration/],
    ['ttft.p95=1s', /is not <metric>/],
    ['rps.p50>1', /takes no statistic/],
  ])('rejects %j naming the flag and the rule', (text, rule) => {
    const e = usage(() => parseExpr(text, '--slo'));
    expect(e.message.startsWith('--slo: ')).toBe(true);
    expect(e.message).toMatch(rule);
  });

  it('compares with each operator', () => {
    expect(holds(1, '<', 2)).toBe(true);
    expect(holds(2, '<', 2)).toBe(false);
    expect(holds(2, '<=', 2)).toBe(true);
    expect(holds(3, '>', 2)).toBe(true);
    expect(holds(2, '>=', 2)).toBe(true);
    expect(holds(1, '>=', 2)).toBe(false);
  });

  it('goodput thresholds are the upper-bound latency terms', () => {
    const terms = perRequestTerms(parseExpr('ttft.p95<800ms,errors<1%,e2e.p50>1ms,tpot<=20ms'));
    expect(terms.map((t) => t.text)).toEqual(['ttft.p95<800ms', 'tpot<=20ms']);
  });
});
