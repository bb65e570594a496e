// gw as a user gets it, from `npm pack`: the tarball installed by each route the README shows (npm install -g of the
// tarball and of a built clone, npx of the tarball: each in a temporary prefix and cache, --offline), and as a
// library: the tarball unpacked into a temporary project's node_modules (its peer dependencies linked from this
// repository's, no network), then a small consumer type-checked with the repo's TypeScript under moduleResolution
// NodeNext and Bundler, and run against gw sim.
import { builtinModules } from 'node:module';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useSim } from '../helpers/sim.js';
import { tempDir } from '../helpers/tmp.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const CONSUMER = `import {
  GatewayClient,
  GatewayError,
  NotFoundError,
  compareReports,
  models,
  runBatch,
  runLoad,
  runProbe,
  selectChecks,
  exitCodeOf,
  schemas,
  type BatchRunDoc,
  type ProbeReport,
  type RunReport,
  type SseEvent,
  type TypedStream,
} from 'gw';
import * as everything from 'gw';
import { ZodError } from 'zod';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const client = new GatewayClient({ baseUrl: process.env.GW_BASE_URL ?? '', token: process.env.GW_TOKEN });
const list = await models.list(client);
const ids: string[] = list.data.data.map((m) => m.id);
let missing: string | undefined;
try {
  await client.request({ method: 'GET', path: '/v1/no-such-route' });
} catch (e) {
  if (e instanceof NotFoundError && e instanceof GatewayError) missing = \`\${e.status}\`;
}
const ev: SseEvent = { event: undefined, data: '{}', id: undefined };
const stream: TypedStream<unknown> | undefined = undefined;
const parsed = schemas.text.chatMessageSchema.safeParse({ role: 'user', content: 'hi' });
// gw's schemas are built with the consumer's zod (a peer dependency), so its errors are the consumer's ZodError.
const refused = schemas.text.chatMessageSchema.safeParse({ role: 5 });
const report: RunReport = await runLoad({ client, plan: { model: 'chat-3.7-plus', concurrency: 2, requests: 4, maxTokens: 4 } });
const same = compareReports(report, report, 0.1).pass;
// Inside the consumer's project (cwd), which the test removes.
const dir = mkdtempSync(join(process.cwd(), 'batch-'));
const input = join(dir, 'jobs.jsonl');
writeFileSync(input, JSON.stringify({ custom_id: 'q1', url: '/v1/chat/completions', body: { model: 'chat-3.7-plus', messages: [{ role: 'user', content: 'hi' }] } }) + '\\n');
const batch: BatchRunDoc = await runBatch({ input, out: join(dir, 'out'), client });
const probe: ProbeReport = await runProbe({ client, selection: selectChecks({ extended: false, only: ['models', 'chat'], skip: [] }) });
await client.close();
console.log(JSON.stringify({ models: ids.length, missing, ev: ev.data, stream: stream === undefined, parsed: parsed.success, zodError: refused.error instanceof ZodError, cli: 'main' in everything, load: report.steps[0]?.ok, same, batch: batch.succeeded, probe: [probe.summary.passed, exitCodeOf(probe)] }));
`;

function tsconfig(moduleResolution: 'NodeNext' | 'Bundler'): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: moduleResolution === 'NodeNext' ? 'NodeNext' : 'ESNext',
      moduleResolution,
      strict: true,
      types: ['node'],
      // NodeNext checks every declaration the package ships (and its dependencies'); Bundler checks how the
      // consumer resolves and uses them, which is what differs between the two.
      skipLibCheck: moduleResolution === 'Bundler',
      outDir: 'out',
      ...(moduleResolution === 'Bundler' ? { noEmit: true } : {}),
    },
    files: ['index.ts'],
  });
}

/** True when dist/types/index.d.ts is newer than every file under src/ (and the build's tsconfig). */
function declarationsFresh(): boolean {
  const entry = join(ROOT, 'dist', 'types', 'index.d.ts');
  if (!existsSync(entry)) return false;
  const built = statSync(entry).mtimeMs;
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const p = join(dir, e.name);
      return Math.max(m, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
    }, 0);
  return built > Math.max(newest(join(ROOT, 'src')), statSync(join(ROOT, 'tsconfig.build.json')).mtimeMs);
}

/** A package name from an import specifier (`zod/v4` → zod, `@types/node/fs` → @types/node). */
const packageOf = (spec: string): string =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)["']([\w@.][\w@./-]*)["']/g;

/**
 * The packages (not Node's built-ins) that the JavaScript reachable from `entries` imports by name: relative
 * imports, static or dynamic, are followed, so chunks an older build left in dist/ do not count.
 */
function packagesImported(dir: string, entries: string[]): Set<string> {
  const names = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    // A name in a bundled library's comment or string may look like an import of a file that is not there.
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    for (const [, spec = ''] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      if (spec.startsWith('.')) {
        visit(resolve(file, '..', spec));
      } else if (!spec.startsWith('node:') && !builtinModules.includes(packageOf(spec)))
        names.add(packageOf(spec));
    }
  };
  for (const e of entries) visit(join(dir, e));
  return names;
}

/** The packages the declarations under `dir` name. */
function packagesTyped(dir: string): Set<string> {
  const names = new Set<string>();
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.d.ts')) continue;
    for (const [, spec = ''] of readFileSync(join(dir, f), 'utf8').matchAll(SPECIFIER)) {
      if (!spec.startsWith('.') && !spec.startsWith('node:')) names.add(packageOf(spec));
    }
  }
  return names;
}

let project = '';
let packDir = '';
let tarball = '';

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

beforeAll(() => {
  // The declarations are part of the package (`npm run build` emits them); the test suite's build does not, so
  // they are emitted here unless they are newer than every source file (CI runs `npm run build` first).
  if (!declarationsFresh()) execFileSync(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT });
  packDir = mkdtempSync(join(tmpdir(), 'gw-pack-'));
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'silent' },
  });
  const [packed] = JSON.parse(out.slice(out.indexOf('['))) as { filename: string }[];
  if (packed === undefined) throw new Error(`npm pack printed no file: ${out}`);
  const { filename } = packed;
  tarball = join(packDir, filename);
  project = mkdtempSync(join(tmpdir(), 'gw-consumer-'));
  const pkgDir = join(project, 'node_modules', 'gw');
  mkdirSync(pkgDir, { recursive: true });
  execFileSync('tar', ['-xzf', join(packDir, filename), '-C', pkgDir, '--strip-components=1']);
  // What a library user installs beside gw: its peer dependencies (and @types/node for the type-check), linked
  // from this repository's.
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  for (const dep of [...Object.keys(pkg.peerDependencies ?? {}), '@types/node']) {
    const target = join(project, 'node_modules', dep);
    mkdirSync(resolve(target, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', dep), target, 'dir');
  }
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  writeFileSync(join(project, 'index.ts'), CONSUMER);
}, 300_000);

afterAll(() => {
  for (const d of [project, packDir]) if (d !== '') rmSync(d, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships declarations and no source: dist/types, not src/', () => {
    const files = readdirSync(join(project, 'node_modules', 'gw', 'dist', 'types'));
    expect(files).toContain('index.d.ts');
    expect(readdirSync(join(project, 'node_modules', 'gw'))).not.toContain('src');
  });

  it('lists no runtime dependency: the CLI bundles its own, the library imports only optional peers', () => {
    const dir = join(project, 'node_modules', 'gw');
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.dependencies ?? {}).toEqual({});
    const peers = Object.keys(manifest.peerDependencies ?? {}).sort();
    // Optional: `npm install -g` of gw installs nothing but gw; a library user installs them (npm 7+ would
    // otherwise add them to every install).
    for (const p of peers) expect(manifest.peerDependenciesMeta?.[p]?.optional, p).toBe(true);
    expect([...packagesImported(join(dir, 'dist'), ['cli.js'])]).toEqual([]);
    // The library's code and its declarations name the same packages, and those are the peers: a consumer's zod
    // is the zod gw's schemas use.
    expect([...packagesImported(join(dir, 'dist'), ['index.js'])].sort()).toEqual(peers);
    expect([...packagesTyped(join(dir, 'dist', 'types'))].sort()).toEqual(peers);
    // The single executable (`npm run build:exe`) is not part of the package.
    expect(existsSync(join(dir, 'dist', 'exe'))).toBe(false);
  });

  it('type-checks a consumer under moduleResolution Bundler', () => {
    writeFileSync(join(project, 'tsconfig.json'), tsconfig('Bundler'));
    execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
  }, 300_000);

  it('type-checks and runs a consumer under moduleResolution NodeNext, without the CLI in the entry', async () => {
    writeFileSync(join(project, 'tsconfig.json'), tsconfig('NodeNext'));
    execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
    const sim = await useSim();
    // Asynchronously: the simulator answers from this process.
    const { stdout: out } = await promisify(execFile)(process.execPath, [join(project, 'out', 'index.js')], {
      cwd: project,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...sim.env },
    });
    expect(JSON.parse(out)).toEqual({
      models: expect.any(Number) as number,
      missing: '404',
      ev: '{}',
      stream: true,
      parsed: true,
      zodError: true,
      probe: [2, 0],
      cli: false,
      load: 4,
      same: true,
      batch: 1,
    });
  }, 300_000);
});

/** npm with a private cache, offline: each route needs nothing from a registry (gw has no runtime dependency). */
async function npm(args: string[], cwd: string, cache: string): Promise<{ stdout: string; stderr: string }> {
  // Settings npm passes to the scripts it runs (`npm test`) must not steer this npm.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return promisify(execFile)(
    'npm',
    ['--offline', '--cache', cache, '--no-audit', '--no-fund', '--no-update-notifier', ...args],
    { cwd, encoding: 'utf8', env: { ...env, npm_config_loglevel: 'warn' } },
  );
}

/** `gw --version` and `gw models --json` against gw sim, run as `cmd ...prefix`; the number of models listed. */
async function runInstalled(cmd: string, prefix: string[], cwd: string): Promise<number> {
  const sim = await useSim();
  // npx enables Node's compile cache (Node >= 22), by default in the system's temp dir: keep it in cwd.
  const cache = { NODE_COMPILE_CACHE: join(cwd, '.node-compile-cache') };
  const env = {
    PATH: process.env.PATH,
    HOME: cwd,
    GW_CONFIG_DIR: cwd,
    GW_STATE_DIR: cwd,
    ...cache,
    ...sim.env,
  };
  const run = promisify(execFile);
  const version = await run(cmd, [...prefix, '--version'], { cwd, encoding: 'utf8', env });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  expect(version.stdout).toBe(`${pkg.version}\n`);
  const models = await run(cmd, [...prefix, 'models', '--json'], { cwd, encoding: 'utf8', env });
  return (JSON.parse(models.stdout) as { data: unknown[] }).data.length;
}

// The routes of docs/install.md, on this machine's npm. No route prints npm's `install-scripts … not covered by
// allowScripts` advisory: gw has no install script of its own (a clone builds with `npm run build`).
describe('installing by each route the README shows', () => {
  /** `npm install -g <spec>` into a temporary prefix; the installed gw must work. */
  async function installGlobally(spec: string): Promise<void> {
    const dir = tempDir('gw-route-');
    const r = await npm(['install', '-g', '--prefix', join(dir, 'prefix'), spec], dir, join(dir, 'cache'));
    expect(r.stderr).not.toMatch(/install-scripts|allowScripts/);
    expect(await runInstalled(join(dir, 'prefix', 'bin', 'gw'), [], dir)).toBeGreaterThan(0);
  }

  it('npm install -g ./gw-<version>.tgz', () => installGlobally(tarball), 300_000);

  it("npx ./gw-<version>.tgz, in the tarball's directory", async () => {
    const dir = tempDir('gw-route-npx-');
    const cache = join(dir, 'cache');
    // `./` makes it a package to npx; a bare absolute path would be a command to run.
    const local = `./${basename(tarball)}`;
    copyFileSync(tarball, join(dir, local));
    const r = await npm(['exec', '--yes', '--', local, '--help'], dir, cache);
    expect(r.stdout).toMatch(/^Usage: gw/);
    expect(r.stderr).not.toMatch(/install-scripts|allowScripts/);
    const npx = ['exec', '--yes', '--offline', '--cache', cache, '--', local];
    expect(await runInstalled('npm', npx, dir)).toBeGreaterThan(0);
  }, 300_000);

  it('npm install -g . in a built clone', () => installGlobally(ROOT), 300_000);
});
