import { describe, expect, it } from 'vitest';
import { behindWarning } from '../../../src/load/run.js';
import type { StepReport } from '../../../src/load/schema.js';

const step = {
  label: 'rate=6000/s',
  requests: 18119,
  schedule: {
    late: 13260,
    late_share: 0.73,
    lag_p99_ms: 2000,
    lag_max_ms: 2394.111,
    behind: true,
    dropped: 0,
  },
} as unknown as StepReport;

describe('gw load: the warning of a step whose client fell behind its schedule', () => {
  it('says how late, and how many requests (a connection each) the open loop had in flight', () => {
    expect(behindWarning(step, 4096, 0)).toBe(
      'rate=6000/s: the client fell behind its schedule (13260 of 18119 starts more than 10ms late, max 2394.111ms; ' +
        'up to 4096 requests in flight, a connection each); latencies are still measured from the scheduled starts; ' +
        '--warmup <n> opens the connections before measuring, --connections <n> caps them',
    );
  });

  it('does not suggest --warmup when the run had one', () => {
    const w = behindWarning(step, 4096, 20000);
    expect(w).toContain('up to 4096 requests in flight');
    expect(w).not.toContain('--warmup');
    expect(w).toMatch(/; --connections <n> caps them$/);
  });

  it('counts the arrivals never sent', () => {
    const dropped = { ...step, schedule: { ...step.schedule, dropped: 5 } };
    expect(behindWarning(dropped, 64, 0)).toContain(
      'max 2394.111ms, 5 arrivals never sent (dropped or still waiting)',
    );
  });

  it('names no connections when it does not know them', () => {
    const w = behindWarning(step, undefined, 0);
    expect(w).not.toContain('connection');
    expect(w).toMatch(/latencies are still measured from the scheduled starts$/);
  });
});
