// In dist/exe/gw, what bin/gw.js gets for `import('../dist/cli.js')`: the program, an asset of the executable
// compiled on first use with the V8 code cache the build made for it (scripts/exe/code-cache.cjs). Kept out of
// the executable's main script, `gw --version` and `gw --help` start as fast as Node itself.
'use strict';
/* global Buffer */
const { getAsset } = require('node:sea');
const { Script } = require('node:vm');

const script = new Script(getAsset('program.js', 'utf8'), {
  filename: 'gw-program.js',
  cachedData: Buffer.from(getAsset('program.cache')),
});
const program = { exports: {} };
// The program is a CommonJS bundle that requires only Node's built-in modules: the executable's require serves them.
script.runInThisContext()(require, program, program.exports);
module.exports = program.exports;
