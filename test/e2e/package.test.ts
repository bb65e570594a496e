// gw as a library, as a user gets it: `npm pack`, the tarball unpacked into a temporary project's node_modules
// (its dependencies linked from this repository's, no network), then a small consumer type-checked with the repo's
// TypeScript under moduleResolution NodeNext and Bundler, and run against gw sim.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import {
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
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useSim } from '../helpers/sim.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const CONSUMER = `import {
  GatewayClient,
  GatewayError,
  NotFoundError,
  models,
  schemas,
  type SseEvent,
  type TypedStream,
} from 'gw';
import * as everything from 'gw';

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
await client.close();
console.log(JSON.stringify({ models: ids.length, missing, ev: ev.data, stream: stream === undefined, parsed: parsed.success, cli: 'main' in everything }));
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

let project = '';
let packDir = '';

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
  project = mkdtempSync(join(tmpdir(), 'gw-consumer-'));
  const pkgDir = join(project, 'node_modules', 'gw');
  mkdirSync(pkgDir, { recursive: true });
  execFileSync('tar', ['-xzf', join(packDir, filename), '-C', pkgDir, '--strip-components=1']);
  // The package's dependencies (and @types/node for the type-check) from this repository, as an install would.
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const dep of [...Object.keys(pkg.dependencies), '@types/node']) {
    const target = join(project, 'node_modules', dep);
    mkdirSync(resolve(target, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', dep), target, 'dir');
  }
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  writeFileSync(join(project, 'index.ts'), CONSUMER);
}, 120_000);

afterAll(() => {
  for (const d of [project, packDir]) if (d !== '') rmSync(d, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships declarations and no source: dist/types, not src/', () => {
    const files = readdirSync(join(project, 'node_modules', 'gw', 'dist', 'types'));
    expect(files).toContain('index.d.ts');
    expect(readdirSync(join(project, 'node_modules', 'gw'))).not.toContain('src');
  });

  it('type-checks a consumer under moduleResolution Bundler', () => {
    writeFileSync(join(project, 'tsconfig.json'), tsconfig('Bundler'));
    execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
  }, 120_000);

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
      cli: false,
    });
  }, 120_000);
});
