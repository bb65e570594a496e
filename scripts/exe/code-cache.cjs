// Run by the Node that dist/exe/gw embeds (the cache is valid only for that V8): compiles the program as
// load-program.cjs will, runs its top level (the modules every command loads) and writes V8's code cache for it.
//
//   node scripts/exe/code-cache.cjs <program.js> <program.cache>
'use strict';
/* global process */
const { readFileSync, writeFileSync } = require('node:fs');
const { Script } = require('node:vm');

const [file, cache] = process.argv.slice(2);
const script = new Script(readFileSync(file, 'utf8'), { filename: 'gw-program.js' });
const program = { exports: {} };
script.runInThisContext()(require, program, program.exports);
writeFileSync(cache, script.createCachedData());
