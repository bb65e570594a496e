// Bundles src/ into dist/ with esbuild, in two builds:
// - the CLI (dist/cli.js and dist/chunks/): every dependency bundled, so an install of the package needs none. Code
//   splitting keeps `gw --help` cheap: heavy modules (undici, zod, ora, @inquirer/prompts, cli-table3, the
//   simulator) are reached only through dynamic imports.
// - the library (dist/index.js, one file): its own code bundled, the packages its declarations name (zod, undici:
//   the peer dependencies) left to the consumer's copy, so types and code are the same objects (instanceof works).
//
// Publishing is atomic per file and never removes what a running gw may still import: chunks (content-hashed
// names) are written first, the entry files last, each through a temporary file and a rename. Several builds
// may run at once (parallel test runs) without a reader ever seeing a missing or half-written module.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--pack`, or any build npm runs for `npm pack`/`npm publish` (prepack and prepare both run then): no source maps,
// no build metadata, and only this build's chunks in dist/.
const pack = process.argv.includes('--pack') || ['pack', 'publish'].includes(process.env.npm_command ?? '');
const outdir = join(root, 'dist');

const common = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  sourcemap: !pack,
  logLevel: 'warning',
  write: false,
  metafile: true,
};
const peers = Object.keys(
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).peerDependencies ?? {},
);
const [cli, lib] = await Promise.all([
  build({
    ...common,
    // The OTLP export's worker is an entry of its own (src/core/otlp-thread.ts starts it from dist/).
    entryPoints: { cli: 'src/cli/main.ts', 'otlp-worker': 'src/core/otlp-worker.ts' },
    splitting: true,
    packages: 'bundle',
    // Some CommonJS dependencies call require() on Node built-ins; give the ESM bundle a require.
    banner: {
      js: "import { createRequire as __gwCreateRequire } from 'node:module'; const require = __gwCreateRequire(import.meta.url);",
    },
    chunkNames: 'chunks/[name]-[hash]',
  }),
  build({ ...common, entryPoints: { index: 'src/index.ts' }, external: peers }),
]);

const isEntry = (p) => !relative(outdir, p).startsWith('chunks');
const files = [...cli.outputFiles, ...lib.outputFiles].sort(
  (a, b) => Number(isEntry(a.path)) - Number(isEntry(b.path)),
);
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
  // tsc (run next by the script) never deletes a declaration whose source left the library's import graph (e.g.
  // dist/types/core/errors.d.ts once contract/ stopped importing core/): start the packed types from empty. Only
  // when packing: a development build may run beside another one whose tsc is writing there.
  rmSync(join(outdir, 'types'), { recursive: true, force: true });
} else {
  const meta = {
    inputs: { ...cli.metafile.inputs, ...lib.metafile.inputs },
    outputs: { ...cli.metafile.outputs, ...lib.metafile.outputs },
  };
  writeFileSync(join(outdir, 'meta.json'), JSON.stringify(meta));
}

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
