import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { optimisesWasm } from '../../src/cli/main.js';
import { GW_BIN, isolatedDirs } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';

describe("which runs let V8 optimise undici's WebAssembly HTTP parser", () => {
  it('gw load and gw batch do, after any global flags; every other command does not', () => {
    expect(optimisesWasm(['load', '-m', 'chat-3.7-plus'])).toBe(true);
    expect(optimisesWasm(['--profile', 'load', '--timeout', '30s', 'batch', 'run', 'in.jsonl'])).toBe(true);
    expect(optimisesWasm(['--json', 'load'])).toBe(true);
    expect(optimisesWasm(['chat', 'load the page'])).toBe(false);
    expect(optimisesWasm(['--base-url', 'batch', 'models'])).toBe(false);
    expect(optimisesWasm([])).toBe(false);
  });

  /**
   * The compilers V8 used for WebAssembly in a real `bin/gw` run (V8's own trace, default tiering). A tier-up is
   * decided by how much code ran, and V8 finishes a started job before the process exits, so the answer does not
   * depend on timing.
   */
  async function compilers(argv: string[], env: Record<string, string>): Promise<string[]> {
    // Asynchronous: the simulator answers from this process's event loop.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--trace-wasm-compilation-times', GW_BIN, ...argv],
      {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
        env: { ...process.env, NO_COLOR: '1', ...isolatedDirs(), ...env },
      },
    );
    return [...stdout.matchAll(/^Compiled function .* using (\w+)/gm)].map((m) => m[1] as string);
  }
  // TurboFan on Node 20; newer V8 may name its optimising tier otherwise: anything but Liftoff counts.
  const optimised = (used: string[]): string[] => used.filter((c) => !/^liftoff$/i.test(c));

  // Node 20 optimises a hot parser function of `gw models` when left alone (and waits for that job at exit); from
  // Node 24 V8 no longer does for one request, and it ignores --liftoff-only set at run time: either way a short
  // command must end without an optimising compile.
  it('the launcher keeps a short command on Liftoff (real bin/gw against gw sim)', async () => {
    const sim = await useSim();
    const used = await compilers(['models', '--json'], sim.env);
    expect(used).toContain('Liftoff');
    expect(optimised(used)).toEqual([]);
  });

  it('and lets gw load tier the parser up', async () => {
    const sim = await useSim();
    const argv = [
      'load',
      '-m',
      'chat-3.7-plus',
      '--no-stream',
      '--concurrency',
      '4',
      '--requests',
      '1000',
      '--json',
    ];
    expect(optimised(await compilers(argv, sim.env))).not.toEqual([]);
  });
});
