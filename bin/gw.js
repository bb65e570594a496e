#!/usr/bin/env node
// Tiny launcher: the real program lives in dist/ (built by `npm run build`, run on install by `prepare`).
import { setFlagsFromString } from 'node:v8';

// undici parses HTTP with llhttp compiled to WebAssembly. V8 tiers that module up with TurboFan on background
// threads and, at exit, waits for those jobs: ~100 ms added to every command that made a request (measured on
// Node 20). Baseline (Liftoff) code is plenty fast for parsing HTTP, so skip the tier-up.
setFlagsFromString('--liftoff-only');

const { main } = await import('../dist/cli.js');
process.exitCode = await main(process.argv.slice(2));
