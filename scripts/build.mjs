// Bundles src/ into dist/ with esbuild. Code splitting keeps `gw --help` cheap: heavy modules
// (undici, zod, ora, @inquirer/prompts, cli-table3, conf, the simulator) are reached only through dynamic imports.
//
// Publishing is atomic per file and never removes what a running gw may still import: chunks (content-hashed
// names) are written first, the entry files last, each through a temporary file and a rename. Several builds
// may run at once (parallel test runs) without a reader ever seeing a missing or half-written module.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--pack`, or any build npm runs for `npm pack`/`npm publish` (prepack and prepare both run then): no source maps,
// no build metadata, and only this build's chunks in dist/.
const pack = process.argv.includes('--pack') || ['pack', 'publish'].includes(process.env.npm_command ?? '');
const outdir = join(root, 'dist');

// commander loads child_process (~2 ms) at start-up for executable subcommands, which gw never uses: hand it a
// proxy that loads the real module on first use.
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)
        ? { path: 'child_process', namespace: 'gw-lazy' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'gw-lazy' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });",
      loader: 'js',
    }));
  },
};

// undici's HTTP/2 client (never used by gw: undici 7 speaks HTTP/1.1 unless allowH2 is set) loads node:http2, and
// with it tls, at start-up only to read ten protocol constants: ~10 ms of every command that makes a request. Hand
// it those constants (RFC 9113 pseudo-header names and error codes) and load the real module on any other use.
const lazyHttp2 = {
  name: 'lazy-http2',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http2$/ }, (args) =>
      /[\\/]node_modules[\\/]undici[\\/]/.test(args.importer)
        ? { path: 'http2', namespace: 'gw-lazy-http2' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'gw-lazy-http2' }, () => ({
      contents: `const constants = {
  HTTP2_HEADER_AUTHORITY: ':authority',
  HTTP2_HEADER_METHOD: ':method',
  HTTP2_HEADER_PATH: ':path',
  HTTP2_HEADER_SCHEME: ':scheme',
  HTTP2_HEADER_CONTENT_LENGTH: 'content-length',
  HTTP2_HEADER_EXPECT: 'expect',
  HTTP2_HEADER_STATUS: ':status',
  HTTP2_HEADER_PROTOCOL: ':protocol',
  NGHTTP2_REFUSED_STREAM: 7,
  NGHTTP2_CANCEL: 8,
};
module.exports = new Proxy({}, {
  get: (_, key) => (key === 'constants' ? constants : require('node:http2')[key]),
});`,
      loader: 'js',
    }));
  },
};

const result = await build({
  plugins: [lazyChildProcess, lazyHttp2],
  absWorkingDir: root,
  entryPoints: { cli: 'src/cli.ts', index: 'src/index.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  sourcemap: !pack,
  packages: 'bundle',
  logLevel: 'warning',
  write: false,
  metafile: true,
  // Some CommonJS dependencies call require() on Node built-ins; give the ESM bundle a require.
  banner: {
    js: "import { createRequire as __gwCreateRequire } from 'node:module'; const require = __gwCreateRequire(import.meta.url);",
  },
  chunkNames: 'chunks/[name]-[hash]',
});

const isEntry = (p) => !relative(outdir, p).startsWith('chunks');
const files = [...result.outputFiles].sort((a, b) => Number(isEntry(a.path)) - Number(isEntry(b.path)));
for (const f of files) {
  mkdirSync(dirname(f.path), { recursive: true });
  const tmp = `${f.path}.${process.pid}.tmp`;
  writeFileSync(tmp, f.contents);
  renameSync(tmp, f.path);
}
if (pack) {
  for (const name of readdirSync(outdir)) {
    if (name.endsWith('.map') || name === 'meta.json') rmSync(join(outdir, name), { force: true });
  }
} else writeFileSync(join(outdir, 'meta.json'), JSON.stringify(result.metafile));

// The root help page as the program prints it when stdout is not a terminal (80 columns). bin/gw.js serves
// `gw --help` from it without loading the program (start-up budget, issue 9); a terminal gets the live page.
const help = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    "import { main } from './dist/cli.js'; process.exitCode = await main(['--help']);",
  ],
  { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
);
if (help.status !== 0 || !help.stdout.startsWith('Usage: gw')) throw new Error(`help page: ${help.stderr}`);
const helpTmp = join(outdir, `help.txt.${process.pid}.tmp`);
writeFileSync(helpTmp, help.stdout);
renameSync(helpTmp, join(outdir, 'help.txt'));

// Drop chunks that no build has written for an hour (old builds' leftovers).
const written = new Set(files.map((f) => f.path));
const chunks = join(outdir, 'chunks');
for (const name of readdirSync(chunks)) {
  const p = join(chunks, name);
  if (!written.has(p) && (pack || Date.now() - statSync(p).mtimeMs > 3_600_000)) rmSync(p, { force: true });
}
