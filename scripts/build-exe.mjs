// `npm run build:exe`: dist/exe/gw, gw for linux-x64 as one file that runs without Node installed (a Node.js single
// executable application, with the Node of scripts/registry-node.mjs inside). Two esbuild bundles, CommonJS, one
// file each (no code splitting: every dynamic import is inlined):
// - the executable's main script: bin/gw.js, the same launcher as the npm package, whose import of the program is
//   scripts/exe/load-program.cjs;
// - the program (src/cli/main.ts), an asset compiled on first use with a V8 code cache made at build time by the
//   embedded Node, so `gw --version` and `gw --help` do not pay for compiling it (docs/performance.md).
// The version and the root help page are assets too. Prints the SHA-256 and writes it to dist/exe/gw.sha256.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_NODE, registryNode } from './registry-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'exe');
// The bundles, the code cache and the blob's configuration; dist/exe itself holds only gw and gw.sha256.
const work = join(out, 'build');
// Node's documented fuse for the blob's resource (the same in every version that has single executables).
const SENTINEL_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

// `await import('node:fs/promises')` would stay an import() in CommonJS output, which a single executable's main
// script cannot run: make it a require(). Dependencies write built-ins bare too (`import('http')` in OpenTelemetry's
// exporter), so any built-in name counts, prefixed or not.
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^[a-z_:/]+$/ }, (a) =>
      a.kind === 'dynamic-import' && isBuiltin(a.path) ? { path: a.path, namespace: 'builtin' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (a) => ({
      contents: `module.exports = require(${JSON.stringify(a.path)});`,
      loader: 'js',
    }));
  },
};

/** One CommonJS file for Node `nodeVersion`, with no import() left in it. */
async function bundle(entry, file, nodeVersion, plugins = []) {
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: `node${nodeVersion.split('.')[0]}`,
    minify: true,
    logLevel: 'warning',
    metafile: true,
    plugins: [builtinsByRequire, ...plugins],
  });
  const left = Object.values(metafile.outputs).flatMap((o) =>
    o.imports.filter((i) => i.kind === 'dynamic-import'),
  );
  if (left.length > 0)
    throw new Error(`${file} still imports ${left.map((i) => i.path).join(', ')} with import()`);
}

/** The launcher and the program, the program's code cache, and the assets: the files of the blob. */
async function prepare(node, nodeVersion) {
  const main = join(work, 'gw.cjs');
  const loader = join(root, 'scripts', 'exe', 'load-program.cjs');
  const toLoader = {
    name: 'program-as-asset',
    setup(b) {
      b.onResolve({ filter: /^\.\.\/dist\/cli\.js$/ }, () => ({ path: loader }));
    },
  };
  await bundle('bin/gw.js', main, nodeVersion, [toLoader]);
  const cjs = join(work, 'program.cjs');
  await bundle('src/cli/main.ts', cjs, nodeVersion);
  // The wrapper a CommonJS module gets from Node, which load-program.cjs supplies.
  const program = join(work, 'program.js');
  writeFileSync(program, `(function (require, module, exports) {${readFileSync(cjs, 'utf8')}\n})`);
  const cache = join(work, 'program.cache');
  execFileSync(node, [join(root, 'scripts', 'exe', 'code-cache.cjs'), program, cache], { stdio: 'inherit' });
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version }));
  return {
    version: pkg.version,
    config: {
      main,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      // bin/gw.js reads the first two by their paths in the package; load-program.cjs the others.
      assets: {
        'package.json': join(work, 'package.json'),
        'dist/help.txt': join(root, 'dist', 'help.txt'),
        'program.js': program,
        'program.cache': cache,
      },
    },
  };
}

/** Builds `exe` with `node`: in one step where Node has --build-sea, else its blob injected with postject. */
async function makeExecutable(node, config, exe) {
  const configFile = join(work, 'sea-config.json');
  if (execFileSync(node, ['--help'], { encoding: 'utf8' }).includes('--build-sea')) {
    writeFileSync(configFile, JSON.stringify({ ...config, executable: node, output: exe }));
    execFileSync(node, ['--build-sea', configFile], { stdio: ['ignore', 'ignore', 'inherit'] });
    return;
  }
  const blob = join(work, 'gw.blob');
  writeFileSync(configFile, JSON.stringify({ ...config, output: blob }));
  execFileSync(node, ['--experimental-sea-config', configFile], { stdio: ['ignore', 'ignore', 'inherit'] });
  copyFileSync(node, exe);
  // postject's public API; its LIEF core prints harmless "Can't find string offset" notes for Node's ELF sections.
  const { inject } = createRequire(import.meta.url)('postject');
  await inject(exe, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SENTINEL_FUSE });
  rmSync(blob);
}

const started = Date.now();
const node = registryNode(EMBEDDED_NODE);
mkdirSync(work, { recursive: true });
const { version, config } = await prepare(node, EMBEDDED_NODE);
const exe = join(out, 'gw');
const tmp = `${exe}.${process.pid}.tmp`;
try {
  await makeExecutable(node, config, tmp);
  chmodSync(tmp, 0o755);
  renameSync(tmp, exe);
} finally {
  rmSync(tmp, { force: true });
}
const sha = createHash('sha256').update(readFileSync(exe)).digest('hex');
writeFileSync(join(out, 'gw.sha256'), `${sha}  gw\n`);
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
process.stdout.write(
  `dist/exe/gw: gw ${version} for linux-x64 with Node ${EMBEDDED_NODE}, ${mb(statSync(exe).size)} ` +
    `(program ${mb(statSync(join(work, 'program.js')).size)}), built in ${((Date.now() - started) / 1000).toFixed(1)} s\n` +
    `sha256 ${sha}  (also in dist/exe/gw.sha256)\n`,
);
