#!/usr/bin/env node
// Tiny launcher: the real program lives in dist/ (built by `npm run build`, run on install by `prepare`).
import { main } from '../dist/cli.js';

process.exitCode = await main(process.argv.slice(2));
