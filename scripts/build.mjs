// Bundles src/ into dist/ with esbuild. Code splitting keeps `gw --help` cheap: heavy modules
// (undici, ora, @inquirer/prompts, cli-table3, the simulator) are reached only through dynamic imports.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { cli: 'src/cli.ts', index: 'src/index.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  sourcemap: true,
  packages: 'bundle',
  logLevel: 'warning',
  // Some CommonJS dependencies call require() on Node built-ins; give the ESM bundle a require.
  banner: {
    js: "import { createRequire as __gwCreateRequire } from 'node:module'; const require = __gwCreateRequire(import.meta.url);",
  },
  chunkNames: 'chunks/[name]-[hash]',
});
