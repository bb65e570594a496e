/**
 * A watch (`gw probe --every`) leaves the garbage collector to V8: it changes no V8 flag at run time (Node
 * documents that as unpredictable) and forces no collection. Its memory stays flat without either
 * (bench/probe-soak.mjs: the resident set after 1 000 runs).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const v8 = vi.hoisted(() => ({ setFlagsFromString: vi.fn() }));
vi.mock('node:v8', async (importOriginal) => ({ ...(await importOriginal<object>()), ...v8 }));

afterEach(() => v8.setFlagsFromString.mockClear());

describe('gw probe --every and V8', () => {
  it('runs a watch without setting a V8 flag', async () => {
    const { watch } = await import('../../../src/probe/watch.js');
    const ac = new AbortController();
    let runs = 0;
    const report = {
      gateway: 'http://127.0.0.1:1',
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:00.000Z',
      durationMs: 0,
      checks: [],
      summary: { passed: 0, failed: 0, warned: 0, skipped: 0 },
    };
    const n = await watch({
      intervalMs: 1,
      signal: ac.signal,
      runOnce: () => Promise.resolve(report),
      afterRun: () => {
        if (++runs === 3) ac.abort();
      },
      warn: () => {},
    });
    expect(n).toBe(3);
    expect(v8.setFlagsFromString).not.toHaveBeenCalled();
  });
});
