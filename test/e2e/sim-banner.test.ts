/**
 * `gw sim`'s banner can be pasted whatever GW_TOKEN holds: gw masks the token of GW_TOKEN in every line it prints,
 * and the batch and load examples (docs/batch.md, docs/load.md) leave GW_TOKEN set to the simulator's own token,
 * so a `try:` line naming that token would print as `GW_TOKEN=sk-…0000`.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { GW_BIN, isolatedDirs, runBash } from '../helpers/gw.js';

/** Starts the real `gw sim --port 0` with GW_TOKEN set (or not); resolves with its banner once it is ready. */
async function startWith(
  gwToken: string | undefined,
): Promise<{ banner: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [GW_BIN, 'sim', '--port', '0'], {
    env: {
      PATH: process.env.PATH,
      NO_COLOR: '1',
      ...isolatedDirs(),
      ...(gwToken ? { GW_TOKEN: gwToken } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  let out = '';
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (/^ready$/m.test(out)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`gw sim exited ${code}: ${out}`)));
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { banner: out, stop };
}

/** The command of the banner's `try:` line. */
function tryLine(banner: string): string {
  const m = /^try: (.*)$/m.exec(banner);
  if (m?.[1] === undefined) throw new Error(`no try: line in\n${banner}`);
  return m[1];
}

describe('gw sim banner', () => {
  it.each([
    ['unset', undefined, true],
    ["the simulator's own token", DEFAULT_SIM_TOKEN, true],
    ["another gateway's token", 'sk-live-0123456789abcdef', true],
    ["a piece of the simulator's token", 'sim-local-0000', false],
  ])(
    'GW_TOKEN %s: the try: line is whole and runs as pasted',
    async (_what, gwToken, works) => {
      const sim = await startWith(gwToken);
      try {
        const line = tryLine(sim.banner);
        // Nothing of it was masked: no `…` anywhere, the base URL whole.
        expect(sim.banner).not.toContain('…');
        expect(line).toMatch(/^GW_BASE_URL=http:\/\/127\.0\.0\.1:\d+ /);
        const r = await runBash(line, {
          env: { ...isolatedDirs(), ...(gwToken ? { GW_TOKEN: gwToken } : {}) },
        });
        if (works) {
          expect(r.exitCode, r.stderr).toBe(0);
          expect(r.stdout).toMatch(/^clip-1\.1-t2v\t/m);
        } else {
          // The comment says what to do; the command itself still parses and runs (the token is refused).
          expect(line).toMatch(/# set GW_TOKEN to the simulator's token first/);
          expect(r.exitCode, r.stderr).toBe(3);
        }
      } finally {
        await sim.stop();
      }
    },
    30_000,
  );
});
