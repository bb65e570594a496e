import { execFileSync } from 'node:child_process';

/** e2e tests spawn the real bin/gw, which runs dist/: build it once per test run so it matches src/. */
export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
