#!/usr/bin/env node
// Tiny launcher: the real program lives in dist/ (built by `npm run build`, run on install by `prepare`).
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// undici parses HTTP with llhttp compiled to WebAssembly. V8 tiers that module up with TurboFan on background
// threads and, at exit, waits for those jobs: ~100 ms added to every command that made a request (measured on
// Node 20). Baseline (Liftoff) code is plenty fast for parsing HTTP, so skip the tier-up.
setFlagsFromString('--liftoff-only');

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  // The one answer that needs no program: print it without loading dist/ (start-up budget, issue 9).
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${version}\n`);
} else {
  const { main } = await import('../dist/cli.js');
  process.exitCode = await main(argv);
}
