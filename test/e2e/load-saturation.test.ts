import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/load/schema.js';
import type { SimCapacity } from '../../src/sim/config.js';
import { runGw } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';

const ARGS = ['load', '-m', 'chat-3.7-plus', '--json', '--concurrency', '4', '--max-tokens', '4'];

async function run(cap: SimCapacity, args: string[], during?: () => void) {
  const sim = await useSim({ capacity: cap });
  const timer = during !== undefined ? setInterval(during, 100) : undefined;
  try {
    const r = await runGw([...ARGS, ...args], { env: sim.env });
    return { ...r, report: JSON.parse(r.stdout) as RunReport };
  } finally {
    if (timer !== undefined) clearInterval(timer);
  }
}

describe('--stop-on saturation in a single closed-loop run', () => {
  it('ends the run when latency climbs while throughput does not rise', async () => {
    // A gateway that slows down as the run goes on: its time to first token grows by 150 ms per second.
    const cap: SimCapacity = { maxConcurrent: 64, queue: 1000, ttftMs: 20, tokensPerSecond: 5000 };
    const r = await run(cap, ['--duration', '60s', '--stop-on', 'saturation'], () => {
      cap.ttftMs = (cap.ttftMs as number) + 15;
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.report.stopped).toBe('saturation');
    expect(r.report.steps[0]?.duration_s).toBeLessThan(60);
  });

  it('lets a steady run go to its end', async () => {
    const cap: SimCapacity = { maxConcurrent: 64, queue: 1000, ttftMs: 60, tokensPerSecond: 5000 };
    const r = await run(cap, ['--duration', '7s', '--stop-on', 'saturation']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.report.stopped).toBeNull();
    expect(r.report.steps[0]?.ok).toBeGreaterThan(100);
  });
});
