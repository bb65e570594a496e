import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { WASM_TIER_FLAGS } from '../../../src/core/wasm-tier.js';

// A WebAssembly function with a hot loop: (func (param i32) (result i32) (local i32) sums param..1).
const MODULE = [
  0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 27, 1, 25,
  1, 1, 127, 3, 64, 32, 1, 32, 0, 106, 33, 1, 32, 0, 65, 1, 107, 34, 0, 13, 0, 11, 32, 1, 11,
];

/**
 * Runs the hot function in a Node started as the launcher leaves V8 (`--liftoff-only`), after setting `flags` at
 * run time, and says which compilers V8 used (flags are process-wide, so this needs a process of its own). V8
 * finishes a started tier-up job before the process exits, so the answer does not depend on timing.
 */
function compilers(flags: readonly string[]): string[] {
  const script = `
    const v8 = require('node:v8');
    for (const f of ${JSON.stringify(flags)}) v8.setFlagsFromString(f);
    const m = new WebAssembly.Module(new Uint8Array(${JSON.stringify(MODULE)}));
    const f = new WebAssembly.Instance(m).exports.f;
    let s = 0;
    for (let k = 0; k < 10; k++) s += f(100000);
    if (s === 0) process.exitCode = 3;`;
  const r = spawnSync(process.execPath, ['--liftoff-only', '--trace-wasm-compilation-times', '-e', script], {
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  return [...r.stdout.matchAll(/using (\w+)/g)].map((m) => m[1] as string);
}

describe('optimiseWasm flags', () => {
  // The optimising tier is TurboFan on Node 20; newer V8 may name it Turboshaft: anything but Liftoff counts.
  it('let a hot function tier up to optimised code after the launcher set --liftoff-only', () => {
    expect(compilers(WASM_TIER_FLAGS).filter((c) => !/^liftoff$/i.test(c))).not.toEqual([]);
  });

  it('are what changes it: without them the function stays on Liftoff', () => {
    const used = compilers([]);
    expect(used).toContain('Liftoff');
    expect(used.filter((c) => !/^liftoff$/i.test(c))).toEqual([]);
  });
});
