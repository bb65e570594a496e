#!/usr/bin/env node
// Tiny launcher: the real program lives in dist/ (built by `npm run build`; bundled with it into dist/exe/gw).
// It is CommonJS (bin/package.json): an ES module entry costs Node ~10 ms of loader start-up before the first
// line runs, a third of `node -e 0`. The program itself is ESM and loaded with import().
'use strict';
/* global require, __dirname */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const argv = process.argv.slice(2);

// `gw --help | head`, `gw completion bash | head -1`: once the reader is gone there is nowhere to print; stop
// quietly as Unix tools do (exit status of the pipe's writer), never with an unhandled 'error' event.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e && (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED')) process.exit(process.exitCode ?? 0);
    throw e;
  });
}
const only = argv.length === 1 ? argv[0] : undefined;

/** A file of the package, or undefined when it is missing. */
function read(path) {
  try {
    // In the single executable (scripts/build-exe.mjs) the package's files are assets of the executable.
    const sea = require('node:sea');
    return sea.isSea() ? sea.getAsset(path, 'utf8') : readFileSync(join(__dirname, '..', path), 'utf8');
  } catch {
    return undefined;
  }
}

// Answers that need no program are printed without loading dist/ (start-up budget, issue 9): the version, and
// the root help page the build saved (exactly what the program prints when stdout is not a terminal).
const help =
  (only === '--help' || only === '-h') && process.stdout.isTTY !== true ? read('dist/help.txt') : undefined;
if (only === '--version' || only === '-V') {
  process.stdout.write(`${JSON.parse(read('package.json') ?? '{}').version}\n`);
} else if (help !== undefined) {
  process.stdout.write(help);
} else {
  import('../dist/cli.js').then(
    async ({ main }) => {
      // No V8 flag is set at run time: V8 keys its code caches by its flags, so any flag changed after start
      // costs ~25 ms per command on Node 22 and 24 (docs/performance.md has the measurements).
      const code = await main(argv);
      process.exitCode = code;
      // Interrupted (Ctrl-C, SIGTERM): the error and resume command are printed. Work abandoned in the thread
      // pool (a read of a pipe that never sends) must not keep the process alive: leave shortly if it would.
      if (code === 130 || code === 143) setTimeout(() => process.exit(code), 200).unref();
    },
    (e) => {
      process.stderr.write(`error: internal: cannot load gw (${e.message}); run \`npm run build\`\n`);
      process.exitCode = 1;
    },
  );
}
