import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { GW_BIN, isolatedDirs } from '../helpers/gw.js';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

// The launcher sets no V8 flag at run time (docs/performance.md: on Node 22 and 24 any flag changed after start
// cost ~25 ms per command; on Node 20, where --liftoff-only saved ~50 ms, Node itself is past its end of life).
describe("V8 flags and undici's WebAssembly HTTP parser", () => {
  /** Runs the real bin/gw with extra Node options; stdout and stderr. */
  async function runNode(
    nodeArgs: string[],
    argv: string[],
    env: Record<string, string>,
  ): Promise<{ stdout: string; stderr: string }> {
    // Asynchronous: the simulator answers from this process's event loop.
    return promisify(execFile)(process.execPath, [...nodeArgs, GW_BIN, ...argv], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { ...process.env, NO_COLOR: '1', ...isolatedDirs(), ...env },
    });
  }

  /** The compilers V8 used for WebAssembly in a real run (V8's own trace, default tiering). */
  async function compilers(argv: string[], env: Record<string, string>): Promise<string[]> {
    const { stdout } = await runNode(['--trace-wasm-compilation-times'], argv, env);
    return [...stdout.matchAll(/^Compiled function .* using (\w+)/gm)].map((m) => m[1] as string);
  }
  // TurboFan on Node 20; newer V8 may name its optimising tier otherwise: anything but Liftoff counts.
  const optimised = (used: string[]): string[] => used.filter((c) => !/^liftoff$/i.test(c));

  it('gw models --json changes no V8 flag while it runs', async () => {
    const sim = await useSim();
    // A preload that reports every v8.setFlagsFromString call on stderr (the builtin's exports are shared).
    const spy = join(tempDir('gw-v8-spy-'), 'spy.cjs');
    writeFileSync(
      spy,
      "const v8 = require('node:v8'); const set = v8.setFlagsFromString;\n" +
        "v8.setFlagsFromString = (f) => { process.stderr.write('setFlagsFromString(' + f + ')\\n'); set(f); };\n",
    );
    const { stdout, stderr } = await runNode(['--require', spy], ['models', '--json'], sim.env);
    expect(JSON.parse(stdout)).toMatchObject({ data: expect.any(Array) as unknown[] });
    expect(stderr).not.toMatch(/setFlagsFromString/);
  });

  // The premise of setting no flag: from Node 22, V8 does not optimise anything for one request, so a short
  // command ends without waiting for an optimising compile. Node 20's V8 does (the cost in docs/performance.md).
  it.skipIf(Number(process.versions.node.split('.')[0]) < 22)(
    'a short command ends without an optimising compile (Node 22 and later)',
    async () => {
      const sim = await useSim();
      const used = await compilers(['models', '--json'], sim.env);
      expect(used).toContain('Liftoff');
      expect(optimised(used)).toEqual([]);
    },
  );

  it('gw load tiers the parser up', async () => {
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
