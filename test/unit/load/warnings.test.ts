import { describe, expect, it } from 'vitest';
import { behindWarning } from '../../../src/load/run.js';
import type { StepReport } from '../../../src/load/schema.js';

const step = {
  label: 'rate=6000/s',
  requests: 18119,
  schedule: { late: 13260, late_share: 0.73, lag_p99_ms: 2000, lag_max_ms: 2394.111, behind: true },
} as unknown as StepReport;

describe('gw load: the warning of a step whose client fell behind its schedule', () => {
  it('says how late, and how many connections the open loop had open', () => {
    expect(behindWarning(step, 4096, 0)).toBe(
      'rate=6000/s: the client fell behind its schedule (13260 of 18119 starts more than 10ms late, max 2394.111ms; ' +
        '4096 connections open at its end); latencies are still measured from the scheduled starts; ' +
        '--warmup <n> opens the connections before measuring, --connections <n> caps them',
    );
  });

  it('does not suggest --warmup when the run had one', () => {
    const w = behindWarning(step, 4096, 20000);
    expect(w).toContain('4096 connections open at its end');
    expect(w).not.toContain('--warmup');
    expect(w).toMatch(/; --connections <n> caps them$/);
  });

  it('names no connections when it does not know them', () => {
    const w = behindWarning(step, undefined, 0);
    expect(w).not.toContain('connections');
    expect(w).toMatch(/latencies are still measured from the scheduled starts$/);
  });
});
