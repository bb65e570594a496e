import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * e2e tests spawn the real bin/gw, which runs dist/: build it once per test run so it matches src/.
 * Every temporary directory of the run (tests, helpers, anything calling os.tmpdir() in the workers) is created
 * under one root, removed when the run ends: a run leaves nothing behind in the system's temp directory, even
 * when a test forgets to clean up or is killed half-way.
 */
export default function setup(): () => void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const root = mkdtempSync(join(tmpdir(), 'gw-vitest-'));
  const previous = process.env.TMPDIR;
  // Workers are forked after global setup and inherit this environment, so their os.tmpdir() is the root.
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    // Every test removes its own directories: name what a test file left behind (the root goes anyway).
    // node-compile-cache: Node's module compile cache, which npm (run by package.test.ts) turns on under Node 22+.
    const left = readdirSync(root).filter((name) => name !== 'node-compile-cache');
    if (left.length > 0) {
      const shown = left.slice(0, 20).join(', ');
      process.stderr.write(`warning: the tests left ${left.length} entries in the temp root: ${shown}\n`);
    }
    rmSync(root, { recursive: true, force: true });
  };
}
